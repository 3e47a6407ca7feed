"""A spec's name or a short prefix of its hash selects its results in a shared directory."""

from __future__ import annotations

import json

import pytest
from report_fakes import linear_table, write_store

from opt_suite.cli import main
from opt_suite.store import StoreError
from opt_suite.store.reader import select_spec

ALPHA, BETA = "aaaa1111" + "0" * 56, "aaab2222" + "0" * 56


@pytest.fixture
def shared(tmp_path):
    """Two specs ran in one directory: alpha (methods a, b) first, then beta (method c)."""
    directory = tmp_path / "shared"
    write_store(
        directory, linear_table({"a": 0.0, "b": 1.0}, 3, 3), spec_name="alpha", spec_hash=ALPHA
    )
    write_store(directory, linear_table({"c": 2.0}, 3, 3), spec_name="beta", spec_hash=BETA)
    return directory


@pytest.mark.parametrize(
    ("selector", "expected"),
    [("alpha", ALPHA), ("beta", BETA), ("aaaa", ALPHA), ("AAAB2", BETA), (ALPHA, ALPHA)],
)
def test_name_or_prefix_selects_one_spec(shared, selector, expected):
    assert select_spec(shared, selector) == expected


def test_an_ambiguous_prefix_lists_the_candidates(shared):
    with pytest.raises(StoreError) as info:
        select_spec(shared, "aaa")
    message = str(info.value)
    assert "'aaa' matches 2 specs" in message
    assert "alpha (hash aaaa11110000" in message and "beta (hash aaab22220000" in message


def test_nothing_matching_lists_what_is_recorded(shared):
    with pytest.raises(StoreError, match=r"no spec named or hashed 'gamma' \(recorded: alpha"):
        select_spec(shared, "gamma")


def test_report_writes_the_selected_specs_leaderboard(shared, capsys):
    assert main(["report", str(shared), "--spec", "alpha"]) == 0
    rows = json.loads((shared / "leaderboard.json").read_text())
    assert "a" in json.dumps(rows) and '"c"' not in json.dumps(rows)
    assert main(["report", str(shared)]) == 0  # default: the latest run's spec, beta
    assert '"c"' in (shared / "leaderboard.json").read_text()


def test_report_and_compare_refuse_an_ambiguous_prefix_in_one_line(shared, tmp_path, capsys):
    baseline = tmp_path / "b.json"
    assert main(["report", str(shared), "--export-baseline", str(baseline)]) == 0
    for command in (["report"], ["compare", "--baseline", str(baseline)]):
        capsys.readouterr()
        assert main([command[0], str(shared), *command[1:], "--spec", "aaa"]) == 2
        (line,) = capsys.readouterr().err.strip().splitlines()
        assert "matches 2 specs" in line and "alpha" in line and "beta" in line


def test_compare_checks_the_selected_spec_against_its_baseline(shared, tmp_path, capsys):
    baseline = tmp_path / "alpha.json"
    assert main(["report", str(shared), "--spec", "aaaa", "--export-baseline", str(baseline)]) == 0
    argv = ["compare", str(shared), "--baseline", str(baseline), "--unmeasured-ok"]
    assert main([*argv, "--spec", "alpha"]) == 0
    # Without --spec the latest run (beta) is compared, and its hash is not the baseline's.
    assert main(argv) == 2
