"""The gate specs under ci/: each is run by .ci/run, has a baseline of its spec, and can fail.

A gate spec whose baseline was exported from an older hash is refused by ``compare`` as another
protocol; one with too few (seed, task) pairs for its entries can never report a regression
(:func:`opt_suite.report.gate.power_problem`). Both are caught here in seconds, not in CI's
last minutes.
"""

from __future__ import annotations

import json
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
def test_a_gate_spec_is_in_ci_only_with_a_false_alarm_rate_within_alpha(path):
    # A gate whose false-alarm rate is above alpha fails CI without a regression on a machine whose
    # numbers differ. So a gate spec is run by .ci/run only when its rates were measured, as
    # docs/gen_gate_rates.py records them, over >= 20 reruns of the spec as it hashes today against
    # its committed baseline, with the false alarms within alpha; the page says why for the others.
    script = (ROOT / ".ci" / "run").read_text()
    page = (ROOT / "docs" / "results-and-gate.md").read_text()
    assert f"`ci/{path.name}`" in page
    if f"--baseline ci/baseline-{path.stem}.json" not in script:
        return
    record = ROOT / "docs" / "gate-rates" / f"{path.stem}.json"
    assert record.exists(), f"{path.name} is run by .ci/run: measure its rates first ({record})"
    data = json.loads(record.read_text())
    assert data["baseline"] == f"ci/baseline-{path.stem}.json"
    assert data["fresh_run"]["spec_hash"] == spec_hash(load_spec(path)), "measured on another spec"
    rates = data["rates"]
    assert rates["reruns"] >= 20
    assert rates["false_alarm_rate"] <= rates["alpha"] == 0.05
