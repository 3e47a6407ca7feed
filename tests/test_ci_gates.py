"""The gate specs under ci/: each is run by .ci/run, has a baseline of its spec, and can fail.

A gate spec whose baseline was exported from an older hash is refused by ``compare`` as another
protocol; one with too few (seed, task) pairs for its entries can never report a regression
(:func:`opt_suite.report.gate.power_problem`). Both are caught here in seconds, not in CI's
last minutes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from opt_suite.report import load_baseline
from opt_suite.report.gate import power_problem
from opt_suite.spec import load_spec, spec_hash

ROOT = Path(__file__).resolve().parents[1]
GATE_SPECS = sorted((ROOT / "ci").glob("gate-*.yaml"))


def test_there_is_a_gate_spec_beside_the_quick_spec():
    assert [p.stem for p in GATE_SPECS] == ["gate-field", "gate-gymnasium", "gate-pixels"]


@pytest.mark.parametrize("path", GATE_SPECS, ids=lambda p: p.stem)
def test_each_gate_spec_has_a_baseline_of_its_hash_that_can_fail(path):
    spec = load_spec(path)
    baseline = load_baseline(ROOT / "ci" / f"baseline-{path.stem}.json")
    assert (baseline.spec_name, baseline.spec_hash) == (spec.name, spec_hash(spec))
    assert sorted(baseline.methods) == sorted(m.name for m in spec.methods)
    pairs = {name: len(runs.seeds) * len(runs.tasks) for name, runs in baseline.methods.items()}
    assert power_problem(pairs, spec.tasks.test) is None


@pytest.mark.parametrize("path", GATE_SPECS, ids=lambda p: p.stem)
def test_ci_runs_and_compares_each_gate_spec(path):
    script = (ROOT / ".ci" / "run").read_text()
    assert "for gate in gate-gymnasium gate-pixels gate-field; do" in script
    assert path.stem in script.split("for gate in", 1)[1].splitlines()[0]
    assert 'compare "runs/ci-$gate" --baseline "ci/baseline-$gate.json"' in script
