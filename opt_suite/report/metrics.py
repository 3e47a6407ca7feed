"""Per-run metrics: one number per (method entry, seed, test task) learning curve.

* ``auc`` -- the mean return over all evaluation episodes: the area under the learning curve
  (return vs episode), divided by the number of episodes.
* ``final_return`` -- the mean return of the last ``report.final_fraction`` of the episodes (at
  least one episode; 10 of 100 by default).
* ``episodes_to_threshold`` -- the first episode (1-based) ``e >= w`` at which the mean return of
  episodes ``e - w + 1 .. e`` (a trailing window of ``w = 10`` episodes, or all of them when a run
  has fewer) reaches the threshold. A run that never reaches it is *censored*: it gets the number of
  episodes + 1. Lower is better. With a budget in frames the curve's points are evenly spaced
  frames, and the value is in *frames*: the frame at which the window first reaches the threshold
  (``budget + step`` when never reached, ``step`` being the frames between two points).
* ``jump_start`` -- the mean return over the first :data:`JUMP_START_FRACTION` (10%) of the
  budget's episodes (or frame-axis points): where the options put the learner before it has learned.
* ``improvement`` -- the mean return over the rest of the budget minus ``jump_start``: what the
  learner gained after the jump start. Together they split ``auc`` exactly:
  ``auc = f * jump_start + (1 - f) * (jump_start + improvement)``, ``f`` the fraction of points in
  the jump start.

The threshold is ``report.threshold`` from the spec, the same for every task. When it is null and
the run has reference returns (:mod:`opt_suite.report.normalise`), each test task gets
``random + fraction * (expert - random)`` (mean over seeds; a fixed fraction of the normalised
score, which no method entry sets). Otherwise each test task gets its own: 90% of the way from
the worst to the best method's mean ``final_return`` on that task (means over seeds), so
"reaching the threshold" means "learning nearly as well as the best method did on this task"; it
depends on the method entries compared (the leaderboard says so), and is stored in the CI
baseline so that a later run is measured against the same thresholds.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from opt_suite.report.episodes import LearningCurves, ReportDataError

__all__ = [
    "DEFAULT_THRESHOLD_FRACTION",
    "HIGHER_IS_BETTER",
    "JUMP_START_FRACTION",
    "METRICS",
    "SMOOTHING_WINDOW",
    "MethodMetrics",
    "auc",
    "default_thresholds",
    "seed_task_key",
    "episodes_to_threshold",
    "final_return",
    "improvement",
    "jump_start",
    "run_metrics",
]

METRICS = ("auc", "final_return", "episodes_to_threshold", "jump_start", "improvement")
HIGHER_IS_BETTER = {
    "auc": True,
    "final_return": True,
    "episodes_to_threshold": False,
    "jump_start": True,
    "improvement": True,
}
#: Metrics measured in return units (the ones a normalisation applies to).
RETURN_METRICS = ("auc", "final_return", "jump_start", "improvement")
SMOOTHING_WINDOW = 10
DEFAULT_THRESHOLD_FRACTION = 0.9
#: The share of the budget the jump start averages (the issue's "first 10% of the budget").
JUMP_START_FRACTION = 0.1


def auc(returns: np.ndarray) -> np.ndarray:
    """Mean return over the episodes (last axis)."""
    return np.mean(returns, axis=-1)


def final_episode_count(episodes: int, fraction: float) -> int:
    """How many last episodes ``final_return`` averages: ``ceil(fraction * episodes)``, >= 1."""
    # The small slack keeps 0.1 * 30 (= 3.0000000000000004 in floating point) from becoming 4.
    return max(1, min(episodes, math.ceil(fraction * episodes - 1e-9)))


def final_return(returns: np.ndarray, fraction: float) -> np.ndarray:
    """Mean return of the last ``fraction`` of the episodes (last axis)."""
    count = final_episode_count(returns.shape[-1], fraction)
    return np.mean(returns[..., -count:], axis=-1)


def jump_start_count(points: int) -> int:
    """How many first points :func:`jump_start` averages: ``ceil(0.1 * points)``, >= 1.

    With a single point the jump start is that point and there is nothing after it.
    """
    return final_episode_count(points, JUMP_START_FRACTION)


def jump_start(returns: np.ndarray) -> np.ndarray:
    """Mean return of the first :data:`JUMP_START_FRACTION` of the points (last axis)."""
    return np.mean(returns[..., : jump_start_count(returns.shape[-1])], axis=-1)


def improvement(returns: np.ndarray) -> np.ndarray:
    """Mean return after the jump start minus :func:`jump_start` (0 with a single point)."""
    k = jump_start_count(returns.shape[-1])
    if k >= returns.shape[-1]:
        return np.zeros(returns.shape[:-1])
    return np.mean(returns[..., k:], axis=-1) - jump_start(returns)


def episodes_to_threshold(
    returns: np.ndarray, threshold: np.ndarray | float, window: int = SMOOTHING_WINDOW
) -> np.ndarray:
    """First 1-based episode whose trailing ``window``-episode mean return reaches ``threshold``.

    Args:
        returns: ``[..., episodes]``.
        threshold: broadcastable against ``returns[..., 0]`` (e.g. one threshold per task).
        window: smoothing window; shortened to the number of episodes when there are fewer.

    Returns:
        ``[...]`` integers in ``window .. episodes``, or ``episodes + 1`` where never reached.
    """
    episodes = returns.shape[-1]
    w = min(window, episodes)
    cumulative = np.cumsum(returns, axis=-1)
    padded = np.concatenate([np.zeros((*returns.shape[:-1], 1)), cumulative], axis=-1)
    smoothed = (padded[..., w:] - padded[..., :-w]) / w  # smoothed[..., j] ends at episode j + w
    reached = smoothed >= np.asarray(threshold, dtype=np.float64)[..., None]
    first = np.argmax(reached, axis=-1) + w
    return np.where(np.any(reached, axis=-1), first, episodes + 1)


def default_thresholds(
    final_returns: Mapping[str, np.ndarray], fraction: float = DEFAULT_THRESHOLD_FRACTION
) -> np.ndarray:
    """Per-task ``worst + fraction * (best - worst)`` over the methods' mean final returns.

    Args:
        final_returns: method -> ``[seeds, tasks]`` final returns, all on the same tasks.
        fraction: how far from the worst to the best method.
    """
    per_method = np.stack([np.mean(v, axis=0) for v in final_returns.values()])  # [methods, tasks]
    worst, best = per_method.min(axis=0), per_method.max(axis=0)
    return worst + fraction * (best - worst)


@dataclasses.dataclass(frozen=True, eq=False)
class MethodMetrics:
    """A method entry's per-run metrics: ``values[metric][s, t]`` of ``seeds[s]``, ``tasks[t]``."""

    method: str
    seeds: tuple[int, ...]
    tasks: tuple[Any, ...]
    values: Mapping[str, np.ndarray]


