"""Aggregate every method entry's per-run metrics into the leaderboard (rliable's protocol).

For each method entry and metric, over its ``seeds x tasks`` runs: the mean and its standard
error, the interquartile mean (IQM) with two 95% bootstrap confidence intervals -- the stratified
bootstrap over seeds (runs resampled within each task: "rerun these tasks with new seeds") and the
task bootstrap (tasks resampled, then runs within them: "and draw other test tasks") -- and the
probability of improvement over the spec's baseline entry (``report.baseline``, ``primitives`` by
default) with both intervals. Two P's, exactly as computed:

* ``P(X > Y)`` (rliable's): per test task, the fraction of all (run of X, run of Y) pairs in which
  X's run scores higher (ties count one half), averaged over the tasks;
* paired ``P``: the fraction of (seed, task) pairs in which X's run scores higher than Y's run of
  the *same* seed and task (ties one half). Runs of one spec share their random numbers (the
  learner's seed on a (seed, task) is the same for every method entry, runner/seeding.py), so the
  pair differs by the method alone. Its intervals resample the pairs as units.

With reference returns (:mod:`opt_suite.report.normalise`) the return metrics are aggregated a
second time on the per-task normalised scale (IQM and both intervals, P is scale-free). See
:mod:`opt_suite.stats` for the definitions.

Every entry with paired runs also gets the suite's one verdict against the baseline on ``auc``
(:func:`opt_suite.report.verdicts.entry_verdict`: better / equivalent / worse / inconclusive, the
seed as the resampling unit, the spec's equivalence margin, Bonferroni over the report's entries).
A spec with positive controls adds the validity check (:mod:`opt_suite.report.validity`): each
control against the cloned option, in the same Bonferroni family, and a loud warning when none is
better.

Bootstrap draws are seeded from the method entry's and metric's names, so an entry's intervals do
not change when another entry is added to the spec (its verdict's level does: the family grows).
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from opt_suite import stats
from opt_suite.report.metrics import HIGHER_IS_BETTER, METRICS, RETURN_METRICS, MethodMetrics
from opt_suite.report.normalise import References, normalised_scores
from opt_suite.report.validity import Validity, check_validity, validity_pairs
from opt_suite.report.verdicts import Design, entry_verdict
from opt_suite.verdict import Margins, Verdict

__all__ = ["Estimate", "Improvement", "Leaderboard", "LeaderboardRow", "build_leaderboard"]

REPORT_SEED = 20200707  # fixed: reports are deterministic functions of the results
CONFIDENCE = 0.95


@dataclasses.dataclass(frozen=True)
class Estimate:
    """Aggregate of one metric over a method entry's runs."""

    mean: float
    se: float
    iqm: float
    ci_low: float  # stratified bootstrap over seeds (within tasks)
    ci_high: float
    task_ci_low: float  # task bootstrap (tasks, then seeds within them)
    task_ci_high: float


@dataclasses.dataclass(frozen=True)
class Improvement:
    """P(a run of this entry beats a run of the baseline), with its seed and task intervals.

    What "a run beats a run" pairs up depends on the variant (see the module docstring): every
    pair of runs on the same task (``LeaderboardRow.improvement``), or the runs of the same seed
    and task (``LeaderboardRow.paired``).
    """

    probability: float
    ci_low: float
    ci_high: float
    task_ci_low: float
    task_ci_high: float


