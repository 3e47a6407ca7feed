"""Hand-worked cases for opt_suite.stats (rliable's aggregates and the CI gate's tests)."""

from __future__ import annotations

import numpy as np
import pytest

from opt_suite import stats


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


class TestPointEstimates:
    def test_iqm_drops_a_quarter_at_each_end(self):
        # 8 entries sorted: 1 2 3 4 5 6 7 100; drop 2 per end -> mean(3, 4, 5, 6) = 4.5.
        scores = np.array([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 100.0]])
        assert stats.iqm(scores) == pytest.approx(4.5)

    def test_iqm_of_a_non_multiple_of_four(self):
        # 6 entries: floor(6/4) = 1 dropped per end -> mean(2, 3, 4, 5) = 3.5.
        scores = np.array([[6.0, 1.0, 3.0], [2.0, 5.0, 4.0]])
        assert stats.iqm(scores) == pytest.approx(3.5)

    def test_mean_and_standard_error(self):
        # entries 1..4: mean 2.5, sample std sqrt(5/3), se = sqrt(5/3) / 2.
        scores = np.array([[1.0, 2.0], [3.0, 4.0]])
        assert stats.mean(scores) == pytest.approx(2.5)
        assert stats.standard_error(scores) == pytest.approx(np.sqrt(5 / 3) / 2)

    def test_standard_error_of_one_entry_is_undefined(self):
        assert np.isnan(stats.standard_error(np.array([[3.0]])))

    def test_aggregates_broadcast_over_leading_axes(self):
        batch = rng().normal(size=(7, 3, 5))
        np.testing.assert_allclose(stats.iqm(batch), [stats.iqm(b) for b in batch])
        np.testing.assert_allclose(stats.mean(batch), [stats.mean(b) for b in batch])

    def test_probability_of_improvement_is_the_exact_fraction(self):
        # Task 0: x = 2, 3, 4 vs y = 1, 3. Pairs: 2>1, 2<3, 3>1, 3=3 (half), 4>1, 4>3 -> 4.5 / 6.
        # Task 1: x = 0, 0, 0 vs y = 1, 1 -> 0. Average over tasks: 0.375.
        x = np.array([[2.0, 0.0], [3.0, 0.0], [4.0, 0.0]])
        y = np.array([[1.0, 1.0], [3.0, 1.0]])
        assert stats.probability_of_improvement(x, y) == pytest.approx(0.375)
        assert stats.probability_of_improvement(y, x) == pytest.approx(0.625)

    def test_probability_of_improvement_of_identical_runs_is_one_half(self):
        x = rng().normal(size=(4, 3))
        assert stats.probability_of_improvement(x, x) == pytest.approx(0.5)

    @pytest.mark.parametrize("ties", [False, True], ids=["continuous", "ties"])
    def test_per_task_probability_of_improvement_is_every_pairs_count_to_the_bit(self, ties):
        # The ranks (Mann-Whitney U) give the pairwise definition's bits, leading axes broadcast,
        # ties counted half; a NaN keeps the pairwise rule (it beats and ties nothing).
        draw = rng()
        for lead_x, lead_y, n, m in [((), (), 5, 7), ((3,), (), 4, 9), ((2, 3), (3,), 6, 1)]:
            if ties:
                x = draw.integers(0, 4, (*lead_x, n, 5)).astype(float)
                y = draw.integers(0, 4, (*lead_y, m, 5)).astype(float)
            else:
                x, y = draw.normal(size=(*lead_x, n, 5)), draw.normal(size=(*lead_y, m, 5))
            every_pair = stats.every_pair_probability_of_improvement(x, y)
            got = stats.per_task_probability_of_improvement(x, y)
            assert got.shape == every_pair.shape
            assert np.array_equal(got, every_pair)
        x = np.array([[np.nan, 1.0], [2.0, 1.0]])
        y = np.array([[1.0, 1.0]])
        np.testing.assert_array_equal(stats.per_task_probability_of_improvement(x, y), [0.5, 0.5])

    def test_probability_of_improvement_needs_the_same_tasks(self):
        with pytest.raises(ValueError, match="same tasks"):
            stats.probability_of_improvement(np.zeros((2, 3)), np.zeros((2, 4)))

    @pytest.mark.parametrize("bad", [np.zeros(3), np.zeros((0, 2)), np.array([[1.0, np.nan]])])
    def test_bad_scores_are_rejected(self, bad):
        with pytest.raises(ValueError, match="scores"):
            stats.stratified_bootstrap_ci(bad, stats.mean, 100, rng())


