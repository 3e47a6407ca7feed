"""Aggregate statistics over (runs x tasks) score matrices, and the tests the CI gate uses.

The aggregates follow rliable (Agarwal et al., "Deep RL at the Edge of the Statistical Precipice",
NeurIPS 2021), re-implemented here because rliable draws its bootstrap indices from numpy's *global*
random state and ignores the ``random_state`` it is given; every random draw here comes from an
explicit ``np.random.Generator``, so the same scores and seed give the same intervals.

Conventions:

* ``scores`` has shape ``[..., runs, tasks]``: ``scores[..., n, m]`` is run (seed) ``n`` on task
  ``m``.
  Every aggregate reduces the last two axes and broadcasts over leading ones, which is how a whole
  batch of bootstrap resamples is evaluated at once.
* Confidence intervals are percentile intervals (``np.percentile``, linear interpolation), as
  rliable's default ``method='percentile'``.
* The bootstrap is *stratified*: runs are resampled with replacement independently within each
  task, tasks are never mixed (rliable's ``StratifiedBootstrap`` with ``task_bootstrap=False``). It
  captures the uncertainty of re-running the same tasks with new seeds.
* The *task* bootstrap (:func:`task_bootstrap`) is rliable's ``task_bootstrap=True``: the tasks are
  resampled with replacement, then the runs within each drawn task as above. It adds the
  uncertainty of having drawn these test tasks rather than others from the task family.
* The *seed* bootstrap (:func:`seed_bootstrap`) takes the seed as the unit of replication (each seed
  has its own demonstrations and option set, reused on all its test tasks): it resamples seeds,
  and with them either the tasks within each drawn seed (hierarchical, when every seed drew its own
  test tasks) or one draw of tasks shared by all seeds (crossed, when the seeds share them).
* :func:`paired_probability_of_improvement` is the variant for runs that share common random
  numbers (the same seed and test task give both methods the same task and evaluation seeds): it
  compares each (seed, task) run of X with *the* run of Y of that seed and task only.

Length (over the 400 lines the tree aims for): rliable's definitions (IQM, stratified and task
bootstraps, probability of improvement) and the seed bootstrap share their resampling helpers;
split, each would import the others' private pieces.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np
import scipy.stats

__all__ = [
    "every_pair_probability_of_improvement",
    "holm",
    "iqm",
    "mean",
    "median",
    "optimality_gap",
    "paired_probability_of_improvement",
    "paired_probability_of_improvement_ci",
    "paired_wins",
    "per_task_probability_of_improvement",
    "paired_sign_flip_test",
    "paired_sign_flip_smallest_p",
    "percentile_interval",
    "permutation_smallest_p",
    "permutation_test",
    "probability_of_improvement",
    "probability_of_improvement_ci",
    "seed_bootstrap",
    "standard_error",
    "stratified_bootstrap",
    "stratified_bootstrap_ci",
    "stratified_bootstrap_difference_ci",
    "task_bootstrap",
    "task_bootstrap_ci",
]

Statistic = Callable[[np.ndarray], np.ndarray]

# Bootstrap resamples are evaluated in batches of at most this many score entries, so memory stays
# bounded (about 64 MB of float64) whatever ``reps`` is; the batch size depends on the shape only,
# so results stay deterministic.
_MAX_BATCH_ENTRIES = 8_000_000


def _check_scores(scores: np.ndarray, name: str = "scores") -> np.ndarray:
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 2 or scores.shape[0] < 1 or scores.shape[1] < 1:
        raise ValueError(
            f"{name} must be a [runs, tasks] matrix with at least one of each, got shape"
            f" {scores.shape}"
        )
    if not np.all(np.isfinite(scores)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return scores


def _check_pair(
    scores_x: np.ndarray, scores_y: np.ndarray, same_tasks: bool
) -> tuple[np.ndarray, np.ndarray]:
    x, y = _check_scores(scores_x, "scores_x"), _check_scores(scores_y, "scores_y")
    if same_tasks and x.shape[1] != y.shape[1]:
        raise ValueError(f"X and Y must have the same tasks, got {x.shape[1]} and {y.shape[1]}")
    return x, y


def _flatten_runs_tasks(scores: np.ndarray) -> np.ndarray:
    scores = np.asarray(scores, dtype=np.float64)
    return scores.reshape(*scores.shape[:-2], scores.shape[-2] * scores.shape[-1])


def mean(scores: np.ndarray) -> np.ndarray:
    """Mean over all runs and tasks (rliable's ``aggregate_mean``: every task has equal runs)."""
    return np.mean(_flatten_runs_tasks(scores), axis=-1)


def standard_error(scores: np.ndarray) -> np.ndarray:
    """Standard error of :func:`mean`, treating each (run, task) entry as one sample.

    ``std(ddof=1) / sqrt(runs * tasks)``. Tasks are random draws from the task family and seeds are
    independent, so this counts both sources of variation. NaN when there is a single entry.
    """
    flat = _flatten_runs_tasks(scores)
    n = flat.shape[-1]
    if n < 2:
        return np.full(flat.shape[:-1], np.nan)[()]
    return np.std(flat, axis=-1, ddof=1) / np.sqrt(n)


def iqm(scores: np.ndarray) -> np.ndarray:
    """Interquartile mean: the 25% trimmed mean over the flattened runs x tasks.

    Exactly rliable's ``aggregate_iqm`` (``scipy.stats.trim_mean(scores, 0.25, axis=None)``): sort
    the ``n`` entries, drop ``floor(n / 4)`` from each end, average the rest. Computed as
    ``trim_mean`` computes it (the same ``np.partition`` and mean, so the same bits) without its
    argument-checking wrapper, which cost the bootstrap most of its time.
    """
    flat = _flatten_runs_tasks(scores)
    n = flat.shape[-1]
    if n == 0:
        return np.asarray(scipy.stats.trim_mean(flat, 0.25, axis=-1))[()]
    low = int(0.25 * n)
    middle = np.partition(flat, (low, n - low - 1), axis=-1)[..., low : n - low]
    return np.asarray(np.mean(middle, axis=-1))[()]


def median(scores: np.ndarray) -> np.ndarray:
    """Median over the flattened runs x tasks (rliable's ``aggregate_median``)."""
    return np.median(_flatten_runs_tasks(scores), axis=-1)


def optimality_gap(scores: np.ndarray, target: float) -> np.ndarray:
    """Mean shortfall below ``target``: ``mean(max(target - x, 0))`` over the runs x tasks.

    rliable's ``aggregate_optimality_gap`` with ``gamma = target`` (lower is better; scores above
    the target earn nothing, so a method cannot buy back a task it fails with one it over-solves).
    """
    return np.mean(np.maximum(target - _flatten_runs_tasks(scores), 0.0), axis=-1)


def percentile_interval(distribution: np.ndarray, alpha: float) -> tuple[float, float]:
    """Two-sided ``1 - alpha`` percentile interval of a bootstrap distribution."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    low, high = np.percentile(distribution, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return float(low), float(high)


def _batches(reps: int, entries_per_rep: int):
    if reps < 1:
        raise ValueError(f"reps must be >= 1, got {reps}")
    size = max(1, _MAX_BATCH_ENTRIES // max(1, entries_per_rep))
    for start in range(0, reps, size):
        yield min(size, reps - start)


def _stratified_resample(scores: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` stratified resamples, shape ``[count, runs, tasks]``.

    Entry ``[b, n, m]`` is ``scores[idx[b, n, m], m]`` with ``idx`` uniform over runs: runs are
    drawn with replacement, independently per task: task ``m`` only ever receives task ``m``'s
    runs.
    """
    runs, tasks = scores.shape
    idx = rng.integers(0, runs, size=(count, runs, tasks))
    return scores[idx, np.arange(tasks)]


def _task_resample(scores: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` task-bootstrap resamples, shape ``[count, runs, tasks]``.

    rliable's ``StratifiedBootstrap(task_bootstrap=True)``: column ``m`` of resample ``b`` is task
    ``task_idx[b, m]`` (tasks drawn uniformly with replacement), and within it the runs are drawn
    with replacement as in :func:`_stratified_resample`.
    """
    runs, tasks = scores.shape
    task_idx = rng.integers(0, tasks, size=(count, 1, tasks))
    run_idx = rng.integers(0, runs, size=(count, runs, tasks))
    return scores[run_idx, task_idx]


def stratified_bootstrap(
    scores: np.ndarray,
    statistic: Statistic,
    reps: int,
    rng: np.random.Generator,
    over_tasks: bool = False,
) -> np.ndarray:
    """Bootstrap distribution ``[reps]`` of ``statistic`` under stratified resampling of runs.

    Args:
        scores: ``[runs, tasks]`` matrix.
        statistic: reduces the last two axes of a ``[..., runs, tasks]`` array (e.g. :func:`iqm`).
        reps: number of bootstrap resamples.
        rng: the only source of randomness.
        over_tasks: resample the tasks too, then the runs within each drawn task (the task
            bootstrap, :func:`task_bootstrap`).
    """
    scores = _check_scores(scores)
    resample = _task_resample if over_tasks else _stratified_resample
    out = [
        np.asarray(statistic(resample(scores, count, rng)), dtype=np.float64)
        for count in _batches(reps, scores.size)
    ]
    return np.concatenate(out)


def stratified_bootstrap_ci(
    scores: np.ndarray,
    statistic: Statistic,
    reps: int,
    rng: np.random.Generator,
    alpha: float = 0.05,
    over_tasks: bool = False,
) -> tuple[float, float]:
    """Percentile ``1 - alpha`` confidence interval of ``statistic(scores)``.

    rliable's ``get_interval_estimates(..., method='percentile', task_bootstrap=over_tasks)``.
    """
    dist = stratified_bootstrap(scores, statistic, reps, rng, over_tasks)
    return percentile_interval(dist, alpha)


def task_bootstrap(
    scores: np.ndarray, statistic: Statistic, reps: int, rng: np.random.Generator
) -> np.ndarray:
    """:func:`stratified_bootstrap` resampling tasks, then runs within them (``over_tasks``).

    With a single task it equals the stratified bootstrap in distribution (the one task is always
    drawn); with a single run per task it resamples tasks only.
    """
    return stratified_bootstrap(scores, statistic, reps, rng, over_tasks=True)


def task_bootstrap_ci(
    scores: np.ndarray,
    statistic: Statistic,
    reps: int,
    rng: np.random.Generator,
    alpha: float = 0.05,
) -> tuple[float, float]:
    """:func:`stratified_bootstrap_ci` with ``over_tasks=True`` (rliable's task_bootstrap=True)."""
    return stratified_bootstrap_ci(scores, statistic, reps, rng, alpha, over_tasks=True)


def per_task_probability_of_improvement(scores_x: np.ndarray, scores_y: np.ndarray) -> np.ndarray:
    """Per task m, ``P(X_m > Y_m) + 0.5 P(X_m = Y_m)`` over all pairs of X's and Y's runs.

    The Mann-Whitney U statistic of X against Y divided by ``runs_x * runs_y``, one per task:
    ``[..., tasks]`` (:func:`probability_of_improvement` is its mean over tasks).

    Computed from ranks, not by comparing every pair: U is the sum of X's midranks among all
    runs minus ``runs_x (runs_x + 1) / 2``, a sum of halves, exact in float64 as the pairs' count
    of wins and half-ties is, so both give the same bits. Every pair cost a 200-seed baseline's
    export over 8 minutes (``runs_x * runs_y`` per task, per bootstrap resample). With a NaN
    (no order) the pairs are compared as before: a NaN neither beats nor ties anything.

    Args:
        scores_x: ``[..., runs_x, tasks]``.
        scores_y: ``[..., runs_y, tasks]``, same tasks; leading axes broadcast with ``scores_x``'s.
    """
    x = np.asarray(scores_x, dtype=np.float64)
    y = np.asarray(scores_y, dtype=np.float64)
    if x.shape[-1] != y.shape[-1]:
        raise ValueError(f"X and Y must have the same tasks, got {x.shape[-1]} and {y.shape[-1]}")
    if np.isnan(x).any() or np.isnan(y).any():
        return every_pair_probability_of_improvement(x, y)
    lead = np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
    n, m = x.shape[-2], y.shape[-2]
    x = np.broadcast_to(x, (*lead, n, x.shape[-1]))
    y = np.broadcast_to(y, (*lead, m, y.shape[-1]))
    ranks = scipy.stats.rankdata(np.concatenate([x, y], axis=-2), method="average", axis=-2)
    wins = np.sum(ranks[..., :n, :], axis=-2) - n * (n + 1) / 2
    return wins / float(n * m)


def every_pair_probability_of_improvement(scores_x: np.ndarray, scores_y: np.ndarray) -> np.ndarray:
    """:func:`per_task_probability_of_improvement` by its definition: every pair of runs compared.

    ``runs_x * runs_y`` comparisons per task: the ranks' reference (tests, benchmark) and the rule
    where a NaN leaves no order.
    """
    x = np.asarray(scores_x, dtype=np.float64)[..., :, None, :]
    y = np.asarray(scores_y, dtype=np.float64)[..., None, :, :]
    return np.mean((x > y) + 0.5 * (x == y), axis=(-3, -2))


def probability_of_improvement(scores_x: np.ndarray, scores_y: np.ndarray) -> np.ndarray:
    """Average probability that a run of X beats a run of Y on the same task.

    :func:`per_task_probability_of_improvement`, then the mean over tasks (rliable's
    ``probability_of_improvement``). Higher scores are better; pass negated scores for a metric
    where lower is better.

    Args:
        scores_x: ``[..., runs_x, tasks]``.
        scores_y: ``[..., runs_y, tasks]``, same tasks; leading axes broadcast with ``scores_x``'s.
    """
    return np.mean(per_task_probability_of_improvement(scores_x, scores_y), axis=-1)


def probability_of_improvement_ci(
    scores_x: np.ndarray,
    scores_y: np.ndarray,
    reps: int,
    rng: np.random.Generator,
    alpha: float = 0.05,
    over_tasks: bool = False,
) -> tuple[float, float]:
    """Percentile CI of :func:`probability_of_improvement`.

    X's and Y's runs are resampled independently, each stratified by task (rliable's
    ``StratifiedIndependentBootstrap``). With ``over_tasks`` each resample first draws one
    multiset of tasks (the same for X and Y, since P compares them task by task), then X's and
    Y's runs independently within each drawn task.
    """
    x, y = _check_pair(scores_x, scores_y, same_tasks=True)
    tasks = x.shape[1]
    dist = []
    for count in _batches(reps, x.shape[0] * y.shape[0] * tasks):
        drawn = rng.integers(0, tasks, size=(count, 1, tasks)) if over_tasks else np.arange(tasks)
        xr = x[rng.integers(0, x.shape[0], size=(count, x.shape[0], tasks)), drawn]
        yr = y[rng.integers(0, y.shape[0], size=(count, y.shape[0], tasks)), drawn]
        dist.append(probability_of_improvement(xr, yr))
    return percentile_interval(np.concatenate(dist), alpha)


def paired_probability_of_improvement(scores_x: np.ndarray, scores_y: np.ndarray) -> np.ndarray:
    """Fraction of (seed, task) pairs where X's run beats Y's run of the same seed and task.

    ``mean over (n, m) of [x[n, m] > y[n, m]] + 0.5 [x[n, m] == y[n, m]]``. Meaningful only when
    run ``n`` of X and run ``n`` of Y share their random numbers (same seed index, same task, same
    evaluation seeds), so that the pair differs by the method alone.

    Args:
        scores_x: ``[..., runs, tasks]``.
        scores_y: same shape (leading axes broadcast).
    """
    wins = paired_wins(scores_x, scores_y)
    return np.mean(wins.reshape(*wins.shape[:-2], -1), axis=-1)


def paired_wins(scores_x: np.ndarray, scores_y: np.ndarray) -> np.ndarray:
    """Per (seed, task) pair: 1 where X's run beats Y's run of it, 0.5 on a tie, else 0.

    Args:
        scores_x: ``[..., runs, tasks]``.
        scores_y: same shape (leading axes broadcast).
    """
    x = np.asarray(scores_x, dtype=np.float64)
    y = np.asarray(scores_y, dtype=np.float64)
    if x.shape[-2:] != y.shape[-2:]:
        raise ValueError(
            f"paired runs need the same (runs, tasks), got {x.shape[-2:]} and {y.shape[-2:]}"
        )
    return (x > y) + 0.5 * (x == y)


def paired_probability_of_improvement_ci(
    scores_x: np.ndarray,
    scores_y: np.ndarray,
    reps: int,
    rng: np.random.Generator,
    alpha: float = 0.05,
    over_tasks: bool = False,
) -> tuple[float, float]:
    """Percentile CI of :func:`paired_probability_of_improvement`.

    The (seed, task) pairs are resampled as units, so a pair's X and Y stay together: seeds with
    replacement within each task (``over_tasks=False``, the stratified bootstrap) or, with
    ``over_tasks=True``, tasks first and then seeds within them (the task bootstrap).
    """
    x, y = _check_pair(scores_x, scores_y, same_tasks=True)
    if x.shape != y.shape:
        raise ValueError(f"paired runs need the same (runs, tasks), got {x.shape} and {y.shape}")
    wins = paired_wins(x, y)  # one entry per pair: resampling it keeps X and Y together
    return stratified_bootstrap_ci(wins, mean, reps, rng, alpha, over_tasks)


def seed_bootstrap(
    matrices: tuple[np.ndarray, ...],
    statistic: Callable[..., np.ndarray],
    reps: int,
    rng: np.random.Generator,
    tasks_per_seed: bool,
) -> np.ndarray:
    """Bootstrap distribution ``[reps]`` of ``statistic(*matrices)`` with the seed as the unit.

    Each resample draws seeds with replacement, then tasks with replacement: within each drawn
    seed independently when ``tasks_per_seed`` (hierarchical: a seed's k-th task is not another
    seed's k-th task), else one draw of tasks for every seed (crossed: the seeds share the tasks).
    Every matrix is resampled with the same indices, so a (seed, task) pair's entries stay together.

    Args:
        matrices: ``[seeds, tasks]`` matrices of the same shape.
        statistic: takes one ``[count, seeds, tasks]`` resample per matrix, returns ``[count]``.
        reps: number of bootstrap resamples.
        rng: the only source of randomness.
        tasks_per_seed: hierarchical (True) or crossed (False) resampling of the tasks.
    """
    checked = tuple(_check_scores(m, f"matrix {i}") for i, m in enumerate(matrices))
    shape = checked[0].shape
    if any(m.shape != shape for m in checked):
        raise ValueError(
            f"matrices must share one (seeds, tasks) shape, got {[m.shape for m in checked]}"
        )
    seeds, tasks = shape
    out = []
    for count in _batches(reps, seeds * tasks * len(checked)):
        seed_idx = rng.integers(0, seeds, size=(count, seeds, 1))
        task_idx = rng.integers(0, tasks, size=(count, seeds if tasks_per_seed else 1, tasks))
        drawn = [m[seed_idx, task_idx] for m in checked]
        out.append(np.asarray(statistic(*drawn), dtype=np.float64))
    return np.concatenate(out)


def stratified_bootstrap_difference_ci(
    scores_x: np.ndarray,
    scores_y: np.ndarray,
    reps: int,
    rng: np.random.Generator,
    alpha: float = 0.05,
) -> tuple[float, float]:
    """Percentile CI of ``mean(X) - mean(Y)`` for independent samples, each resampled stratified."""
    x, y = _check_pair(scores_x, scores_y, same_tasks=False)
    dist = [
        mean(_stratified_resample(x, count, rng)) - mean(_stratified_resample(y, count, rng))
        for count in _batches(reps, x.size + y.size)
    ]
    return percentile_interval(np.concatenate(dist), alpha)


def _at_most(values: np.ndarray, observed: float) -> np.ndarray:
    # Sign flips that reproduce the observed arrangement sum the same numbers in another order;
    # a relative tolerance keeps floating-point reassociation from excluding them.
    return values <= observed + 1e-12 * max(1.0, abs(observed))


def paired_sign_flip_test(differences: np.ndarray, reps: int, rng: np.random.Generator) -> float:
    """One-sided p-value for "the mean paired difference is below zero".

    Under H0 each difference is symmetric about zero, so flipping its sign leaves the distribution
    unchanged. The p-value is the fraction of sign patterns whose mean is at most the observed mean:
    exact (all ``2**n`` patterns) when ``2**n <= reps``, otherwise ``(1 + hits) / (1 + reps)`` over
    ``reps`` random patterns (a valid Monte Carlo p-value). All-zero differences give p = 1.
    """
    d = np.asarray(differences, dtype=np.float64).ravel()
    if d.size == 0:
        raise ValueError("no differences to test")
    observed = float(np.mean(d))
    if d.size < 63 and 2**d.size <= reps:
        patterns = (np.arange(2**d.size)[:, None] >> np.arange(d.size)) & 1
        flipped = np.mean(np.where(patterns == 1, -d, d), axis=1)
        return float(np.mean(_at_most(flipped, observed)))
    hits = 0
    for count in _batches(reps, d.size):
        signs = rng.choice(np.array([-1.0, 1.0]), size=(count, d.size))
        hits += int(np.sum(_at_most(np.mean(signs * d, axis=1), observed)))
    return (1 + hits) / (1 + reps)


def paired_sign_flip_smallest_p(pairs: int, reps: int) -> float:
    """The smallest p-value :func:`paired_sign_flip_test` can return for ``pairs`` differences.

    Exact test: ``2**-pairs`` (every difference negative, only the observed pattern is as extreme).
    Monte Carlo test (``2**pairs > reps``): ``1 / (1 + reps)``. A test whose smallest p-value is
    above the significance level can never reject, whatever the data.
    """
    if pairs < 1:
        raise ValueError(f"pairs must be >= 1, got {pairs}")
    if pairs < 63 and 2**pairs <= reps:
        return 2.0**-pairs
    return 1.0 / (1 + reps)


#: Most labellings :func:`permutation_test` enumerates exactly (an array of this many index rows).
_EXACT_LABELLINGS = 200_000


def _enumerable(new_size: int, old_size: int, reps: int) -> bool:
    labellings = math.comb(new_size + old_size, new_size)
    return labellings <= reps and labellings <= _EXACT_LABELLINGS


def permutation_test(
    new: np.ndarray, old: np.ndarray, reps: int, rng: np.random.Generator
) -> float:
    """One-sided two-sample permutation p-value for "mean(new) < mean(old)".

    Under H0 the ``n + m`` values are exchangeable: which ``n`` of them are "new" is a uniform
    draw. The p-value is the fraction of labellings whose difference of means is at most the
    observed one: exact (every one of the ``C(n + m, n)`` labellings) when there are at most
    ``reps`` of them, otherwise ``(1 + hits) / (1 + reps)`` over ``reps`` random labellings
    (a valid Monte Carlo p-value), as :func:`paired_sign_flip_test` does for sign patterns.
    """
    new = np.asarray(new, dtype=np.float64).ravel()
    old = np.asarray(old, dtype=np.float64).ravel()
    if new.size == 0 or old.size == 0:
        raise ValueError("both samples need at least one value")
    pooled = np.concatenate([new, old])
    observed = float(np.mean(new) - np.mean(old))
    total = float(np.sum(pooled))

    def differences(chosen_sum: np.ndarray) -> np.ndarray:
        # mean of the n values labelled new minus the mean of the other m, from their sum alone
        return chosen_sum / new.size - (total - chosen_sum) / old.size

    if _enumerable(new.size, old.size, reps):
        labellings = np.array(list(itertools.combinations(range(pooled.size), new.size)))
        return float(np.mean(_at_most(differences(pooled[labellings].sum(axis=1)), observed)))
    hits = 0
    for count in _batches(reps, pooled.size):
        order = np.argsort(rng.random((count, pooled.size)), axis=1)
        hits += int(
            np.sum(_at_most(differences(pooled[order[:, : new.size]].sum(axis=1)), observed))
        )
    return (1 + hits) / (1 + reps)


def permutation_smallest_p(new_size: int, old_size: int, reps: int) -> float:
    """The smallest p-value :func:`permutation_test` can return for samples of these sizes.

    Exact test: ``1 / C(n + m, n)`` (only the observed labelling is as extreme). Monte Carlo
    test: ``1 / (1 + reps)``. As for :func:`paired_sign_flip_smallest_p`, a test whose smallest
    p-value is above the significance level can never reject.
    """
    if new_size < 1 or old_size < 1:
        raise ValueError(f"both samples need at least one value, got {new_size} and {old_size}")
    if _enumerable(new_size, old_size, reps):
        return 1.0 / math.comb(new_size + old_size, new_size)
    return 1.0 / (1 + reps)


def holm(p_values: np.ndarray) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values: reject where adjusted <= alpha (FWER <= alpha)."""
    p = np.asarray(p_values, dtype=np.float64)
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, np.maximum.accumulate(p[order] * (m - np.arange(m))))
    adjusted = np.empty(m)
    adjusted[order] = scaled
    return adjusted
