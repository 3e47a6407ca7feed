"""Cross-check opt_suite.stats against rliable itself (Agarwal et al., NeurIPS 2021).

Point estimates must agree exactly. Confidence intervals come from other random streams (rliable
draws from numpy's global state and ignores its ``random_state``), so they are checked
statistically: rliable's endpoint must lie within a few standard deviations of ours, where the
standard deviation is that of our endpoint over independent seeds at rliable's number of
resamples. A bootstrap that is not stratified fails the same check (the last test), so the check has
the power to catch a wrong resampling scheme.
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest

# rliable is a test dependency (the `test` extra; it needs pandas < 3). Imported plainly, not
# skipped: the cross-check must run wherever the test suite runs.
from rliable import library as rliable_library
from rliable import metrics as rliable_metrics

from opt_suite import stats

SEEDS = 24  # independent seeds of our own CI, to measure its Monte Carlo spread
Z_MAX = 4.0


@contextlib.contextmanager
def global_numpy_seed(seed: int):
    """Seed numpy's global state for rliable and put the previous state back afterwards."""
    state = np.random.get_state()
    np.random.seed(seed)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scipy/arch warnings inside rliable are not ours
            yield
    finally:
        np.random.set_state(state)


def rliable_iqm_ci(scores: np.ndarray, reps: int) -> np.ndarray:
    with global_numpy_seed(0):
        _, ci = rliable_library.get_interval_estimates(
            {"m": scores}, lambda s: np.array([rliable_metrics.aggregate_iqm(s)]), reps=reps
        )
    return ci["m"][:, 0]


def rliable_poi_ci(x: np.ndarray, y: np.ndarray, reps: int) -> np.ndarray:
    with global_numpy_seed(0):
        _, ci = rliable_library.get_interval_estimates(
            {"m": [x, y]},
            lambda a, b: np.array([rliable_metrics.probability_of_improvement(a, b)]),
            reps=reps,
        )
    return ci["m"][:, 0]


def z_scores(theirs: np.ndarray, ours_over_seeds: np.ndarray) -> np.ndarray:
    """|theirs - mean(ours)| in units of our endpoints' spread over seeds (floored, for ties)."""
    spread = np.maximum(ours_over_seeds.std(axis=0, ddof=1), 1e-3)
    return np.abs(theirs - ours_over_seeds.mean(axis=0)) / spread


def scores_with_different_task_scales(seed: int, runs: int = 5, tasks: int = 6) -> np.ndarray:
    # Tasks differ a lot in level (like start-goal distances), runs within a task vary little:
    # exactly the case where resampling within tasks matters.
    r = np.random.default_rng(seed)
    return 10.0 * np.arange(tasks) + r.normal(size=(runs, tasks))


@pytest.mark.parametrize("shape", [(5, 6), (3, 10), (10, 1), (7, 3)])
def test_point_estimates_match_exactly(shape):
    r = np.random.default_rng(sum(shape))
    scores = r.normal(size=shape)
    assert stats.iqm(scores) == rliable_metrics.aggregate_iqm(scores)
    np.testing.assert_allclose(
        stats.mean(scores), rliable_metrics.aggregate_mean(scores), rtol=1e-14
    )
    # Integers: many ties, which Mann-Whitney counts as one half.
    x = r.integers(0, 4, size=shape).astype(float)
    y = r.integers(0, 4, size=(shape[0] + 2, shape[1])).astype(float)
    for a, b in ((x, y), (y, x), (x, x)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = rliable_metrics.probability_of_improvement(a, b)
        assert stats.probability_of_improvement(a, b) == pytest.approx(theirs, abs=1e-12)


def test_iqm_confidence_interval_matches_rliable():
    scores = scores_with_different_task_scales(0)
    reps = 10_000
    theirs = rliable_iqm_ci(scores, reps)
    ours = np.array(
        [
            stats.stratified_bootstrap_ci(scores, stats.iqm, reps, np.random.default_rng(s))
            for s in range(SEEDS)
        ]
    )
    assert np.all(z_scores(theirs, ours) < Z_MAX), (theirs, ours.mean(axis=0))


def test_probability_of_improvement_interval_matches_rliable():
    r = np.random.default_rng(1)
    x = r.integers(0, 5, size=(4, 3)).astype(float)
    y = r.integers(0, 4, size=(3, 3)).astype(float)
    reps = 1500  # rliable runs scipy's Mann-Whitney once per task and resample: slow
    theirs = rliable_poi_ci(x, y, reps)
    ours = np.array(
        [
            stats.probability_of_improvement_ci(x, y, reps, np.random.default_rng(s))
            for s in range(SEEDS)
        ]
    )
    assert np.all(z_scores(theirs, ours) < Z_MAX), (theirs, ours.mean(axis=0))


def test_an_unstratified_bootstrap_would_fail_the_check():
    scores = scores_with_different_task_scales(0)
    reps = 10_000
    theirs = rliable_iqm_ci(scores, reps)
    flat = scores.ravel()

    def iid_ci(seed: int) -> tuple[float, float]:
        # Resamples all runs x tasks entries together, mixing tasks: not rliable's bootstrap.
        idx = np.random.default_rng(seed).integers(0, flat.size, size=(reps, flat.size))
        return stats.percentile_interval(stats.iqm(flat[idx][:, :, None]), 0.05)

    wrong = np.array([iid_ci(s) for s in range(SEEDS)])
    assert np.all(z_scores(theirs, wrong) > 10 * Z_MAX)


def test_task_bootstrap_interval_matches_rliable():
    scores = scores_with_different_task_scales(0, runs=4, tasks=8)
    reps = 4000
    with global_numpy_seed(0):
        _, ci = rliable_library.get_interval_estimates(
            {"m": scores},
            lambda s: np.array([rliable_metrics.aggregate_iqm(s)]),
            reps=reps,
            task_bootstrap=True,
        )
    theirs = ci["m"][:, 0]
    ours = np.array(
        [
            stats.task_bootstrap_ci(scores, stats.iqm, reps, np.random.default_rng(s))
            for s in range(SEEDS)
        ]
    )
    assert np.all(z_scores(theirs, ours) < Z_MAX), (theirs, ours.mean(axis=0))
    # The seed-only bootstrap is far narrower here (tasks differ by 10, runs by 1): the check
    # would catch a task bootstrap that forgot to resample tasks.
    seeds_only = np.array(
        [
            stats.stratified_bootstrap_ci(scores, stats.iqm, reps, np.random.default_rng(s))
            for s in range(SEEDS)
        ]
    )
    assert np.all(z_scores(theirs, seeds_only) > Z_MAX)