class TestBootstrap:
    def test_ci_contains_the_point_estimate(self):
        scores = rng(1).normal(size=(5, 8))
        for statistic in (stats.iqm, stats.mean):
            low, high = stats.stratified_bootstrap_ci(scores, statistic, 2000, rng())
            assert low <= statistic(scores) <= high
            assert low < high

    def test_same_seed_same_interval_other_seed_other_interval(self):
        scores = rng(1).normal(size=(5, 8))
        a = stats.stratified_bootstrap_ci(scores, stats.iqm, 500, rng(3))
        b = stats.stratified_bootstrap_ci(scores, stats.iqm, 500, rng(3))
        c = stats.stratified_bootstrap_ci(scores, stats.iqm, 500, rng(4))
        assert a == b
        assert a != c

    def test_resampling_never_mixes_tasks(self):
        # Task m's runs are 10 m + {0, 0.1, 0.2}: any entry of column m outside that set would be a
        # run borrowed from another task.
        scores = np.array([[10.0 * m + 0.1 * n for m in range(4)] for n in range(3)])

        def check(batch: np.ndarray) -> np.ndarray:
            for m in range(4):
                assert set(np.round(batch[..., m].ravel(), 6)) <= set(np.round(scores[:, m], 6))
            # ...and every task's runs do get resampled (with replacement).
            assert len({tuple(b[:, 0]) for b in batch}) > 1
            return stats.mean(batch)

        assert stats.stratified_bootstrap(scores, check, 200, rng()).shape == (200,)

    def test_bootstrap_distribution_of_two_runs(self):
        # One task, runs 0 and 1: a resampled mean is 0, 0.5 or 1 with probabilities 1/4, 1/2, 1/4.
        dist = stats.stratified_bootstrap(np.array([[0.0], [1.0]]), stats.mean, 40_000, rng())
        values, counts = np.unique(dist, return_counts=True)
        np.testing.assert_allclose(values, [0.0, 0.5, 1.0])
        np.testing.assert_allclose(counts / dist.size, [0.25, 0.5, 0.25], atol=0.01)

    def test_constant_scores_give_a_degenerate_interval(self):
        assert stats.stratified_bootstrap_ci(np.full((3, 2), 7.0), stats.iqm, 100, rng()) == (
            7.0,
            7.0,
        )

    def test_batches_do_not_change_the_result_of_a_small_problem(self, monkeypatch):
        scores = rng(2).normal(size=(4, 3))
        whole = stats.stratified_bootstrap(scores, stats.mean, 300, rng())
        monkeypatch.setattr(stats, "_MAX_BATCH_ENTRIES", 12 * 7)  # 7 resamples per batch
        batched = stats.stratified_bootstrap(scores, stats.mean, 300, rng())
        assert batched.shape == whole.shape
        # Other batches draw other indices, but the distribution is the same one.
        assert abs(batched.mean() - whole.mean()) < 0.05

    def test_probability_of_improvement_ci(self):
        x = rng(1).normal(size=(5, 6)) + 0.5
        y = rng(2).normal(size=(4, 6))
        p = stats.probability_of_improvement(x, y)
        low, high = stats.probability_of_improvement_ci(x, y, 2000, rng())
        assert 0.0 <= low <= p <= high <= 1.0
        assert (low, high) == stats.probability_of_improvement_ci(x, y, 2000, rng())

    def test_difference_ci_contains_the_observed_difference(self):
        x = rng(1).normal(size=(5, 6)) + 1.0
        y = rng(2).normal(size=(3, 6))
        low, high = stats.stratified_bootstrap_difference_ci(x, y, 2000, rng())
        assert low <= stats.mean(x) - stats.mean(y) <= high
        assert low > 0  # a shift of one standard deviation, 30 vs 18 runs

    def test_percentile_interval_is_numpys(self):
        dist = rng().normal(size=1001)
        assert stats.percentile_interval(dist, 0.1) == tuple(np.percentile(dist, [5, 95]))
        with pytest.raises(ValueError, match="alpha"):
            stats.percentile_interval(dist, 1.0)


class TestGateTests:
    def test_all_zero_differences_pass(self):
        assert stats.paired_sign_flip_test(np.zeros(12), 10_000, rng()) == 1.0
        assert stats.paired_sign_flip_test(np.zeros(500), 1000, rng()) == 1.0

    def test_exact_sign_flip_p_values(self):
        # d = (-1, -2), mean -1.5; sign patterns give means -1.5, -0.5, 0.5, 1.5 -> p = 1/4.
        assert stats.paired_sign_flip_test(np.array([-1.0, -2.0]), 100, rng()) == 0.25
        # Three equal negative differences: only the identity pattern is as low -> 1/8.
        assert stats.paired_sign_flip_test(-np.ones(3), 100, rng()) == 0.125
        # Positive differences are no evidence of a regression.
        assert stats.paired_sign_flip_test(np.array([1.0, 2.0]), 100, rng()) == 1.0

    def test_monte_carlo_sign_flip(self):
        # 2**30 patterns > reps: Monte Carlo; only the identity reaches the observed mean.
        assert stats.paired_sign_flip_test(-np.ones(30), 999, rng()) == pytest.approx(1 / 1000)
        p = stats.paired_sign_flip_test(rng(5).normal(size=30), 4000, rng())
        assert 0.01 < p < 0.99

    def test_two_sample_permutation(self):
        # new = 0, 0, 0 vs old = 1, 1, 1: only the C(6, 3) = 20th of relabelings with all zeros as
        # "new" is as low as observed -> p close to 1/20.
        p = stats.permutation_test(np.zeros(3), np.ones(3), 20_000, rng())
        assert p == pytest.approx(0.05, abs=0.006)
        assert stats.permutation_test(np.ones(3), np.zeros(3), 2000, rng()) == 1.0

    def test_holm(self):
        # sorted 0.01, 0.03, 0.04 times 3, 2, 1 = 0.03, 0.06, 0.04; running max 0.03, 0.06, 0.06
        np.testing.assert_allclose(stats.holm(np.array([0.01, 0.04, 0.03])), [0.03, 0.06, 0.06])
        np.testing.assert_allclose(stats.holm(np.array([0.5, 0.9])), [1.0, 1.0])


