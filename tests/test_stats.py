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