def resolve_thresholds(
    curves: Mapping[str, LearningCurves],
    threshold: float | None,
    final_fraction: float,
    per_seed: bool = False,
) -> dict[Any, float]:
    """Task -> episodes_to_threshold threshold: the spec's, or :func:`default_thresholds`.

    ``per_seed`` (test tasks drawn per seed): :func:`default_thresholds` per (seed, task), keyed by
    :func:`seed_task_key` -- task k of one seed is not task k of another, so their final returns
    are not pooled -- when every entry ran the same seeds (else per task, as without it).
    """
    tasks = next(iter(curves.values())).tasks
    for c in curves.values():
        if c.tasks != tasks:
            raise ReportDataError(
                f"method {c.method!r} ran on tasks {list(c.tasks)}, others on {list(tasks)}:"
                " methods must be evaluated on the same test tasks to be compared"
            )
    if threshold is not None:
        return {t: float(threshold) for t in tasks}
    finals = {name: final_return(c.returns, final_fraction) for name, c in curves.items()}
    seeds = next(iter(curves.values())).seeds
    if per_seed and all(c.seeds == seeds for c in curves.values()):
        # default_thresholds pools axis 0 (seeds); one "seed" at a time keeps each pair apart
        return {
            seed_task_key(seed, t): float(level)
            for i, seed in enumerate(seeds)
            for t, level in zip(
                tasks, default_thresholds({n: f[i : i + 1] for n, f in finals.items()}), strict=True
            )
        }
    return dict(zip(tasks, default_thresholds(finals).tolist(), strict=True))


def seed_task_key(seed: Any, task: Any) -> str:
    """The threshold key of one (seed, task): thresholds of test tasks drawn per seed.

    A threshold keyed by the task alone holds for every seed; one keyed ``"<seed>/<task>"`` for
    that seed only (a per-seed draw's task k is a different task on every seed).
    """
    return f"{seed}/{task}"


def _threshold_grid(thresholds: Mapping[Any, float], seeds: Any, tasks: Any) -> np.ndarray:
    """``[seeds, tasks]`` thresholds: a (seed, task)'s own key first, else its task's."""
    grid = np.empty((len(seeds), len(tasks)))
    missing = []
    for i, seed in enumerate(seeds):
        for j, task in enumerate(tasks):
            value = thresholds.get(seed_task_key(seed, task), thresholds.get(task))
            if value is None:
                missing.append(task)
                continue
            grid[i, j] = value
    if missing:
        found = sorted(set(missing), key=str)
        raise ReportDataError(f"no episodes_to_threshold threshold for tasks {found}")
    return grid


def run_metrics(
    curves: Mapping[str, LearningCurves],
    final_fraction: float,
    thresholds: Mapping[Any, float],
    window: int = SMOOTHING_WINDOW,
    frame_budget: int | None = None,
) -> dict[str, MethodMetrics]:
    """Every metric of every run; ``thresholds`` maps each task to its threshold.

    ``frame_budget``: the curves are points of the frame axis (see
    :func:`opt_suite.report.episodes.learning_curves`), and ``episodes_to_threshold`` is given in
    frames (point ``k``, 1-based, ends at frame ``k * budget / points``).
    """
    out = {}
    for name, c in curves.items():
        grid = _threshold_grid(thresholds, c.seeds, c.tasks)
        reached = episodes_to_threshold(c.returns, grid, window).astype(np.float64)
        if frame_budget is not None:
            reached = reached * (frame_budget / c.returns.shape[-1])
        values = {
            "auc": auc(c.returns),
            "final_return": final_return(c.returns, final_fraction),
            "episodes_to_threshold": reached,
            "jump_start": jump_start(c.returns),
            "improvement": improvement(c.returns),
        }
        out[name] = MethodMetrics(name, c.seeds, c.tasks, values)
    return out
