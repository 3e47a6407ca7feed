"""Reference returns of the normalised scores (runner/references.py), measured by the suite."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from opt_suite.families.base import TabularModel
from opt_suite.report.source import load_references
from opt_suite.runner import references as refs
from opt_suite.runner.protocol import plan_spec, resolve_components
from opt_suite.spec import canonical_yaml, load_spec, spec_hash
from opt_suite.store.files import references_file
from opt_suite.store.sealed import write_sealed

QUICK = Path(__file__).resolve().parents[1] / "specs" / "fourrooms-quick.yaml"


def test_uniform_random_return_by_hand():
    # State 0: action 0 reaches the goal (state 1) for +10, action 1 stays for -1.
    # V1 = (10 - 1) / 2 = 4.5; V2 = (10 + (-1 + 4.5)) / 2 = 6.75; V3 = (10 + (-1 + 6.75)) / 2.
    model = TabularModel(
        next_state=np.array([[[1], [0]], [[1], [1]]], dtype=np.int32),
        prob=np.ones((2, 2, 1)),
        reward=np.array([[[10.0], [-1.0]], [[0.0], [0.0]]]),
        terminal=np.array([False, True]),
        start=0,
    )
    assert refs.uniform_random_return(model, 1) == pytest.approx(4.5)
    assert refs.uniform_random_return(model, 3) == pytest.approx(7.875)
    assert refs.uniform_random_return(model, 0) == 0.0


def test_the_key_leaves_existing_spec_hashes_alone():
    spec = load_spec(QUICK)
    # ci/baseline.json was exported from this hash: the default `auto` is not in the hash.
    baseline = json.loads((QUICK.parents[1] / "ci" / "baseline.json").read_text())
    assert spec_hash(spec) == baseline["spec"]["hash"]
    assert "references" not in canonical_yaml(spec)
    off = dataclasses.replace(spec, report=dataclasses.replace(spec.report, references="none"))
    assert spec_hash(off) != spec_hash(spec)


def test_measured_on_the_quick_spec_and_reused(tmp_path, monkeypatch):
    spec = load_spec(QUICK)
    components = resolve_components(spec)
    family, _, tasks, _ = plan_spec(spec, [0], components)
    test = tasks.test(0)[:2]
    assert refs.references_wanted(spec, components, family, test[0])
    path = refs.measure_references(spec, components, family, test, [0, 1], tmp_path)
    assert path == references_file(tmp_path, spec_hash(spec))
    warnings: list[str] = []
    loaded = load_references(path, warnings)
    assert warnings == [] and loaded is not None
    assert loaded.seeds == (0, 1) and loaded.tasks == (0, 1)
    # The optimal expert beats a random walk on every (seed, task); the exact random return is
    # the same for every seed.
    assert np.all(loaded.expert > loaded.random)
    np.testing.assert_array_equal(loaded.random[0], loaded.random[1])
    # A second measurement reads the per-(seed, task) files: nothing is recomputed.
    monkeypatch.setattr(refs, "uniform_random_return", lambda *a: pytest.fail("recomputed"))
    refs.measure_references(spec, components, family, test, [0, 1], tmp_path)
    assert load_references(path, warnings).random.tolist() == loaded.random.tolist()


def test_none_measures_nothing_and_an_error_is_a_warning(tmp_path):
    spec = load_spec(QUICK)
    off = dataclasses.replace(spec, report=dataclasses.replace(spec.report, references="none"))
    components = resolve_components(off)
    family, _, tasks, _ = plan_spec(off, [0], components)
    test = tasks.test(0)
    assert not refs.references_wanted(off, components, family, test[0])
    path = tmp_path / "spec-x.json"
    write_sealed(
        path, {"format": refs.SPEC_FORMAT, "error": "reference returns not measured: boom"}
    )
    warnings: list[str] = []
    assert load_references(path, warnings) is None
    assert warnings == ["no normalised scores: reference returns not measured: boom"]
    path.write_text("{not json")
    assert load_references(path, warnings) is None
    assert f"{path.absolute()}: reference returns file is not JSON" in warnings[1]


def test_families_without_a_model_sample_the_random_policy(tmp_path, monkeypatch):
    # The quick spec's first test task, its model hidden: 20 sampled random episodes instead of
    # the exact evaluation. Random walks of at most 500 steps vary a lot (s.e. of 20 episodes:
    # tens of return units), so the check is loose but catches a wrong horizon or sign.
    spec = load_spec(QUICK)
    components = resolve_components(spec)
    family, _, tasks, _ = plan_spec(spec, [0], components)
    test = tasks.test(0)
    model = refs.exact_model(family, test[0])
    exact = refs.uniform_random_return(model, spec.evaluation.max_steps)
    monkeypatch.setattr(refs, "exact_model", lambda *a: None)
    path = refs.measure_references(spec, components, family, test[:1], [0], tmp_path)
    sampled = load_references(path, [])
    assert sampled is not None
    assert abs(sampled.random[0, 0] - exact) < 0.35 * abs(exact)
    assert sampled.random[0, 0] >= -spec.evaluation.max_steps  # -1 per step, at most 500 steps
