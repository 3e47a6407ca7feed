"""Canonical YAML and hashes: defaults filled in, round trip, stable across key order and runs."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from spec_fakes import VALID, edited, fake_registry

from opt_suite.params import param
from opt_suite.spec import (
    canonical_yaml,
    content_hash,
    load_spec,
    parse_spec,
    spec_hash,
    to_plain,
)

TESTS = Path(__file__).parent

# VALID with every section and key in another order, other spellings of the same values, and the
# defaults it relies on written out.
REORDERED = """\
report: {baseline: primitives, final_fraction: 0.1}
evaluation:
  params:
    alpha: 0.20
  seeds: 2
  episodes: 20
  learner: smdp_q_learning
methods:
  - method: primitives
    name: primitives
  - params: {hidden: [16, 16], lambda2: 100.0, lambda1: 0}
    method: options
    name: ours
tasks:
  list: [{goal: [5, 5], start: [0, 0]}]
  vary: {goals: random, starts: random}
  seed: 7
  test: 3
  train: 2
  count: 6
family:
  params: {slip: 2.0e-1, size: 12}
  name: grid
description: "A small spec for tests.\\nSecond line.\\n"
name: grid-test
"""


@pytest.fixture(autouse=True)
def _fakes():
    with fake_registry():
        yield


def test_round_trip_gives_an_equal_spec():
    spec = parse_spec(VALID)
    assert parse_spec(canonical_yaml(spec)) == spec
    assert canonical_yaml(parse_spec(canonical_yaml(spec))) == canonical_yaml(spec)


def test_canonical_yaml_has_every_default_and_sorted_keys():
    text = canonical_yaml(parse_spec(VALID))
    plain = yaml.safe_load(text)
    assert list(plain) == sorted(plain)
    assert list(plain["family"]["params"]) == sorted(plain["family"]["params"])
    assert plain["report"]["bootstrap"] == 2000
    assert plain["demonstrations"]["source"] == "optimal"
    assert plain["family"]["params"]["max_steps"] is None
    assert plain["methods"][0]["params"] == {}
    assert "extends" not in plain
    assert "hidden: [16, 16]" in text  # short lists of scalars stay on one line
    assert "description: |" in text  # paragraphs stay readable


def test_extends_is_resolved_away(tmp_path):
    (tmp_path / "base.yaml").write_text(VALID)
    (tmp_path / "child.yaml").write_text("extends: base.yaml\n")
    child, base = load_spec(tmp_path / "child.yaml"), load_spec(tmp_path / "base.yaml")
    assert canonical_yaml(child) == canonical_yaml(base)
    assert spec_hash(child) == spec_hash(base)


def test_hash_ignores_key_order_spelling_and_written_defaults():
    assert parse_spec(REORDERED) == parse_spec(VALID)
    assert spec_hash(parse_spec(REORDERED)) == spec_hash(parse_spec(VALID))


@pytest.mark.parametrize(
    "old, new",
    [("seed: 7", "seed: 8"), ("slip: 0.2", "slip: 0.25"), ("episodes: 20", "episodes: 21")],
)
def test_any_value_change_changes_the_hash(old, new):
    assert spec_hash(parse_spec(edited((old, new)))) != spec_hash(parse_spec(VALID))


def test_content_hash_is_sha256_of_compact_sorted_json():
    plain = {"b": [1, 2.5, None, True], "a": "é"}
    expected = hashlib.sha256('{"a":"é","b":[1,2.5,null,true]}'.encode()).hexdigest()
    assert content_hash(plain) == expected
    assert content_hash({"a": "é", "b": (1, 2.5, None, True)}) == expected
    assert content_hash({"b": [1.0]}) != content_hash({"b": [1]})  # types are part of the value


def test_spec_hash_is_the_same_in_other_processes():
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "import spec_fakes; from opt_suite.spec import parse_spec, spec_hash\n"
        "with spec_fakes.fake_registry(): print(spec_hash(parse_spec(spec_fakes.VALID)))"
    )
    hashes = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", code, str(TESTS)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        hashes.add(out.stdout.strip())
    assert hashes == {spec_hash(parse_spec(VALID))}


def test_to_plain():
    @dataclasses.dataclass(frozen=True)
    class Inner:
        cells: tuple[tuple[int, int], ...] = ((1, 2),)
        hidden: int = dataclasses.field(default=3, init=False)

    assert to_plain({"x": Inner(), "n": np.int64(3), "f": np.float32(0.5)}) == {
        "x": {"cells": [[1, 2]]},
        "n": 3,
        "f": 0.5,
    }
    with pytest.raises(TypeError, match="cannot write a set"):
        to_plain({1, 2})


def test_a_key_added_later_is_left_out_at_its_default_and_kept_otherwise():
    @dataclasses.dataclass(frozen=True)
    class Settings:
        size: int = 3
        mode: str = param("old", added_later=True)

    assert to_plain(Settings()) == {"size": 3}
    assert to_plain(Settings(mode="new")) == {"size": 3, "mode": "new"}
