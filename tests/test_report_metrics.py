"""Per-run metrics and the episode grid, against hand computation."""

from __future__ import annotations

import numpy as np
import pytest
from report_fakes import linear_returns, linear_table

from opt_suite.report import EpisodeTable, ReportDataError, ReportInputs, analyse
from opt_suite.report.episodes import learning_curves
from opt_suite.report.metrics import (
    auc,
    default_thresholds,
    episodes_to_threshold,
    final_episode_count,
    final_return,
)
from opt_suite.spec.schema import ReportSpec


class TestMetrics:
    def test_auc_is_the_mean_return(self):
        assert auc(np.array([[1.0, 2.0, 6.0]])) == pytest.approx([3.0])

    @pytest.mark.parametrize(
        ("episodes", "fraction", "count"), [(100, 0.1, 10), (30, 0.1, 3), (5, 0.1, 1), (7, 1.0, 7)]
    )
    def test_final_episode_count(self, episodes, fraction, count):
        assert final_episode_count(episodes, fraction) == count

    def test_final_return_averages_the_last_episodes(self):
        returns = np.arange(30.0)  # last 3 of 30 episodes: 27, 28, 29
        assert final_return(returns, 0.1) == pytest.approx(28.0)

    def test_episodes_to_threshold_uses_a_trailing_window(self):
        # Returns 0, 1, 2, ...: the window ending at 1-based episode e has mean e - 5.5.
        returns = np.arange(40.0)
        assert episodes_to_threshold(returns, 10.0) == 16  # 16 - 5.5 = 10.5 >= 10; 15 - 5.5 < 10
        assert episodes_to_threshold(returns, 4.5) == 10  # the first full window already reaches it
        assert episodes_to_threshold(returns, -100.0) == 10

    def test_a_single_good_episode_does_not_reach_the_threshold(self):
        returns = np.zeros(30)
        returns[3] = 100.0  # window means: 10 for windows holding it, 0 afterwards
        assert episodes_to_threshold(returns, 10.0) == 10
        assert episodes_to_threshold(returns, 10.1) == 31  # never: censored at episodes + 1

    def test_episodes_to_threshold_of_short_runs_smooths_over_all_episodes(self):
        assert episodes_to_threshold(np.array([0.0, 2.0, 4.0]), 2.0) == 3
        assert episodes_to_threshold(np.array([0.0, 2.0, 4.0]), 2.5) == 4

    def test_episodes_to_threshold_broadcasts_per_task_thresholds(self):
        returns = np.stack([np.arange(40.0), np.arange(40.0)])
        np.testing.assert_array_equal(
            episodes_to_threshold(returns, np.array([10.0, 20.0])), [16, 26]
        )

    def test_default_thresholds_are_ninety_percent_of_the_way_to_the_best(self):
        finals = {
            "a": np.array([[0.0, 10.0], [2.0, 10.0]]),  # task means 1, 10
            "b": np.array([[11.0, 0.0], [11.0, 0.0]]),  # task means 11, 0
        }
        np.testing.assert_allclose(default_thresholds(finals), [1 + 0.9 * 10, 0 + 0.9 * 10])