@dataclasses.dataclass(frozen=True)
class LeaderboardRow:
    """One method entry's aggregates, per metric."""

    method: str
    runs: int
    estimates: Mapping[str, Estimate]
    improvement: Mapping[str, Improvement]  # empty for the baseline itself or without a baseline
    #: the paired P over (seed, task); empty where ``improvement`` is, or seeds differ.
    paired: Mapping[str, Improvement] = dataclasses.field(default_factory=dict)
    #: estimates of the return metrics on the normalised scale; empty without references.
    normalised: Mapping[str, Estimate] = dataclasses.field(default_factory=dict)
    #: the one verdict rule's, against the baseline on ``auc``; None where ``paired`` is empty.
    verdict: Verdict | None = None


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
    #: what 0 and 1 of the normalised scores are (None: no normalised scores).
    normalisation: str | None = None
    #: the test tasks the normalised scores cover (those where every seed's pair has a scale).
    normalised_tasks: tuple[str, ...] = ()
    #: (pairs, of pairs): the (seed, task) pairs in the normalised aggregates, of all the run's.
    normalised_pairs: tuple[int, int] = (0, 0)
    #: how the thresholds of episodes_to_threshold were chosen, for the tables.
    threshold_rule: str = ""
    #: what a frame budget counts: "env steps", or "emulator frames" on Atari.
    frame_unit: str = "env steps"
    #: section key -> its collected data (:mod:`opt_suite.report.sections`): the sections'
    #: columns of the main table and keys of leaderboard.json, e.g. the zero-shot return.
    sections: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    #: the test tasks were drawn per seed: a "task" column is each seed's k-th draw (task slot).
    tasks_per_seed: bool = False
    #: the equivalence margins the spec declared (``report.equivalence_*``).
    margins: Margins = Margins()
    #: the positive controls against the cloned option (None: the spec declares no check).
    validity: Validity | None = None

    @property
    def verdicts(self) -> int:
        """How many verdicts the report gives (one Bonferroni family), the validity check's too."""
        checked = 0 if self.validity is None else len(self.validity.verdicts)
        return sum(row.verdict is not None for row in self.rows) + checked


def rng_for(*names: str) -> np.random.Generator:
    """A generator seeded by :data:`REPORT_SEED` and the given names (stable across runs)."""
    return np.random.default_rng([REPORT_SEED, *(zlib.crc32(n.encode()) for n in names)])


def oriented(metric: str, scores: np.ndarray) -> np.ndarray:
    """Scores turned so that higher is better (negated where the metric is lower-is-better)."""
    return scores if HIGHER_IS_BETTER[metric] else -scores


def estimate(scores: np.ndarray, reps: int, rng: np.random.Generator) -> Estimate:
    """Mean, s.e., IQM and the IQM's seed and task bootstrap CIs of a ``[seeds, tasks]`` matrix."""
    alpha = 1 - CONFIDENCE
    low, high = stats.stratified_bootstrap_ci(scores, stats.iqm, reps, rng, alpha)
    task_low, task_high = stats.task_bootstrap_ci(scores, stats.iqm, reps, rng, alpha)
    return Estimate(
        mean=float(stats.mean(scores)),
        se=float(stats.standard_error(scores)),
        iqm=float(stats.iqm(scores)),
        ci_low=low,
        ci_high=high,
        task_ci_low=task_low,
        task_ci_high=task_high,
    )


def improvement(
    metric: str,
    x: np.ndarray,
    y: np.ndarray,
    reps: int,
    rng: np.random.Generator,
    paired: bool = False,
) -> Improvement:
    """P(improvement) of runs ``x`` over ``y`` (both ``[seeds, tasks]``) on ``metric``.

    ``paired``: the paired P (``x[s, t]`` against ``y[s, t]`` only) instead of rliable's.
    """
    x, y = oriented(metric, x), oriented(metric, y)
    alpha = 1 - CONFIDENCE
    point, interval = (
        (stats.paired_probability_of_improvement, stats.paired_probability_of_improvement_ci)
        if paired
        else (stats.probability_of_improvement, stats.probability_of_improvement_ci)
    )
    low, high = interval(x, y, reps, rng, alpha)
    task_low, task_high = interval(x, y, reps, rng, alpha, over_tasks=True)
    return Improvement(float(point(x, y)), low, high, task_low, task_high)