class TestTaskBootstrap:
    def test_whole_tasks_are_drawn_and_runs_within_them(self):
        # Task m's runs are 10 m + {0, 0.1, 0.2}: each resampled column must be one task's runs
        # (whichever task was drawn), and some resamples draw a task twice.
        scores = np.array([[10.0 * m + 0.1 * n for m in range(4)] for n in range(3)])
        repeated = []

        def check(batch: np.ndarray) -> np.ndarray:
            drawn = np.floor(batch / 10.0 + 1e-9)
            assert np.all(drawn == drawn[:, :1, :])  # a column never mixes tasks
            repeated.extend(len(set(d[0])) < 4 for d in drawn)
            return stats.mean(batch)

        assert stats.task_bootstrap(scores, check, 300, rng()).shape == (300,)
        assert any(repeated)

    def test_task_interval_is_wider_when_tasks_differ(self):
        # Runs agree within a task but tasks differ: re-running seeds barely moves the IQM, while
        # drawing other tasks does.
        scores = 10.0 * np.arange(8) + rng(3).normal(scale=0.1, size=(5, 8))
        seeds = stats.stratified_bootstrap_ci(scores, stats.iqm, 2000, rng())
        tasks = stats.task_bootstrap_ci(scores, stats.iqm, 2000, rng())
        assert seeds[1] - seeds[0] < 1.0 < tasks[1] - tasks[0]
        assert tasks[0] <= stats.iqm(scores) <= tasks[1]

    def test_one_task_distribution_of_two_runs(self):
        # With one task the task bootstrap is the stratified one: 0, 0.5, 1 w.p. 1/4, 1/2, 1/4.
        dist = stats.task_bootstrap(np.array([[0.0], [1.0]]), stats.mean, 40_000, rng())
        values, counts = np.unique(dist, return_counts=True)
        np.testing.assert_allclose(values, [0.0, 0.5, 1.0])
        np.testing.assert_allclose(counts / dist.size, [0.25, 0.5, 0.25], atol=0.01)

    def test_probability_of_improvement_task_interval(self):
        # X wins on 6 of 8 tasks by a wide margin and loses on 2: P = 0.75; the seed interval is
        # a point (no run ever changes a task's verdict), the task interval is not.
        x = np.tile(np.array([5.0] * 6 + [-5.0] * 2), (4, 1)) + rng(1).normal(size=(4, 8))
        y = rng(2).normal(size=(4, 8))
        assert stats.probability_of_improvement(x, y) == 0.75
        seeds = stats.probability_of_improvement_ci(x, y, 2000, rng())
        tasks = stats.probability_of_improvement_ci(x, y, 2000, rng(), over_tasks=True)
        assert seeds == (0.75, 0.75)
        assert tasks[0] < 0.6 and tasks[1] > 0.9


class TestPairedProbabilityOfImprovement:
    def test_hand_worked(self):
        # Pairs (seed, task): (1 > 0), (2 = 2), (0 < 3), (5 > 4): (1 + 0.5 + 0 + 1) / 4.
        x = np.array([[1.0, 2.0], [0.0, 5.0]])
        y = np.array([[0.0, 2.0], [3.0, 4.0]])
        assert stats.paired_probability_of_improvement(x, y) == 0.625
        # The unpaired P compares all seed pairs per task: task 0 {1, 0} vs {0, 3}: (1 + 0 + 0.5
        # + 0) / 4 = 0.375; task 1 {2, 5} vs {2, 4}: (0.5 + 0 + 1 + 1) / 4 = 0.625; mean 0.5.
        assert stats.probability_of_improvement(x, y) == 0.5

    def test_pairs_are_resampled_together(self):
        # X beats Y in every pair by 1 while seeds vary by 10: paired P is 1 in every resample.
        base = 10.0 * rng(4).normal(size=(5, 3))
        assert stats.paired_probability_of_improvement_ci(base + 1, base, 500, rng()) == (1.0, 1.0)
        assert stats.paired_probability_of_improvement_ci(
            base + 1, base, 500, rng(), over_tasks=True
        ) == (1.0, 1.0)
        # ...while the unpaired P sees mostly seed noise.
        assert stats.probability_of_improvement(base + 1, base) < 0.7

    def test_needs_the_same_runs_and_tasks(self):
        with pytest.raises(ValueError, match="same"):
            stats.paired_probability_of_improvement(np.zeros((2, 3)), np.zeros((3, 3)))
        with pytest.raises(ValueError, match="same"):
            stats.paired_probability_of_improvement_ci(
                np.zeros((2, 3)), np.zeros((3, 3)), 10, rng()
            )
