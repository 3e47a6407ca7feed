"""The results gate's own error rates: how often it fails when nothing changed, and when it catches.

A gate that trips without a real regression is a gate users switch off; one that misses a real
regression is worse. Both rates are measured here with the gate itself (:func:`compare_runs`),
never a re-implementation of its test:

Only for test tasks shared by every seed: with ``tasks.test_per_seed`` a fresh seed draws other
tasks, which no relabelling makes the baseline's (refused, as is a run whose shared draw differs
from the baseline's, :mod:`opt_suite.report.task_draw`).

- **false-alarm rate**: a run of the same spec whose only change is the random streams. The
  baseline's seeds ``s_1..s_k`` are compared with ``k`` *other* seeds of one run of the spec
  (same code, same tasks, other demonstrations, options and learner streams), relabelled as the
  baseline's seeds so that the gate pairs them by (seed position, task). Each group of ``k`` fresh
  seeds is one rerun; the rate is the fraction of reruns in which any method entry is flagged.
  Holm's correction promises at most ``alpha``.
- **power**: the same reruns with one method entry made worse by a fraction of each task's
  metric range (the spread of the baseline's values of that task over every method entry and
  seed), injected into the baseline's side of the pairs (``run - (baseline + delta)`` is the
  paired difference the gate tests, exactly as if the run had lost ``delta``). The rate is the
  fraction of (rerun, method entry) cases in which that entry is flagged.

Both are measured with the test ``compare`` runs with the same ``unit`` (``--unit``): the (seed,
task) pair or the seed (:mod:`opt_suite.report.gate`). With the seed as the unit, the injected
amount is a fraction of the ranges of the baseline before injection, and the gate divides by the
ranges of the baseline it is given (after injection, which can only widen a range): the measured
power is that of a degradation of at most the stated fraction, never more.

With the pool unit (``--unit pool``: a baseline of many seeds, the run's seeds tested against the
baseline's seeds it does not hold) a rerun is a group of fresh seeds the size of the run CI makes
(the spec's ``evaluation.seeds``, ``run_size``), not of the baseline, and it is compared with the
whole baseline as it is: nothing is paired, so nothing is relabelled. The injected loss goes into
every seed of the entry in the baseline, as for the other units.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np

from opt_suite.report.baseline import Baseline, BaselineRuns
from opt_suite.report.episodes import EpisodeTable
from opt_suite.report.gate import CompareError, Comparison, compare_runs, task_ranges
from opt_suite.report.inputs import ReportInputs
from opt_suite.report.measured_rates import MeasuredRates
from opt_suite.report.metrics import HIGHER_IS_BETTER

__all__ = [
    "GateRates",
    "fresh_seed_groups",
    "gate_rates",
    "measured",
    "relabelled",
    "seeds_only",
    "task_ranges",
    "worse",
]


@dataclasses.dataclass(frozen=True)
class GateRates:
    """Measured error rates of the gate on one spec and baseline.

    Attributes:
      metric, alpha: the gate's settings.
      reruns: how many groups of fresh seeds were compared.
      false_alarms: reruns in which some method entry was flagged although nothing changed.
      flagged_methods: method entry -> reruns in which it was falsely flagged.
      power: degradation fraction -> method entry -> reruns in which its degradation was caught.
      smallest_p: the smallest unadjusted p-value seen per rerun without degradation (for people).
      unit: the test's unit, "pair", "seed" or "pool" (as ``compare --unit``).
    """

    metric: str
    alpha: float
    reruns: int
    false_alarms: int
    flagged_methods: Mapping[str, int]
    power: Mapping[float, Mapping[str, int]]
    smallest_p: tuple[float, ...]
    unit: str = "pair"

    @property
    def false_alarm_rate(self) -> float:
        """Fraction of reruns with a false alarm."""
        return self.false_alarms / self.reruns

    def power_rate(self, fraction: float) -> float:
        """Fraction of (rerun, method entry) cases whose degradation by ``fraction`` was caught."""
        caught = self.power[fraction]
        return sum(caught.values()) / (self.reruns * len(caught))


#: The multiple-comparison correction gate-rates measures (compare_runs' default, compare's too).
CORRECTION = "holm"


def measured(rates: GateRates, baseline: Baseline, date: str) -> MeasuredRates:
    """The stamp ``gate-rates --stamp`` writes into ``baseline`` (:mod:`.measured_rates`)."""
    return MeasuredRates(
        unit=rates.unit,
        metric=rates.metric,
        alpha=rates.alpha,
        correction=CORRECTION,
        reruns=rates.reruns,
        false_alarms=rates.false_alarms,
        power={str(f): rates.power_rate(f) for f in rates.power},
        power_by_entry={
            str(f): {name: n / rates.reruns for name, n in caught.items()}
            for f, caught in rates.power.items()
        },
        baseline_digest=baseline.digest,
        date=date,
    )


def fresh_seed_groups(
    baseline: Baseline, run_seeds: Sequence[int], size: int | None = None
) -> list[tuple[int, ...]]:
    """The run's seeds that are not the baseline's, in groups of ``size`` seeds.

    ``size``: the seeds of one rerun; None: as many as the baseline has (the paired units).

    Raises:
      ValueError: fewer fresh seeds than one group.
    """
    seeds = {s for runs in baseline.methods.values() for s in runs.seeds}
    if size is None:
        size = max(len(runs.seeds) for runs in baseline.methods.values())
    fresh = [s for s in sorted(run_seeds) if s not in seeds]
    groups = [tuple(fresh[i : i + size]) for i in range(0, len(fresh) - size + 1, size)]
    if not groups:
        raise ValueError(
            f"the run has {len(fresh)} seeds the baseline does not have; one rerun needs {size}"
        )
    return groups


def relabelled(baseline: Baseline, seeds: Sequence[int]) -> Baseline:
    """``baseline`` with its seeds renamed ``seeds`` (in order): the gate pairs them with those."""
    methods = {
        name: BaselineRuns(tuple(seeds[: len(runs.seeds)]), runs.tasks, runs.metrics)
        for name, runs in baseline.methods.items()
    }
    return dataclasses.replace(baseline, methods=methods)


def seeds_only(inputs: ReportInputs, seeds: Sequence[int]) -> ReportInputs:
    """``inputs`` with the episodes of ``seeds`` alone.

    The gate compares a rerun's seeds and ignores the others, but computes every seed's learning
    curves first: on a run of 200 fresh seeds, each of a rerun's comparisons would recompute all
    of them.
    """
    table = inputs.episodes
    keep = np.isin(table.seed, np.asarray(seeds))
    columns = {f.name: getattr(table, f.name)[keep] for f in dataclasses.fields(table)}
    return dataclasses.replace(inputs, episodes=EpisodeTable(**columns))


def worse(baseline: Baseline, method: str, metric: str, amount: np.ndarray) -> Baseline:
    """``baseline`` with ``method``'s ``metric`` made better by ``amount`` per task.

    Paired against it, an unchanged run then looks ``amount`` worse on every (seed, task): the
    injected regression.
    """
    sign = 1.0 if HIGHER_IS_BETTER[metric] else -1.0
    runs = baseline.methods[method]
    metrics = dict(runs.metrics)
    metrics[metric] = np.asarray(runs.metrics[metric], dtype=np.float64) + sign * amount[None, :]
    methods = dict(baseline.methods)
    methods[method] = dataclasses.replace(runs, metrics=metrics)
    return dataclasses.replace(baseline, methods=methods)


def gate_rates(
    inputs: ReportInputs,
    baseline: Baseline,
    *,
    fractions: Sequence[float] = (0.05, 0.1, 0.2),
    metric: str = "auc",
    alpha: float = 0.05,
    permutations: int = 10_000,
    unit: str = "pair",
    run_size: int | None = None,
) -> GateRates:
    """The gate's false alarms and power on ``inputs`` (a run holding fresh seeds of the spec).

    ``run_size``: with ``unit="pool"``, the seeds of the run the gate is given (the spec's
    ``evaluation.seeds``), the size of each rerun; the paired units use the baseline's.

    Raises:
      ValueError: the run has no group of fresh seeds, or the pool unit has no ``run_size``.
      opt_suite.report.gate.CompareError: the gate refuses the comparison (as ``compare`` would),
        or the test tasks are drawn per seed: fresh seeds then drew other tasks than the
        baseline's, and relabelling them would pair different tasks.
    """
    if inputs.tasks_per_seed or baseline.tasks_per_seed:
        raise CompareError(
            f"baseline {baseline.path} or the run draws its test tasks per seed "
            "(tasks.test_per_seed): fresh seeds drew other tasks than the baseline's seeds, and "
            "relabelling them as the baseline's would pair different tasks; gate-rates needs "
            "test tasks shared by every seed"
        )
    if unit == "pool" and run_size is None:
        raise ValueError("the pool unit's reruns need the size of the run it gates (run_size)")
    seeds = sorted(set(inputs.episodes.seed.tolist()))
    groups = fresh_seed_groups(baseline, seeds, run_size if unit == "pool" else None)
    ranges = task_ranges(baseline, metric)
    alarms, smallest = 0, []
    flagged = {name: 0 for name in baseline.methods}
    caught = {f: {name: 0 for name in baseline.methods} for f in fractions}

    def gate(rerun: ReportInputs, paired: Baseline) -> Comparison:
        return compare_runs(
            rerun,
            paired,
            metric=metric,
            alpha=alpha,
            correction=CORRECTION,
            permutations=permutations,
            unit=unit,
            intervals=False,  # decisions are counted; the pool unit's interval is its cost
        )

    for group in groups:
        rerun = seeds_only(inputs, group)
        paired = baseline if unit == "pool" else relabelled(baseline, group)
        result = gate(rerun, paired)
        alarms += bool(result.regressions)
        smallest.append(min(r.p_value for r in result.rows))
        for name in result.regressions:
            flagged[name] += 1
        for fraction in fractions:
            for name in baseline.methods:
                degraded = worse(paired, name, metric, fraction * ranges)
                if name in gate(rerun, degraded).regressions:
                    caught[fraction][name] += 1
    return GateRates(metric, alpha, len(groups), alarms, flagged, caught, tuple(smallest), unit)
