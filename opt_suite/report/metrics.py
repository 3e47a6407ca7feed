"""Per-run metrics: one number per (method entry, seed, test task) learning curve.

* ``auc`` -- the mean return over all evaluation episodes: the area under the learning curve
  (return vs episode), divided by the number of episodes.
* ``final_return`` -- the mean return of the last ``report.final_fraction`` of the episodes (at
  least one episode; 10 of 100 by default).
* ``episodes_to_threshold`` -- the first episode (1-based) ``e >= w`` at which the mean return of
  episodes ``e - w + 1 .. e`` (a trailing window of ``w = 10`` episodes, or all of them when a run
  has fewer) reaches the threshold. A run that never reaches it is *censored*: it gets the number of
  episodes + 1. Lower is better.

The threshold is ``report.threshold`` from the spec, the same for every task. When it is null, each
test task gets its own: 90% of the way from the worst to the best method's mean ``final_return``
on that task (means over seeds), so "reaching the threshold" means "learning nearly as well as the
best method did on this task"; it depends on the method entries compared, and is stored in the CI
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
    "METRICS",
    "SMOOTHING_WINDOW",
    "MethodMetrics",
    "auc",
    "default_thresholds",
    "episodes_to_threshold",
    "final_return",
    "run_metrics",
]

METRICS = ("auc", "final_return", "episodes_to_threshold")
HIGHER_IS_BETTER = {"auc": True, "final_return": True, "episodes_to_threshold": False}
SMOOTHING_WINDOW = 10
DEFAULT_THRESHOLD_FRACTION = 0.9


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
    curves: Mapping[str, LearningCurves], threshold: float | None, final_fraction: float
) -> dict[Any, float]:
    """Task -> episodes_to_threshold threshold: the spec's, or :func:`default_thresholds`."""
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
    return dict(zip(tasks, default_thresholds(finals).tolist(), strict=True))


def run_metrics(
    curves: Mapping[str, LearningCurves],
    final_fraction: float,
    thresholds: Mapping[Any, float],
    window: int = SMOOTHING_WINDOW,
) -> dict[str, MethodMetrics]:
    """Every metric of every run; ``thresholds`` maps each task to its threshold."""
    out = {}
    for name, c in curves.items():
        missing = [t for t in c.tasks if t not in thresholds]
        if missing:
            raise ReportDataError(f"no episodes_to_threshold threshold for tasks {missing}")
        per_task = np.array([thresholds[t] for t in c.tasks])
        values = {
            "auc": auc(c.returns),
            "final_return": final_return(c.returns, final_fraction),
            "episodes_to_threshold": episodes_to_threshold(c.returns, per_task, window).astype(
                np.float64
            ),
        }
        out[name] = MethodMetrics(name, c.seeds, c.tasks, values)
    return out
