"""Normalised scores, the auc split and thresholds that no ranked entry sets, by hand."""

from __future__ import annotations

import json

import numpy as np
import pytest
from report_fakes import linear_table

from opt_suite.report import ReportDataError, ReportInputs, analyse, write_report_files
from opt_suite.report.episodes import learning_curves
from opt_suite.report.metrics import auc, improvement, jump_start, jump_start_count, run_metrics
from opt_suite.report.normalise import (
    REFERENCE_MARGIN,
    References,
    normalisation_caveat,
    normalise_metric,
    normalised_scores,
    reference_thresholds,
    undefined_pairs,
    undefined_tasks,
)
from opt_suite.spec.schema import ReportSpec


def references(random: list[list[float]], expert: list[list[float]]) -> References:
    r = np.array(random, dtype=float)
    return References(tuple(range(r.shape[0])), tuple(range(r.shape[1])), r, np.array(expert))


class TestAucSplit:
    @pytest.mark.parametrize("points", [1, 5, 20, 37, 100])
    def test_jump_start_and_improvement_add_up_to_the_auc(self, points):
        returns = np.random.default_rng(points).normal(size=(3, 2, points))
        k = jump_start_count(points)
        f = k / points
        js, imp = jump_start(returns), improvement(returns)
        np.testing.assert_allclose(auc(returns), f * js + (1 - f) * (js + imp))

    def test_hand_worked(self):
        # 20 episodes: the first 2 are the jump start (0 and 10: 5), the rest average 20.
        returns = np.array([0.0, 10.0] + [20.0] * 18)
        assert jump_start(returns) == 5.0
        assert improvement(returns) == 15.0


class TestNormalisation:
    def test_hand_worked(self):
        random, expert = np.array([[0.0, -10.0]]), np.array([[10.0, 10.0]])
        # task 0: (5 - 0) / 10; task 1: (0 - -10) / 20.
        np.testing.assert_allclose(
            normalise_metric("auc", np.array([[5.0, 0.0]]), random, expert), [[0.5, 0.5]]
        )
        # improvement is a difference: divided by the range, no offset.
        np.testing.assert_allclose(
            normalise_metric("improvement", np.array([[5.0, 5.0]]), random, expert),
            [[0.5, 0.25]],
        )

    def test_equal_references_are_never_divided_by(self):
        refs = references([[0.0, 3.0], [0.0, 3.0]], [[1.0, 3.0], [2.0, 3.0]])
        assert undefined_tasks(refs) == [1]
        values = {"auc": np.array([[0.5, 3.0], [1.0, 9.0]])}
        scores = normalised_scores((0, 1), (0, 1), values, refs, ["auc"])
        assert scores is not None and scores.tasks == (0,)
        assert (scores.pairs, scores.total_pairs) == (2, 4)
        np.testing.assert_allclose(scores.values["auc"], [[0.5], [0.5]])
        with pytest.raises(ReportDataError, match="no scale"):
            normalise_metric("auc", values["auc"], refs.random, refs.expert)
        flat = references([[1.0]], [[1.0]])
        assert normalised_scores((0,), (0,), {"auc": np.ones((1, 1))}, flat, ["auc"]) is None

    def test_bad_references(self):
        with pytest.raises(ReportDataError, match="shape"):
            References((0,), (0, 1), np.zeros((1, 1)), np.zeros((1, 2)))
        with pytest.raises(ReportDataError, match="NaN"):
            references([[np.nan]], [[1.0]])
        with pytest.raises(ReportDataError, match="seed 5"):
            references([[0.0]], [[1.0]]).aligned((5,), (0,))

    def test_reference_thresholds_are_halfway_means_over_seeds(self):
        refs = references([[0.0, -10.0], [2.0, -10.0]], [[10.0, 10.0], [12.0, 30.0]])
        # task 0: (5 + 7) / 2; task 1: (0 + 10) / 2.
        assert reference_thresholds(refs, (0, 1), 0.5) == {0: 6.0, 1: 5.0}

    def test_an_expert_below_or_barely_above_random_is_undefined(self):
        # Seed 0: task 0 is fine (range 10), task 1's expert is below random (a better run would
        # score lower), task 2's beats random by 0.5% of max(1, 20): inside the 1% margin.
        # Seed 1: every task fine, task 2 by 2% of 20 (outside the margin).
        assert REFERENCE_MARGIN == 0.01
        refs = references(
            [[0.0, 5.0, 20.0], [0.0, 0.0, 20.0]], [[10.0, 4.0, 20.1], [10.0, 1.0, 20.4]]
        )
        assert undefined_pairs(refs) == [(0, 1), (0, 2)]
        assert undefined_tasks(refs) == [1, 2]
        values = {"auc": np.array([[5.0, 4.5, 20.05], [5.0, 0.5, 20.2]])}
        scores = normalised_scores((0, 1), (0, 1, 2), values, refs, ["auc"])
        assert scores is not None and scores.tasks == (0,)
        assert (scores.pairs, scores.total_pairs) == (2, 6)
        with pytest.raises(ReportDataError, match="no scale"):
            normalise_metric("auc", values["auc"], refs.random, refs.expert)
        caveat = normalisation_caveat(refs)
        assert caveat is not None
        assert "seed 0 task 1, seed 0 task 2" in caveat and "2 of 6 (seed, task) pairs" in caveat
        assert "n = 2 of 6 pairs remain" in caveat
        # Every task undefined on some seed: no aggregate, one loud caveat saying so.
        none_left = references([[0.0, 5.0]], [[0.0, 4.0]])
        assert normalised_scores((0,), (0, 1), {"auc": np.ones((1, 2))}, none_left, ["auc"]) is None
        loud = normalisation_caveat(none_left)
        assert loud is not None and loud.startswith("NO NORMALISED SCORES") and "n = 0 of 2" in loud


