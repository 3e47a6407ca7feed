"""The statistics core: one call on a committed ``runs.json`` gives its leaderboard's numbers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from opt_suite.report.baseline import BaselineError
from opt_suite.report.core import aggregate

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results" / "fourrooms-paper"


@pytest.mark.parametrize("metric", ["auc", "final_return"])
def test_a_committed_runs_json_gives_its_leaderboards_estimates(metric):
    board = json.loads((RESULTS / "leaderboard.json").read_text())
    found = aggregate(
        RESULTS / "runs.json", metric=metric, bootstrap=board["protocol"]["bootstrap"]
    )
    assert list(found) and set(found) == set(board["methods"])
    for name, shown in board["methods"].items():
        e = found[name].leaderboard
        # Exactly the published values (the same estimate, the same seeded generator).
        assert {f: getattr(e, f) for f in shown[metric]} == shown[metric], name


def test_the_median_and_the_gap_are_those_of_the_flattened_runs():
    doc = json.loads((RESULTS / "runs.json").read_text())
    name = next(iter(doc["methods"]))
    scores = np.asarray(doc["methods"][name]["metrics"]["auc"], np.float64)
    target = float(np.median(scores))  # about half the runs fall short of it
    (found,) = aggregate(doc, "auc", methods=[name], bootstrap=200, gap_target=target).values()
    assert found.median == pytest.approx(np.median(scores.ravel()))
    assert found.optimality_gap == pytest.approx(np.mean(np.maximum(target - scores, 0.0)))
    assert found.optimality_gap > 0
    low, high = found.median_ci
    assert low <= found.median <= high
    assert found.runs == scores.size


def test_a_missing_metric_or_entry_names_the_file_and_what_it_has(tmp_path):
    path = RESULTS / "runs.json"
    with pytest.raises(BaselineError, match=r"runs\.json: methods\.\S+\.metrics has no 'speed'"):
        aggregate(path, "speed")
    with pytest.raises(BaselineError, match=r"runs\.json: no method entry 'nobody'; it has"):
        aggregate(path, methods=["nobody"])
    with pytest.raises(BaselineError, match="higher-is-better"):
        aggregate(path, "episodes_to_threshold", gap_target=1.0)
    with pytest.raises(BaselineError, match="no such baseline file"):
        aggregate(tmp_path / "runs.json")


def test_it_is_the_report_packages_public_call():
    import opt_suite.report

    assert opt_suite.report.aggregate is aggregate and "aggregate" in dir(opt_suite.report)
