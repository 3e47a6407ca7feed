"""Keys into a results page's data (docs/page_keys.py): reducers that read a second pointer.

``;count`` and ``;where`` compare each value a key fans out to with a number or with the value
in the same place of a second pointer into the same file: how many (seed, task) pairs have an
expert below random, and which seed or task that is. ``;per=/pointer`` divides by a value of
the same file: a cost as a multiple of another's.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs"))
import page_keys  # noqa: E402

#: Two seeds x three tasks of reference returns: the expert is below random on (1, 2) and
#: earns the same on (0, 1).
REFERENCES = {
    "references": {
        "random": [[1.0, 2.0, 3.0], [1.0, 2.0, 9.0]],
        "expert": [[5.0, 2.0, 7.0], [4.0, 6.0, 8.0]],
    },
    "options": [1, "1", 2, "keep"],
}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "runs.json").write_text(json.dumps(REFERENCES))
    return tmp_path


def _value(folder: Path, key: str) -> float:
    return page_keys.resolve(folder, f"runs.json:/references/{key}")


@pytest.mark.parametrize(
    ("sign", "expected"), [("<", 1.0), ("<=", 2.0), ("=", 1.0), (">", 4.0), (">=", 5.0)]
)
def test_count_compares_each_value_with_the_same_place_of_a_second_pointer(folder, sign, expected):
    assert _value(folder, f"expert/*/*;count{sign}/references/random/*/*") == expected


def test_where_is_the_position_of_the_one_value_that_compares_so(folder):
    assert _value(folder, "expert/*/2;where</references/random/*/2") == 1.0  # the seed
    assert _value(folder, "expert/1/*;where</references/random/1/*") == 2.0  # the task
    assert _value(folder, "expert/0/*;where=/references/random/0/*") == 1.0


def test_where_needs_exactly_one_value_that_compares_so(folder):
    with pytest.raises(KeyError, match="0 values compare so, expected exactly 1"):
        _value(folder, "expert/0/*;where</references/random/0/*")
    with pytest.raises(KeyError, match="2 values compare so, expected exactly 1"):
        _value(folder, "expert/*/*;where<=/references/random/*/*")


def test_a_number_compares_with_every_value(folder):
    assert _value(folder, "expert/*/*;count<5") == 2.0
    assert _value(folder, "random/*/*;count>=3") == 2.0
    assert _value(folder, "random/1/*;where>5") == 2.0


def test_pointers_that_fan_out_unalike_are_an_error_not_a_count(folder):
    with pytest.raises(KeyError, match="6 values against 3; they pair in order"):
        _value(folder, "expert/*/*;count</references/random/0/*")


def test_count_equal_to_a_value_still_matches_text_or_number(folder):
    assert page_keys.resolve(folder, "runs.json:/options/*;count=1") == 2.0
    assert page_keys.resolve(folder, "runs.json:/options/*;count=keep") == 1.0


def test_compares_pairs_values_in_order():
    assert page_keys.compares([1.0, 2.0, 3.0], "<", [2.0, 2.0, 2.0]) == [True, False, False]
    assert page_keys.compares([1.0, 2.0], ">=", 2.0) == [False, True]
    with pytest.raises(KeyError):
        page_keys.compares([1.0], "=", [1.0, 2.0])


def test_per_a_second_pointer_is_a_ratio_of_two_values_of_the_file(folder):
    assert _value(folder, "expert/0/2;per=/references/random/0/2") == pytest.approx(7.0 / 3.0)
    assert _value(folder, "expert/*/*;count>/references/random/*/*;per=2") == 2.0
    with pytest.raises(KeyError, match="a \\* needs a ;reducer"):
        _value(folder, "expert/0/2;per=/references/random/*/2")