def test_report_with_references_and_a_task_without_scale(tmp_path):
    # linear_table: r = -10 + e + s + 2t + shift over 20 episodes (auc -0.5 + s + 2t + shift).
    table = linear_table({"primitives": 0.0, "ours": 5.0}, seeds=2, tasks=3)
    refs = References(
        (0, 1),
        (0, 1, 2),
        random=np.array([[-10.0, -8.0, 4.0], [-9.0, -7.0, 4.0]]),
        expert=np.array([[10.0, 12.0, 4.0], [11.0, 13.0, 4.0]]),
        expert_label="optimal expert",
    )
    inputs = ReportInputs(table, "toy", "h", ReportSpec(bootstrap=200), references=refs)
    write_report_files(inputs, tmp_path)
    doc = json.loads((tmp_path / "leaderboard.json").read_text())
    # Task 2 has no scale: named in a warning, left out of the normalised aggregates.
    assert any(
        "seed 0 task 2, seed 1 task 2" in w and "optimal expert" in w and "n = 4 of 6" in w
        for w in doc["warnings"]
    )
    normalised = doc["normalised"]
    assert normalised["tasks"] == ["0", "1"]
    assert (normalised["pairs"], normalised["of_pairs"]) == (4, 6)
    assert normalised["definition"].startswith("0 = uniform-random policy, 1 = optimal expert")
    # primitives' auc on task 0 is -0.5 + s, on task 1 1.5 + s; every range is 20, every random
    # return -10 + s (task 0) or -8 + s (task 1): every normalised auc is 9.5 / 20.
    auc_n = normalised["methods"]["primitives"]["auc"]
    assert auc_n["mean"] == pytest.approx(0.475) and auc_n["iqm"] == pytest.approx(0.475)
    assert normalised["methods"]["ours"]["auc"]["iqm"] == pytest.approx(0.725)
    assert all(
        np.isfinite(v)
        for m in normalised["methods"].values()
        for e in m.values()
        for v in e.values()
        if v is not None
    )
    # Task 2 has no scale, so the thresholds fall back to the compared entries (and say so).
    assert "mean final return" in doc["protocol"]["threshold_rule"]
    assert any("come from the compared method entries" in w for w in doc["warnings"])
    text = (tmp_path / "leaderboard.md").read_text()
    assert "**Normalised scores (0 = uniform-random policy, 1 = optimal expert" in text
    assert "2 of 3 test tasks, n = 4 of 6 (seed, task) pairs" in text


