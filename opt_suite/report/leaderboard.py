"""Aggregate every method entry's per-run metrics into the leaderboard (rliable's protocol).

For each method entry and metric, over its ``seeds x tasks`` runs: the mean and its standard
error, the interquartile mean (IQM) with a 95% stratified-bootstrap confidence interval, and the
probability of improvement over the spec's baseline entry (``report.baseline``, ``primitives`` by
default) with its own bootstrap interval. See :mod:`opt_suite.stats` for the definitions.

Bootstrap draws are seeded from the method entry's and metric's names, so an entry's intervals do
not change when another entry is added to the spec.
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Mapping

import numpy as np

from opt_suite import stats
from opt_suite.report.metrics import HIGHER_IS_BETTER, METRICS, MethodMetrics
from opt_suite.report.zero_shot import ZeroShot

__all__ = ["Estimate", "Improvement", "Leaderboard", "LeaderboardRow", "build_leaderboard"]

REPORT_SEED = 20200707  # fixed: reports are deterministic functions of the results
CONFIDENCE = 0.95


@dataclasses.dataclass(frozen=True)
class Estimate:
    """Aggregate of one metric over a method entry's runs."""

    mean: float
    se: float
    iqm: float
    ci_low: float
    ci_high: float


@dataclasses.dataclass(frozen=True)
class Improvement:
    """P(a run of this entry beats a run of the baseline on the same task), with its CI."""

    probability: float
    ci_low: float
    ci_high: float


@dataclasses.dataclass(frozen=True)
class LeaderboardRow:
    """One method entry's aggregates, per metric."""

    method: str
    runs: int
    estimates: Mapping[str, Estimate]
    improvement: Mapping[str, Improvement]  # empty for the baseline itself or without a baseline


@dataclasses.dataclass(frozen=True)
class Leaderboard:
    """Everything the leaderboard files show; rows sorted best first by the primary metric's IQM."""

    spec_name: str
    spec_hash: str
    seeds: int
    tasks: int
    episodes: int
    baseline: str | None
    bootstrap: int
    thresholds: Mapping[str, float]
    rows: tuple[LeaderboardRow, ...]
    metrics: tuple[str, ...] = METRICS
    primary: str = "auc"
    final_fraction: float = 0.1
    confidence: float = CONFIDENCE
    warnings: tuple[str, ...] = ()  # see opt_suite.report.caveats
    #: evaluation.frames when the budget was frames: ``episodes`` then counts frame-axis points.
    frame_budget: int | None = None
    #: Each entry's zero-shot return (the learner's untrained policy over its options).
    zero_shot: Mapping[str, ZeroShot] = dataclasses.field(default_factory=dict)


def rng_for(*names: str) -> np.random.Generator:
    """A generator seeded by :data:`REPORT_SEED` and the given names (stable across runs)."""
    return np.random.default_rng([REPORT_SEED, *(zlib.crc32(n.encode()) for n in names)])


def oriented(metric: str, scores: np.ndarray) -> np.ndarray:
    """Scores turned so that higher is better (negated where the metric is lower-is-better)."""
    return scores if HIGHER_IS_BETTER[metric] else -scores


def estimate(scores: np.ndarray, reps: int, rng: np.random.Generator) -> Estimate:
    """Mean, s.e., IQM and the IQM's stratified-bootstrap CI of a ``[seeds, tasks]`` matrix."""
    low, high = stats.stratified_bootstrap_ci(scores, stats.iqm, reps, rng, 1 - CONFIDENCE)
    return Estimate(
        mean=float(stats.mean(scores)),
        se=float(stats.standard_error(scores)),
        iqm=float(stats.iqm(scores)),
        ci_low=low,
        ci_high=high,
    )


def improvement(
    metric: str, x: np.ndarray, y: np.ndarray, reps: int, rng: np.random.Generator
) -> Improvement:
    """P(improvement) of runs ``x`` over ``y`` (both ``[seeds, tasks]``) on ``metric``."""
    x, y = oriented(metric, x), oriented(metric, y)
    low, high = stats.probability_of_improvement_ci(x, y, reps, rng, 1 - CONFIDENCE)
    return Improvement(float(stats.probability_of_improvement(x, y)), low, high)


def build_leaderboard(
    metrics: Mapping[str, MethodMetrics],
    *,
    spec_name: str,
    spec_hash: str,
    episodes: int,
    baseline: str | None,
    bootstrap: int,
    thresholds: Mapping[str, float],
    final_fraction: float = 0.1,
    warnings: tuple[str, ...] = (),
    frame_budget: int | None = None,
    zero_shot: Mapping[str, ZeroShot] | None = None,
) -> Leaderboard:
    """Aggregate per-run metrics (method -> :class:`MethodMetrics`) into a :class:`Leaderboard`.

    A ``baseline`` that is None or not among the entries gives no probabilities of improvement.
    """
    base = metrics.get(baseline) if baseline is not None else None
    rows = []
    for name, m in metrics.items():
        estimates = {k: estimate(m.values[k], bootstrap, rng_for(name, k)) for k in METRICS}
        improvements = {}
        if base is not None and name != baseline:
            improvements = {
                k: improvement(k, m.values[k], base.values[k], bootstrap, rng_for(name, k, "poi"))
                for k in METRICS
            }
        rows.append(LeaderboardRow(name, m.values["auc"].size, estimates, improvements))
    first = next(iter(metrics.values()))
    primary = "auc"
    sign = 1.0 if HIGHER_IS_BETTER[primary] else -1.0
    rows.sort(key=lambda r: -sign * r.estimates[primary].iqm)
    return Leaderboard(
        spec_name=spec_name,
        spec_hash=spec_hash,
        seeds=len(first.seeds),
        tasks=len(first.tasks),
        episodes=episodes,
        baseline=baseline if base is not None else None,
        bootstrap=bootstrap,
        thresholds=dict(thresholds),
        rows=tuple(rows),
        primary=primary,
        final_fraction=final_fraction,
        warnings=tuple(warnings),
        frame_budget=frame_budget,
        zero_shot=dict(zero_shot or {}),
    )
