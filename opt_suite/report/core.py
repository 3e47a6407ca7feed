"""The statistics core: a run's per-run scores in, each method entry's estimates out, in one call.

rliable-shaped (``get_interval_estimates`` over a ``{method: [runs, tasks]}`` dict) on the suite's
own per-run file, ``runs.json`` (:mod:`opt_suite.report.baseline`)::

    from opt_suite.report.core import aggregate
    found = aggregate("runs/quick/runs.json", metric="auc")
    found["primitives"].iqm, found["primitives"].ci_low, found["primitives"].ci_high

No statistic is new here: mean, s.e., IQM and its two intervals are the leaderboard's own
:func:`opt_suite.report.leaderboard.estimate`, drawn from the same seeded generator, so they are
the numbers ``leaderboard.json`` holds for that run; the median and the optimality gap are
:mod:`opt_suite.stats`'s, with the stratified bootstrap over seeds as their interval (runs
resampled within each task, as the IQM's ``ci_*``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from opt_suite import stats
from opt_suite.report.baseline import BaselineError, baseline_from_document, load_baseline
from opt_suite.report.leaderboard import CONFIDENCE, Estimate, estimate, rng_for
from opt_suite.report.metrics import HIGHER_IS_BETTER

__all__ = ["Estimates", "aggregate"]

#: The leaderboard's default number of bootstrap resamples (``report.bootstrap``).
DEFAULT_BOOTSTRAP = 2000


@dataclasses.dataclass(frozen=True)
class Estimates:
    """One method entry's aggregates of one metric over its ``seeds x tasks`` runs.

    Attributes:
      method, metric: what was aggregated.
      runs: seeds x tasks.
      leaderboard: mean, s.e., IQM with its seed (``ci_*``) and task (``task_ci_*``) intervals,
        the leaderboard's :class:`~opt_suite.report.leaderboard.Estimate`.
      median, median_ci: the median and its seed-bootstrap interval.
      optimality_gap, optimality_gap_ci: the mean shortfall below ``gap_target`` and its
        seed-bootstrap interval (None: no target given).
    """

    method: str
    metric: str
    runs: int
    leaderboard: Estimate
    median: float
    median_ci: tuple[float, float]
    optimality_gap: float | None = None
    optimality_gap_ci: tuple[float, float] | None = None

    @property
    def mean(self) -> float:
        """The mean over the runs."""
        return self.leaderboard.mean

    @property
    def iqm(self) -> float:
        """The interquartile mean."""
        return self.leaderboard.iqm

    @property
    def ci_low(self) -> float:
        """The IQM's seed-bootstrap interval, low end."""
        return self.leaderboard.ci_low

    @property
    def ci_high(self) -> float:
        """The IQM's seed-bootstrap interval, high end."""
        return self.leaderboard.ci_high


def aggregate(
    runs: str | Path | Mapping[str, Any],
    metric: str = "auc",
    *,
    methods: Sequence[str] | None = None,
    bootstrap: int = DEFAULT_BOOTSTRAP,
    gap_target: float | None = None,
) -> dict[str, Estimates]:
    """Each method entry's :class:`Estimates` of ``metric``, in the file's order.

    Args:
      runs: a ``runs.json`` path, or its document already read.
      metric: one of the file's metrics (``auc``, ``final_return``, ...).
      methods: the entries to aggregate (None: all).
      bootstrap: resamples per interval; the spec's ``report.bootstrap`` reproduces its
        leaderboard's intervals exactly (2000 unless the spec says otherwise).
      gap_target: the score counted as solved, for the optimality gap (None: no gap). Only for a
        metric where higher is better.

    Raises:
      BaselineError: the file is missing or malformed, or lacks ``metric`` or a named entry (the
        message names the file and what was expected).
    """
    if isinstance(runs, Mapping):
        source, found = "runs.json document", baseline_from_document(dict(runs), "runs.json")
    else:
        source, found = str(runs), load_baseline(runs)
    names = list(found.methods) if methods is None else list(methods)
    missing = [name for name in names if name not in found.methods]
    if missing:
        raise BaselineError(
            f"{source}: no method entry {', '.join(map(repr, missing))}; it has"
            f" {', '.join(map(repr, found.methods))}"
        )
    if gap_target is not None and not HIGHER_IS_BETTER.get(metric, True):
        raise BaselineError(
            f"{source}: an optimality gap needs a higher-is-better metric, not {metric!r}"
        )
    return {
        name: _estimates(source, name, found.methods[name].metrics, metric, bootstrap, gap_target)
        for name in names
    }


def _estimates(
    source: str,
    name: str,
    metrics: Mapping[str, np.ndarray],
    metric: str,
    bootstrap: int,
    gap_target: float | None,
) -> Estimates:
    if metric not in metrics:
        raise BaselineError(
            f"{source}: methods.{name}.metrics has no {metric!r}; expected one of"
            f" {', '.join(map(repr, metrics))}"
        )
    scores = np.asarray(metrics[metric], np.float64)
    alpha = 1 - CONFIDENCE
    median_ci = stats.stratified_bootstrap_ci(
        scores, stats.median, bootstrap, rng_for(name, metric, "median"), alpha
    )
    gap = gap_ci = None
    if gap_target is not None:
        target = float(gap_target)

        def shortfall(x: np.ndarray) -> np.ndarray:
            return stats.optimality_gap(x, target)

        gap = float(shortfall(scores))
        gap_ci = stats.stratified_bootstrap_ci(
            scores, shortfall, bootstrap, rng_for(name, metric, "optimality_gap"), alpha
        )
    return Estimates(
        method=name,
        metric=metric,
        runs=int(scores.size),
        # The leaderboard's own generator for (entry, metric): the same intervals, bit for bit.
        leaderboard=estimate(scores, bootstrap, rng_for(name, metric)),
        median=float(stats.median(scores)),
        median_ci=median_ci,
        optimality_gap=gap,
        optimality_gap_ci=gap_ci,
    )