def normalised_estimates(
    name: str, m: MethodMetrics, references: References, reps: int
) -> tuple[dict[str, Estimate], tuple[str, ...], tuple[int, int]]:
    """Estimates of ``m``'s return metrics on the normalised scale and what they cover.

    Returns:
        The estimates, the tasks they cover and (pairs, of pairs) they keep; no estimates when
        no task has a scale on every seed.
    """
    scores = normalised_scores(m.seeds, m.tasks, m.values, references, RETURN_METRICS)
    if scores is None:
        return {}, (), (0, m.values["auc"].size)
    out = {
        k: estimate(scores.values[k], reps, rng_for(name, k, "normalised")) for k in RETURN_METRICS
    }
    return out, tuple(str(t) for t in scores.tasks), (scores.pairs, scores.total_pairs)


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
    references: References | None = None,
    threshold_rule: str = "",
    frame_unit: str = "env steps",
    sections: Mapping[str, Any] | None = None,
    tasks_per_seed: bool = False,
    margins: Margins | None = None,
    positive_controls: tuple[str, ...] = (),
    clone: str | None = None,
) -> Leaderboard:
    """Aggregate per-run metrics (method -> :class:`MethodMetrics`) into a :class:`Leaderboard`.

    A ``baseline`` that is None or not among the entries gives no probabilities of improvement
    and no verdicts; ``references`` (None: none) add the normalised estimates; ``margins`` (None:
    the defaults) are the verdicts' equivalence margins; ``sections`` (section key -> data) are
    carried to the tables. ``positive_controls`` and ``clone``
    (``report.positive_controls``, ``report.clone``) add the validity check; its caveat, when no
    control beats the clone, is appended to ``warnings``.
    """
    margins = margins or Margins()
    base = metrics.get(baseline) if baseline is not None else None
    paired_entries = [
        name
        for name, m in metrics.items()
        if base is not None and name != baseline and (m.seeds, m.tasks) == (base.seeds, base.tasks)
    ]
    judged, _ = validity_pairs(metrics, positive_controls, clone)
    comparisons = len(paired_entries) + len(judged)
    design = Design(references, margins, tasks_per_seed, comparisons, bootstrap)
    validity = None
    if clone is not None and positive_controls:
        validity = check_validity(metrics, positive_controls, clone, design, rng_for)
        caveat = validity.caveat()
        warnings = warnings if caveat is None else (*warnings, caveat)
    rows = []
    covered: tuple[str, ...] = ()
    pairs = (0, 0)
    for name, m in metrics.items():
        estimates = {k: estimate(m.values[k], bootstrap, rng_for(name, k)) for k in METRICS}
        improvements, paired = {}, {}
        if base is not None and name != baseline:
            improvements = {
                k: improvement(k, m.values[k], base.values[k], bootstrap, rng_for(name, k, "poi"))
                for k in METRICS
            }
            if m.seeds == base.seeds and m.tasks == base.tasks:  # every run has its pair
                paired = {
                    k: improvement(
                        k, m.values[k], base.values[k], bootstrap, rng_for(name, k, "paired"), True
                    )
                    for k in METRICS
                }
        normalised: dict[str, Estimate] = {}
        if references is not None:
            normalised, covered, pairs = normalised_estimates(name, m, references, bootstrap)
        decided = None
        if base is not None and name in paired_entries:
            decided = entry_verdict(
                "auc",
                m.seeds,
                m.tasks,
                m.values,
                base.values,
                design,
                rng_for(name, "auc", "verdict"),
            )
        rows.append(
            LeaderboardRow(
                name, m.values["auc"].size, estimates, improvements, paired, normalised, decided
            )
        )
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
        normalisation=None if references is None or not covered else references.description,
        normalised_tasks=covered,
        normalised_pairs=pairs,
        threshold_rule=threshold_rule,
        frame_unit=frame_unit,
        sections=dict(sections or {}),
        tasks_per_seed=tasks_per_seed,
        margins=margins,
        validity=validity,
    )
