"""compare_entries: any two entries of a runs.json, with the leaderboard's statistics."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from opt_suite import stats
from opt_suite.report.baseline import Baseline, BaselineRuns
from opt_suite.report.metrics import METRICS
from opt_suite.report.pairwise import compare_entries, comparison_markdown, comparison_rows


def _runs(entries: dict[str, tuple[tuple[int, ...], np.ndarray]]) -> Baseline:
    methods = {}
    for name, (seeds, auc) in entries.items():
        metrics = {k: np.asarray(auc, dtype=np.float64) for k in METRICS}
        methods[name] = BaselineRuns(seeds, tuple(range(auc.shape[1])), metrics)
    return Baseline(Path("runs.json"), "s", "h" * 64, 0.1, 10, {}, methods)


def test_p_is_rliables_and_the_tallies_count_tasks_won_tied_and_lost() -> None:
    rng = np.random.default_rng(3)
    y = rng.normal(size=(5, 4))
    x = y.copy()
    x[:, 0] += 10.0  # X wins every pair on task 0
    x[:, 1] -= 10.0  # and loses every pair on task 1; tasks 2 and 3 are copies of Y
    x[:, 2] = 0.0
    y[:, 2] = 0.0  # all pairs tie on task 2
    runs = _runs({"x": ((0, 1, 2, 3, 4), x), "y": ((0, 1, 2, 3, 4), y)})
    c = compare_entries(runs, "x", "y", reps=200)
    assert c.improvement.probability == pytest.approx(float(stats.probability_of_improvement(x, y)))
    # task 3's runs are the same multiset for X and Y: P is exactly 0.5 there, a tie
    assert (c.tasks_won, c.tasks_tied, c.tasks_lost) == (1, 2, 1)
    assert c.paired is not None
    assert c.paired.probability == pytest.approx(
        float(stats.paired_probability_of_improvement(x, y))
    )


def test_a_clear_winner_beats_on_the_task_interval_and_lower_is_better_is_oriented() -> None:
    y = np.arange(40, dtype=np.float64).reshape(5, 8)
    x = y + 100.0
    runs = _runs({"x": ((0, 1, 2, 3, 4), x), "y": ((0, 1, 2, 3, 4), y)})
    assert compare_entries(runs, "x", "y", reps=200).verdict() == "better"
    assert compare_entries(runs, "y", "x", reps=200).verdict() == "worse"
    # episodes_to_threshold: fewer is better, so the larger values lose
    slow = compare_entries(runs, "x", "y", metric="episodes_to_threshold", reps=200)
    assert slow.tasks_lost == 8 and slow.verdict() == "worse"


def test_same_numbers_twice_and_no_paired_p_without_common_seeds() -> None:
    rng = np.random.default_rng(0)
    runs = _runs(
        {"x": ((0, 1, 2), rng.normal(size=(3, 5))), "y": ((3, 4, 5), rng.normal(size=(3, 5)))}
    )
    a, b = compare_entries(runs, "x", "y", reps=300), compare_entries(runs, "x", "y", reps=300)
    assert a == b
    assert a.paired is None and a.decision is None and a.verdict() == "—"


def test_unknown_entries_and_metrics_are_named() -> None:
    runs = _runs({"x": ((0,), np.zeros((1, 2)))})
    with pytest.raises(KeyError, match="no method entry 'z'; it holds x"):
        compare_entries(runs, "x", "z")
    with pytest.raises(KeyError, match="unknown metric 'reward'"):
        compare_entries(runs, "x", "x", metric="reward")


def _estimate(v: float) -> dict[str, float]:
    return {
        "iqm": v,
        "ci_low": v - 1,
        "ci_high": v + 1,
        "task_ci_low": v - 2,
        "task_ci_high": v + 2,
    }


def test_rows_read_the_leaderboards_normalised_iqm_when_it_has_one_else_the_raw() -> None:
    y = np.arange(40, dtype=np.float64).reshape(5, 8)
    runs = _runs({"x": ((0, 1, 2, 3, 4), y + 100.0), "y": ((0, 1, 2, 3, 4), y)})
    raw = {"methods": {"x": {"auc": _estimate(7.0)}, "y": {"auc": _estimate(3.0)}}}
    both = {
        **raw,
        "normalised": {"methods": {"x": {"auc": _estimate(0.9)}, "y": {"auc": _estimate(0.2)}}},
    }
    (row,) = comparison_rows(runs, raw, "x", ["y"])
    assert row["scale"] == "raw" and row["entry_iqm"]["iqm"] == 3.0
    (row,) = comparison_rows(runs, both, "x", ["y"])
    assert row["scale"] == "normalised" and row["x_iqm"]["iqm"] == 0.9
    assert (row["tasks_won"], row["verdict"]) == (8, "better")
    table = comparison_markdown([row])
    assert "| y | 0.20 [-0.80, 1.20] [-1.80, 2.20] | 0.90" in table
    # every pair won: the paired P is 1 in every resample; one comparison: a 95% interval
    assert (
        "8 / 0 / 0 | **better**: 1.00 [1.00, 1.00] 95% CI [seeds×tasks], paired P;"
        " margin P in [0.40, 0.60] |" in table
    )
    assert "(Bonferroni): 1 comparison at a 95% family-wise confidence" in table


def test_against_the_runs_baseline_every_number_is_the_leaderboards() -> None:
    from opt_suite.report.leaderboard import build_leaderboard
    from opt_suite.report.metrics import MethodMetrics
    from opt_suite.report.tables import leaderboard_json

    rng = np.random.default_rng(7)
    values = {n: rng.normal(size=(5, 6)) + shift for n, shift in (("a", 0.3), ("base", 0.0))}
    metrics = {
        n: MethodMetrics(n, (0, 1, 2, 3, 4), tuple(range(6)), {k: v for k in METRICS})
        for n, v in values.items()
    }
    board = build_leaderboard(
        metrics,
        spec_name="s",
        spec_hash="h",
        episodes=10,
        baseline="base",
        bootstrap=300,
        thresholds={str(t): 0.0 for t in range(6)},
    )
    doc = leaderboard_json(board)
    runs = _runs({n: ((0, 1, 2, 3, 4), v) for n, v in values.items()})
    (row,) = comparison_rows(runs, doc, "a", ["base"])
    assert row["p"] == doc["probability_of_improvement"]["methods"]["a"]["auc"]
    assert row["paired_p"] == doc["paired_probability_of_improvement"]["methods"]["a"]["auc"]