class TestGrid:
    def test_grid_holds_every_run_in_place(self):
        table = linear_table({"a": 0.0, "b": 5.0}, seeds=2, tasks=3, episodes=4)
        curves = learning_curves(table)
        assert list(curves) == ["a", "b"]
        assert curves["b"].seeds == (0, 1) and curves["b"].tasks == (0, 1, 2)
        np.testing.assert_array_equal(curves["b"].returns, linear_returns(5.0, 2, 3, 4))
        np.testing.assert_array_equal(curves["a"].steps[1, 2], [100, 101, 102, 103])

    def test_spec_order_wins(self):
        table = linear_table({"a": 0.0, "b": 5.0})
        assert list(learning_curves(table, ["b", "a"])) == ["b", "a"]

    def test_rows_in_any_order_give_the_same_grid(self):
        table = linear_table({"a": 0.0}, seeds=2, tasks=2, episodes=5)
        perm = np.random.default_rng(0).permutation(len(table))
        shuffled = EpisodeTable(
            *(
                getattr(table, f)[perm]
                for f in ("method", "seed", "task", "episode", "returns", "steps")
            )
        )
        np.testing.assert_array_equal(
            learning_curves(shuffled)["a"].returns, learning_curves(table)["a"].returns
        )

    def test_empty_results(self):
        with pytest.raises(ReportDataError, match="no episodes"):
            learning_curves(EpisodeTable.from_rows([]))

    def test_missing_episode_is_named(self):
        rows = [("a", s, t, e, 0.0, 1) for s in range(2) for t in range(2) for e in range(3)]
        rows.remove(("a", 1, 0, 2, 0.0, 1))
        with pytest.raises(ReportDataError, match=r"'a'.*incomplete.*seed 1, task 0, episode 2"):
            learning_curves(EpisodeTable.from_rows(rows))

    def test_duplicate_episode_is_named(self):
        rows = [("a", 0, 0, e, 0.0, 1) for e in range(3)] + [("a", 0, 0, 1, 5.0, 1)]
        with pytest.raises(ReportDataError, match="episode 1 is recorded 2 times"):
            learning_curves(EpisodeTable.from_rows(rows))

    def test_named_method_without_episodes(self):
        with pytest.raises(ReportDataError, match=r"\['c'\]"):
            learning_curves(linear_table({"a": 0.0}), ["a", "c"])

    def test_nan_return(self):
        with pytest.raises(ReportDataError, match="NaN"):
            learning_curves(EpisodeTable.from_rows([("a", 0, 0, 0, float("nan"), 1)]))

    def test_methods_on_other_tasks_cannot_be_compared(self):
        rows = [("a", 0, 0, e, 0.0, 1) for e in range(3)] + [
            ("b", 0, 1, e, 0.0, 1) for e in range(3)
        ]
        inputs = ReportInputs(EpisodeTable.from_rows(rows), "x", "h")
        with pytest.raises(ReportDataError, match="same test tasks"):
            analyse(inputs)

    def test_columns_must_have_equal_lengths(self):
        with pytest.raises(ReportDataError, match="different lengths"):
            EpisodeTable(*(np.zeros(2),) * 5, np.zeros(3))


def test_analysis_of_the_linear_table_by_hand():
    # 20 episodes: auc = 20/2 - 10.5 + s + 2t + k = -0.5 + s + 2t + k;
    # final_return (last 2) = mean(-10 + 18.5) + s + 2t + k = 8.5 + s + 2t + k;
    # threshold 0: window mean E' - 15.5 + s + 2t + k >= 0, and E' >= 10.
    table = linear_table({"primitives": 0.0, "ours": 5.0})
    a = analyse(ReportInputs(table, "x", "h", ReportSpec(threshold=0.0)))
    np.testing.assert_allclose(a.metrics["primitives"].values["auc"], [[-0.5, 1.5], [0.5, 2.5]])
    np.testing.assert_allclose(
        a.metrics["ours"].values["final_return"], [[13.5, 15.5], [14.5, 16.5]]
    )
    np.testing.assert_array_equal(
        a.metrics["primitives"].values["episodes_to_threshold"], [[16, 14], [15, 13]]
    )
    np.testing.assert_array_equal(
        a.metrics["ours"].values["episodes_to_threshold"], [[11, 10], [10, 10]]
    )
    assert a.thresholds == {0: 0.0, 1: 0.0}
    # Default thresholds: task 0 final means 9 (primitives) and 14 (ours) -> 9 + 0.9 * 5 = 13.5.
    default = analyse(ReportInputs(table, "x", "h"))
    assert default.thresholds == pytest.approx({0: 13.5, 1: 15.5})