def test_thresholds_from_references_do_not_depend_on_the_entries():
    table = linear_table({"primitives": 0.0, "ours": 5.0}, seeds=2, tasks=2)
    refs = references([[-10.0, -8.0], [-10.0, -8.0]], [[10.0, 12.0], [10.0, 12.0]])
    both = analyse(ReportInputs(table, "t", "h", ReportSpec(), references=refs))
    alone = analyse(
        ReportInputs(
            linear_table({"primitives": 0.0}, 2, 2), "t", "h", ReportSpec(), references=refs
        )
    )
    assert both.thresholds == alone.thresholds == {0: 0.0, 1: 2.0}
    assert both.threshold_rule.startswith("a normalised score of 0.5")
    # Without references the old rule moves with the entries compared.
    old = analyse(ReportInputs(table, "t", "h", ReportSpec()))
    old_alone = analyse(
        ReportInputs(linear_table({"primitives": 0.0}, 2, 2), "t", "h", ReportSpec())
    )
    assert old.thresholds != old_alone.thresholds


def test_frames_to_threshold_is_in_frames():
    # One run, 10 points of a 1000-frame budget, returns 0..9: a 2-point window first reaches 5
    # at point 6 (mean of 4 and 5 is 4.5, of 5 and 6 5.5: 1-based point 7), i.e. frame 700.
    table = linear_table({"m": 0.0}, seeds=1, tasks=1, episodes=10)
    curves = learning_curves(table)
    values = run_metrics(curves, 0.1, {0: -10.0 + 5.0}, window=2, frame_budget=1000)
    assert values["m"].values["episodes_to_threshold"][0, 0] == pytest.approx(700.0)
    episodes = run_metrics(curves, 0.1, {0: -10.0 + 5.0}, window=2)
    assert episodes["m"].values["episodes_to_threshold"][0, 0] == 7


def test_binned_curves_average_consecutive_episodes():
    from opt_suite.report.curves import binned

    # 5 points in bins of 2: (1, 2), (3, 4), (5): centres 1.5, 3.5, 5.
    x = np.arange(1.0, 6.0)
    centres, means, width = binned(x, np.array([[0.0, 2.0, 4.0, 6.0, 9.0]]), bins=3)
    assert width == 2
    np.testing.assert_allclose(centres, [1.5, 3.5, 5.0])
    np.testing.assert_allclose(means, [[1.0, 5.0, 9.0]])


def test_curves_have_a_normalised_panel(tmp_path):
    from opt_suite.report.curves import _normalised_runs, _run_curves, write_curves_png

    curves = learning_curves(linear_table({"a": 0.0}, seeds=1, tasks=2, episodes=4))
    refs = references([[-10.0, 0.0]], [[-6.0, 0.0]])  # task 1 has no scale
    x, values = _run_curves(curves["a"], by_frames=False)
    # task 0's returns -10, -9, -8, -7 on [-10, -6]: 0, 0.25, 0.5, 0.75; task 1 left out.
    np.testing.assert_allclose(_normalised_runs(curves["a"], values, refs), [[0, 0.25, 0.5, 0.75]])
    raw = write_curves_png(curves, tmp_path / "raw.png", "t")
    both = write_curves_png(curves, tmp_path / "both.png", "t", refs)
    import matplotlib.image

    assert matplotlib.image.imread(both).shape[1] > 1.5 * matplotlib.image.imread(raw).shape[1]
