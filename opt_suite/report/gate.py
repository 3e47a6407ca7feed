"""The CI gate: is any method entry's metric significantly worse than in the stored baseline?

The test. Runs are paired by (seed, test task): with the same spec both runs use the same seeds and
tasks, and task difficulty (start-goal distance) dominates the variation of returns, so pairing
removes most of the noise. On the per-pair differences ``d = run - baseline`` (turned so that
positive is better) a **one-sided paired sign-flip permutation test** of the mean asks whether the
run is worse: under H0 ("the change did not alter the results' distribution") each pair's two
values are exchangeable, so every difference is as likely to have the opposite sign. It assumes no
normality (returns are skewed and ``episodes_to_threshold`` is censored), is exact for small numbers
of pairs (all ``2**n`` sign patterns) and Monte Carlo otherwise, and gives p = 1 when a rerun
reproduces the baseline exactly (all differences 0), and so does one that differs only in the last
bits (:func:`last_bits_as_ties`: another CPU may sum in another order). p-values are
Holm-Bonferroni corrected over the method entries compared, so that ``--alpha`` bounds the chance
that an unchanged suite fails CI at all, not per method.

A gate that cannot fail is refused. The smallest p-value the sign-flip test can give with ``n``
pairs is ``2**-n`` (all differences negative), and Holm multiplies the smallest p-value by the
number of method entries ``m``; when ``m * 2**-n > alpha`` no result whatsoever can be a
regression, so :func:`compare_runs` raises :class:`CompareError` saying how many (seed, task)
pairs it needs (:func:`power_problem`). With 5 method entries and alpha 0.05 that is 7 pairs:
1 seed x 6 test tasks (5/64 = 0.078) cannot fail, 2 seeds x 6 tasks (5/4096) can. An incomplete
run (a failed or missing evaluation cell, an interrupted run) is refused too: what it left out
may be what regressed.

A run that does not cover the baseline is refused for the same reason. Every (method entry, seed,
task) of the baseline must be in the run (:func:`coverage_problem`); a run made with ``--seeds 1``
against a two-seed baseline would otherwise be tested on the half it has, and the half it lacks is
where a regression may be. Whoever wants the smaller test says so by narrowing the baseline
(``compare --only-seeds/--only-methods``, :func:`opt_suite.report.baseline.narrow_baseline`); the
power check then applies to what is left. There is no unpaired fallback: without pairs, the spread
of task difficulty hides real regressions (a drop of 1.5 auc that pairing finds at once).

The printed intervals are ``1 - alpha`` percentile CIs of the mean difference: the stratified
bootstrap (seeds resampled within each test task) and the task bootstrap (test tasks resampled,
then seeds within them), and the table adds the paired probability of improvement -- the fraction
of (seed, task) pairs where the run's value beats the baseline's (ties 1/2; 0.5 for a rerun that
reproduces the baseline). They describe the difference, and so does the suite's one verdict rule
(:func:`opt_suite.report.verdicts.entry_verdict` on the paired P, seeds as the resampling unit,
Bonferroni over the entries compared: better / equivalent / worse / inconclusive, printed under
the table); the gate's decision is the sign-flip test's alone.
Each method's runs share its discovered options, so the runs are not independent draws of option
discovery: the test asks "are these options worse on these tasks and seeds", not "is the method
worse".

The seed as the unit (``unit="seed"``, ``compare --unit seed``). Each seed has its own
demonstrations and options, shared by all its tasks, so the (seed, task) pairs of one seed are not
independent replicates: under a rerun on fresh seeds a seed whose options happen to be weaker
makes all its pairs negative together, and the pair test over-alarms; a method whose options vary
by seed scatters its pairs so widely that the pair test is also underpowered. The seed-level test
takes the seed as the unit, as the leaderboard's verdict does (:mod:`opt_suite.verdict`): per seed
the mean over its test tasks of the differences, each divided by its task's range
(:func:`task_ranges`: max - min of the baseline's values of that task over every method entry and
seed, so that a high-range task does not dominate and a degradation of 10% of each task's range is
-0.1 in every seed), then the same exact one-sided sign-flip test over the seeds, and Holm over the
entries. Its smallest p-value is ``2**-n`` with ``n`` seeds, so :func:`power_problem` counts seeds:
5 entries need 7 seeds at alpha 0.05.

A pool of baseline seeds as the unit (``unit="pool"``, ``compare --unit pool``). Both paired
units compare the run with *one* draw of the baseline's seeds: exact over the draw of both sides,
but a gate holds its baseline fixed, and conditional on a small baseline that happened to be a
good draw it alarms far above alpha (the gymnasium gate's first 8-seed baseline, issue 36).
The pool unit takes a baseline of many seeds and compares the run's seeds, unpaired, with the
baseline's seeds the run does not hold (:func:`_pool_split`): each seed's score is its mean over
the test tasks of its values divided by the task's range (:func:`seed_differences` on values;
every seed has the same tasks, so task difficulty is the same on both sides), then the one-sided
two-sample permutation test of the mean scores (:func:`opt_suite.stats.permutation_test`), Holm
over the entries. Under no change the run's seeds and the pool's are exchangeable, whatever the
pool's draw; with a pool many times the run's, the level conditional on the one committed pool
is close to nominal. The run's seeds the baseline holds are replayed exactly first; a pool of
fewer than :data:`POOL_FACTOR` times the run's seeds is refused. Its smallest p-value is
``1/(1 + permutations)`` (or ``1/C(n + m, n)``, :func:`opt_suite.stats.permutation_smallest_p`).

Length (over the 400 lines the tree aims for): the CI gate's test (paired sign flips, Holm
correction, power and coverage refusals, ties of last bits, the pool unit) is one decision rule;
its parts are not used apart.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from opt_suite import stats
from opt_suite.report.baseline import GATE_UNITS, Baseline, BaselineRuns, narrow_baseline
from opt_suite.report.episodes import learning_curves
from opt_suite.report.inputs import ReportInputs
from opt_suite.report.leaderboard import rng_for
from opt_suite.report.metrics import HIGHER_IS_BETTER, METRICS, resolve_thresholds, run_metrics
from opt_suite.report.replay import Replay, replay
from opt_suite.report.replay import listed as _listed
from opt_suite.report.task_draw import draw_problem
from opt_suite.report.verdicts import Design, entry_verdict
from opt_suite.verdict import Margins, Verdict, familywise_statement

__all__ = [
    "CompareError",
    "Comparison",
    "MethodComparison",
    "compare_runs",
    "coverage_problem",
    "degradation",
    "format_comparison",
    "last_bits_as_ties",
    "power_problem",
    "seed_differences",
    "task_ranges",
]

PERMUTATIONS = 10_000

#: The test's unit: each (seed, task) pair or each seed's normalised mean difference (paired sign
#: flips), or each seed's normalised mean value against a pool of other seeds (two-sample).
UNITS = GATE_UNITS

#: The pool unit's smallest pool: this many times the run's seeds (see the module docstring).
POOL_FACTOR = 4


class CompareError(ValueError):
    """The run and the baseline cannot be compared (exit status 2); the message says why."""


@dataclasses.dataclass(frozen=True)
class MethodComparison:
    """The test of one method entry."""

    method: str
    test: str  # "paired" (the (seed, task) pair as the unit), "seed-level" or "pool"
    runs: str  # "20 pairs", "10 seeds" or "8 seeds vs 160" (the pool unit)
    baseline_mean: float
    run_mean: float
    difference: float  # run mean - baseline mean, in the metric's units
    ci_low: float  # stratified bootstrap (seeds within tasks)
    ci_high: float
    p_value: float  # one-sided, H1: run worse
    p_adjusted: float
    regression: bool
    task_ci_low: float = float("nan")  # task bootstrap (tasks, then seeds within them)
    task_ci_high: float = float("nan")
    #: paired P(run > baseline) over the (seed, task) pairs, oriented so that higher is better
    paired_improvement: float = float("nan")
    #: the one verdict rule's description of run against baseline (it decides nothing here)
    verdict: Verdict | None = None
    #: the run's loss in gate-rates' unit (:func:`degradation`); NaN when the baseline's entries
    #: have different test tasks, so no task range is shared. With the pool unit: paired on the
    #: run's seeds when the baseline holds them all (what a change did to the replayed cells, 0
    #: on an exact replay), else the run's mean seed score against the pool's
    degradation: float = float("nan")


@dataclasses.dataclass(frozen=True)
class Comparison:
    """The tests of every method entry in the baseline, and the warnings for people."""

    metric: str
    alpha: float
    correction: str
    rows: tuple[MethodComparison, ...]
    warnings: tuple[str, ...]
    #: exact replay, before the statistics: which compared cells differ from the baseline at all
    replay: Replay | None = None
    #: the test's unit: "pair" ((seed, task) pairs), "seed" (seeds' normalised mean
    #: differences) or "pool" (the run's seeds against the baseline's other seeds)
    unit: str = "pair"
    #: random permutations (sign patterns or labellings) of a Monte Carlo test
    permutations: int = PERMUTATIONS
    #: the pool unit's sizes: (the run's seeds, the baseline's other seeds) of its first entry
    pool: tuple[int, int] | None = None

    @property
    def regressions(self) -> list[str]:
        """Method entries significantly worse than in the baseline."""
        return [r.method for r in self.rows if r.regression]


def _smallest_p(pairs: int, permutations: int, pool: int | None = None) -> float:
    """Smallest p-value of the paired test with ``pairs`` pairs.

    With ``pool``: of the pool unit's test of ``pairs`` run seeds against ``pool`` other seeds.
    """
    if pool is not None:
        return stats.permutation_smallest_p(pairs, pool, permutations)
    return stats.paired_sign_flip_smallest_p(pairs, permutations)


def power_problem(
    pairs: Mapping[str, int],
    tasks: int,
    *,
    alpha: float = 0.05,
    correction: str = "holm",
    permutations: int = PERMUTATIONS,
    unit: str = "pair",
    pool: Mapping[str, int] | None = None,
) -> str | None:
    """Why a gate of this design can never report a regression, or None when it can.

    Args:
        pairs: method entry -> its number of units: (seed, task) pairs, or seeds when ``unit``
            is ``"seed"``.
        tasks: test tasks per seed (to say how many seeds are needed).
        alpha: the significance level.
        correction: ``"holm"`` (multiply by the number of entries) or ``"none"``.
        permutations: random sign patterns of the Monte Carlo test.
        unit: ``"pair"``, ``"seed"`` or ``"pool"``, the test's unit (:data:`UNITS`).
        pool: with ``unit="pool"``: method entry -> the baseline's seeds it is tested against
            (``pairs`` then counts the run's seeds).
    """
    if unit == "pool" and pool is None:
        raise ValueError("the pool unit's power needs the pool's size per method entry")
    sizes = pool if unit == "pool" else None

    def smallest(name: str, n: int) -> float:
        return _smallest_p(n, permutations, None if sizes is None else sizes[name])

    m = len(pairs) if correction == "holm" else 1
    weak = {name: n for name, n in pairs.items() if m * smallest(name, n) > alpha * (1 + 1e-9)}
    if not weak:
        return None
    name, n = next(iter(weak.items()))
    adjusted = m * smallest(name, n)
    corrected = f" x {m} method entries (Holm)" if m > 1 else ""
    observed = {
        "seed": f"{n} seeds (the seed-level test)",
        "pool": f"{n} seeds against a pool of {sizes[name] if sizes else 0} (the pool unit)",
    }.get(unit, f"{n} (seed, task) pairs")
    need = next(
        (k for k in range(1, 63) if m * smallest(name, k) <= alpha * (1 + 1e-9)),
        None,
    )
    if unit == "pool":
        remedy = (
            f"its smallest p-value is 1/C(run + pool seeds, run seeds), or 1/(1 + --permutations)"
            f" when there are more labellings: run more seeds with a larger pool, and"
            f" --permutations above {math.ceil(m / alpha)}"
        )
    elif need is None:
        remedy = f"raise --permutations above {math.ceil(m / alpha)}"
    elif unit == "seed":
        remedy = (
            f"it needs at least {need} seeds per method entry: raise evaluation.seeds and"
            " re-export the baseline"
        )
    else:
        seeds = math.ceil(need / max(1, tasks))
        remedy = (
            f"it needs at least {need} (seed, task) pairs per method entry, e.g. {seeds} seeds x"
            f" {tasks} test tasks: raise evaluation.seeds (or the test tasks) and re-export the"
            " baseline"
        )
    return (
        f"this gate cannot fail: with {observed} the smallest p-value the test can reach is"
        f" {smallest(name, n):.3g}{corrected} = {adjusted:.3g} > alpha {alpha:g}, so"
        f" no result, however much worse, would be a regression ({', '.join(weak)}); {remedy}"
    )


#: Relative size below which a paired difference is a tie (0): float64 rounding, not a result.
LAST_BITS = 1e-9


def last_bits_as_ties(run: np.ndarray, base: np.ndarray) -> np.ndarray:
    """``run - base``, with differences in the last bits of the values set to exactly 0.

    The sign-flip test looks at signs, not sizes: a run whose every metric is one ulp lower (a sum
    taken in another order on another CPU) would otherwise be "worse on every pair", p = 2**-n,
    a regression. A difference within :data:`LAST_BITS` of the values' magnitude is rounding, so
    it is a tie, which the test counts as no evidence either way (all ties: p = 1).
    """
    run, base = np.asarray(run, dtype=np.float64), np.asarray(base, dtype=np.float64)
    diff = run - base
    scale = np.maximum(np.maximum(np.abs(run), np.abs(base)), 1.0)
    return np.where(np.abs(diff) <= LAST_BITS * scale, 0.0, diff)


def task_ranges(baseline: Baseline, metric: str) -> np.ndarray:
    """Per task: max - min of the baseline's ``metric`` over every method entry and seed."""
    stacked = np.concatenate([runs.metrics[metric] for runs in baseline.methods.values()])
    return np.ptp(stacked, axis=0)


def seed_differences(diff: np.ndarray, ranges: np.ndarray) -> np.ndarray:
    """Per seed, the mean over its tasks of ``diff`` (seeds x tasks), each divided by its range.

    The seed-level test's units (of differences), and the pool unit's (of values). A task whose
    range is 0 (every entry and seed of the baseline scored the same) has no scale, so its
    differences count unnormalised: dividing by 0 would turn any change there into an infinite
    one.
    """
    diff = np.asarray(diff, dtype=np.float64)
    scale = np.where(np.asarray(ranges, dtype=np.float64) > 0, ranges, 1.0)
    return np.mean(diff / scale[None, :], axis=1)


def degradation(diff: np.ndarray, ranges: np.ndarray, metric: str) -> float:
    """How much worse ``diff = run - baseline`` (seeds x tasks) is, in fractions of task ranges.

    The unit in which ``gate-rates`` injects its degradations
    (:func:`opt_suite.report.gate_rates.worse` lowers every pair by ``fraction * ranges``), so that
    a measured loss can be set against the smallest loss the gate was measured to catch: a run
    made worse by 10% of each task's range has a degradation of 0.1. Positive is worse, negative
    better, whichever way ``metric`` is better; ranges of 0 count unnormalised, as in
    :func:`seed_differences`.
    """
    sign = 1.0 if HIGHER_IS_BETTER[metric] else -1.0
    gained = float(np.mean(seed_differences(sign * np.asarray(diff, dtype=np.float64), ranges)))
    return 0.0 - gained  # not -gained: a run equal to its baseline lost 0, not -0 ("-0.0%")


def _run_values(inputs: ReportInputs, baseline: Baseline, warnings: list[str]) -> dict[str, Any]:
    """The run's per-run metrics, defined as in the baseline (fraction, window, thresholds)."""
    curves = learning_curves(inputs.episodes, inputs.methods, inputs.frame_budget)
    own = resolve_thresholds(curves, inputs.settings.threshold, baseline.final_fraction)
    # A baseline of test tasks drawn per seed stores one threshold per (seed, task) ("seed/task",
    # metrics.seed_task_key): those take precedence over a task's own.
    per_seed = {k: v for k, v in baseline.thresholds.items() if "/" in k}
    thresholds: dict[Any, float] = {t: baseline.thresholds.get(str(t), v) for t, v in own.items()}
    thresholds |= per_seed
    fresh = [
        t
        for t in own
        if str(t) not in baseline.thresholds and not any(k.endswith(f"/{t}") for k in per_seed)
    ]
    if fresh:
        warnings.append(
            f"tasks {fresh} have no stored threshold: episodes_to_threshold uses this run's"
            " own thresholds there"
        )
    return run_metrics(
        curves, baseline.final_fraction, thresholds, baseline.window, inputs.frame_budget
    )


def _positions(new_keys: tuple, old_keys: tuple) -> list[int] | None:
    """Where each of ``old_keys`` is in ``new_keys`` (compared as text); None if any is absent."""
    new_pos = {str(k): i for i, k in enumerate(new_keys)}
    found = [new_pos.get(str(k)) for k in old_keys]
    return None if any(i is None for i in found) else [int(i) for i in found if i is not None]


def coverage_problem(baseline: Baseline, values: Mapping[str, Any]) -> str | None:
    """Which (method, seed, task) pairs of ``baseline`` the run lacks, summarised; None if none.

    ``values`` maps each method entry of the run to its per-run metrics (``seeds``, ``tasks``).
    Methods that lack the same seeds and tasks are named together, so the message stays one line
    whatever the size of the grid.
    """
    groups: dict[tuple[tuple[Any, ...], tuple[Any, ...]], list[str]] = {}
    missing = total = 0
    for name, old in baseline.methods.items():
        total += len(old.seeds) * len(old.tasks)
        new = values.get(name)
        have_seeds = {str(s) for s in new.seeds} if new is not None else set()
        have_tasks = {str(t) for t in new.tasks} if new is not None else set()
        seeds = tuple(s for s in old.seeds if str(s) not in have_seeds)
        tasks = tuple(t for t in old.tasks if str(t) not in have_tasks)
        if seeds or tasks:
            covered = (len(old.seeds) - len(seeds)) * (len(old.tasks) - len(tasks))
            missing += len(old.seeds) * len(old.tasks) - covered
            groups.setdefault((seeds, tasks), []).append(name)
    if not groups:
        return None
    parts = []
    for (seeds, tasks), names in groups.items():
        what = []
        if seeds:
            what.append(f"seed{'s' if len(seeds) > 1 else ''} {_listed(seeds)} (every task)")
        if tasks:
            what.append(f"test task{'s' if len(tasks) > 1 else ''} {_listed(tasks)}")
        parts.append(f"{' and '.join(what)} of {', '.join(names)}")
    all_seeds = sorted({s for old in baseline.methods.values() for s in old.seeds})
    return (
        f"the run does not cover baseline {baseline.path}: {missing} of its {total} (method, seed,"
        f" task) pairs are not in the run: {'; '.join(parts)}. What a run leaves out may be what"
        f" regressed: run the baseline's seeds (`opt-suite run SPEC --seeds {_listed(all_seeds)}"
        " --out DIR`), or narrow the baseline explicitly with --only-seeds / --only-methods"
    )


def compare_runs(
    inputs: ReportInputs,
    baseline: Baseline,
    *,
    metric: str = "auc",
    alpha: float = 0.05,
    allow_spec_change: bool = False,
    correction: str = "holm",
    permutations: int = PERMUTATIONS,
    only_seeds: Sequence[int] | None = None,
    only_methods: Sequence[str] | None = None,
    unit: str = "pair",
    intervals: bool = True,
) -> Comparison:
    """Test every baseline method entry's ``metric`` in the run against the baseline.

    ``only_seeds`` / ``only_methods`` narrow the baseline first (:func:`narrow_baseline`): the
    only way to compare a run that covers part of it. ``unit`` chooses the test's unit:
    ``"pair"`` (every (seed, task) pair), ``"seed"`` (each seed's mean of range-normalised
    differences, :func:`seed_differences`; the module docstring says why) or ``"pool"`` (the
    run's seeds against the baseline's other seeds). ``intervals=False`` leaves the pool unit's
    bootstrap interval out (NaN): ``gate-rates`` counts decisions only, and on a pool of 160
    seeds the interval is most of a comparison's time.

    Raises:
        CompareError: unknown metric, bad alpha, spec hash mismatch (unless
            ``allow_spec_change``), a baseline method entry absent from the run or without the
            metric, a (method, seed, task) pair of the baseline absent from the run, test tasks
            other than the baseline's (:mod:`opt_suite.report.task_draw`), an incomplete
            run, or a design whose smallest attainable p-value is above ``alpha``
            (:func:`power_problem`).
        BaselineError: ``only_seeds`` or ``only_methods`` names what the baseline does not hold.
    """
    if metric not in METRICS:
        raise CompareError(f"unknown metric {metric!r}; expected one of {list(METRICS)}")
    if not 0 < alpha < 1:
        raise CompareError(f"alpha must be between 0 and 1, got {alpha}")
    if correction not in ("holm", "none"):
        raise CompareError(f"correction must be 'holm' or 'none', got {correction!r}")
    if unit not in UNITS:
        raise CompareError(f"unit must be one of {list(UNITS)}, got {unit!r}")
    if inputs.incomplete:
        raise CompareError(
            "the run is incomplete, and what it left out may be what regressed: "
            + "; ".join(inputs.incomplete)
            + " (finish it by rerunning the same `opt-suite run` command, then compare again)"
        )
    warnings: list[str] = []
    if baseline.spec_hash != inputs.spec_hash:
        message = (
            f"spec hash differs: baseline {baseline.path} was made from spec {baseline.spec_name!r}"
            f" ({baseline.spec_hash[:12]}), the run from {inputs.spec_name!r}"
            f" ({inputs.spec_hash[:12]})"
        )
        if not allow_spec_change:
            raise CompareError(
                f"{message}; the results measure different protocols. Re-export the baseline"
                " (`opt-suite report DIR --export-baseline FILE`) or pass --allow-spec-change"
            )
        warnings.append(message)
    if only_seeds is not None or only_methods is not None:
        full = sum(len(b.seeds) * len(b.tasks) for b in baseline.methods.values())
        baseline = narrow_baseline(baseline, seeds=only_seeds, methods=only_methods)
        kept = sum(len(b.seeds) * len(b.tasks) for b in baseline.methods.values())
        warnings.append(
            f"the baseline is narrowed (--only-seeds/--only-methods) to {kept} of its {full}"
            f" (method, seed, task) pairs: method entries {', '.join(baseline.methods)}"
        )
    # Before anything is paired: index k must name the same test task on both sides.
    problem = draw_problem(inputs.tasks_per_seed, inputs.task_draw, inputs.spec_hash, baseline)
    if problem is not None:
        raise CompareError(problem)
    present = set(inputs.episodes.methods())
    missing = [m for m in baseline.methods if m not in present]
    if missing:
        raise CompareError(
            f"method entries {missing} of baseline {baseline.path} are not in the run (leave"
            " them out explicitly with --only-methods)"
        )
    counted_in = "episodes" if inputs.frame_budget is None else "frames"
    if metric == "episodes_to_threshold" and baseline.threshold_unit != counted_in:
        raise CompareError(
            f"baseline {baseline.path} counts episodes_to_threshold in"
            f" {baseline.threshold_unit}, the run in {counted_in}: re-export the baseline from"
            " a run of this spec"
        )
    lacking = [m for m, b in baseline.methods.items() if metric not in b.metrics]
    if lacking:
        raise CompareError(f"baseline {baseline.path} has no {metric!r} values for {lacking}")
    extra = sorted(present - set(baseline.methods))
    if extra:
        warnings.append(f"method entries {extra} are not in the baseline: not compared")
    values = _run_values(inputs, baseline, warnings)
    if unit == "pool":
        settings = (metric, alpha, correction, permutations, intervals)
        return _pool_comparison(baseline, values, warnings, *settings)
    problem = coverage_problem(baseline, values)
    if problem is not None:
        raise CompareError(problem)
    alignment = {}
    for name, old in baseline.methods.items():
        new = values[name]
        si, ti = _positions(new.seeds, old.seeds), _positions(new.tasks, old.tasks)
        assert si is not None and ti is not None, name  # coverage_problem said so
        alignment[name] = (si, ti)
        if len(si) < len(new.seeds):
            extra_seeds = [s for s in new.seeds if str(s) not in {str(x) for x in old.seeds}]
            warnings.append(
                f"{name}: the run's seeds {_listed(extra_seeds)} are not in the baseline: not"
                " compared"
            )
    exact = _replayed(values, baseline, metric)
    if unit == "seed":
        pairs = {name: len(si) for name, (si, ti) in alignment.items()}
    else:
        pairs = {name: len(si) * len(ti) for name, (si, ti) in alignment.items()}
    tasks = max(len(old.tasks) for old in baseline.methods.values())
    problem = power_problem(
        pairs, tasks, alpha=alpha, correction=correction, permutations=permutations, unit=unit
    )
    if problem is not None:
        raise CompareError(problem)
    sign = 1.0 if HIGHER_IS_BETTER[metric] else -1.0
    shared_tasks = len({len(old.tasks) for old in baseline.methods.values()}) == 1
    if unit == "seed" and not shared_tasks:
        raise CompareError(
            f"baseline {baseline.path}: its method entries have different test tasks, so no"
            " task range is shared by all of them; the seed-level test needs one set of tasks"
        )
    # Every entry's loss in gate-rates' unit, whatever the test's unit: set against the
    # smallest loss the gate was measured to catch (ci/mutations.py).
    scale = task_ranges(baseline, metric) if shared_tasks else None
    ranges = scale if unit == "seed" else None
    # The paired P, scale-free whatever the metric (no references), describes each entry.
    design = Design(None, Margins(), baseline.tasks_per_seed, len(baseline.methods), permutations)
    rows, p_values = [], []
    described: list[tuple[float, float, float, Verdict, float]] = []
    for name, old in baseline.methods.items():
        x, y = values[name].values[metric], old.metrics[metric]
        si, ti = alignment[name]
        rng = rng_for("compare", name, metric)
        ours = x[np.ix_(si, ti)]  # the run's values in the baseline's (seed, task) order
        diff = last_bits_as_ties(ours, y)
        tested = diff if ranges is None else seed_differences(diff, ranges)
        p = stats.paired_sign_flip_test(sign * tested, permutations, rng)
        low, high = stats.stratified_bootstrap_ci(diff, stats.mean, permutations, rng, alpha)
        task_low, task_high = stats.task_bootstrap_ci(diff, stats.mean, permutations, rng, alpha)
        won = float(stats.paired_probability_of_improvement(sign * ours, sign * y))
        verdict_rng = rng_for("compare", name, metric, "verdict")
        decided = entry_verdict(metric, old.seeds, old.tasks, {metric: ours}, {metric: y},
                                design, verdict_rng)  # fmt: skip
        base_mean, run_mean = float(np.mean(y)), float(np.mean(ours))
        p_values.append(p)
        test = "paired" if ranges is None else "seed-level"
        runs = f"{diff.size} pairs" if ranges is None else f"{tested.size} seeds"
        rows.append((name, test, runs, base_mean, run_mean, run_mean - base_mean) + (low, high, p))
        loss = float("nan") if scale is None else degradation(diff, scale, metric)
        described.append((task_low, task_high, won, decided, loss))
    adjusted = stats.holm(np.array(p_values)) if correction == "holm" else np.array(p_values)
    result = tuple(
        MethodComparison(
            *row,
            p_adjusted=float(q),
            regression=bool(q <= alpha),
            task_ci_low=more[0],
            task_ci_high=more[1],
            paired_improvement=more[2],
            verdict=more[3],
            degradation=more[4],
        )
        for row, q, more in zip(rows, adjusted, described, strict=True)
    )
    return Comparison(metric, alpha, correction, result, tuple(warnings), exact, unit)


def _replayed(values: Mapping[str, Any], baseline: Baseline, metric: str) -> Replay:
    """The exact replay of the run's cells the baseline also holds (every unit's first line)."""
    runs = {name: BaselineRuns(m.seeds, m.tasks, m.values) for name, m in values.items()}
    return replay(runs, baseline.methods, metric)


def _pool_split(
    baseline: Baseline, values: Mapping[str, Any]
) -> dict[str, tuple[list[int], list[int]]]:
    """Per method entry: where the baseline's tasks are in the run, and its pool's seed rows.

    The pool is every baseline seed the run does not hold (those the run holds were replayed).

    Raises:
        CompareError: test tasks drawn per seed or not the baseline's, or a pool smaller than
            :data:`POOL_FACTOR` times the run's seeds.
    """
    if baseline.tasks_per_seed:
        raise CompareError(
            f"baseline {baseline.path} draws its test tasks per seed (tasks.test_per_seed): a"
            " pool seed's task k is not the run's task k; the pool unit needs test tasks shared"
            " by every seed"
        )
    split = {}
    for name, old in baseline.methods.items():
        new = values[name]
        ti = _positions(new.tasks, old.tasks)
        if ti is None or len(new.tasks) != len(old.tasks):
            raise CompareError(
                f"baseline {baseline.path}: {name}'s test tasks are {_listed(old.tasks)}, the"
                f" run's {_listed(new.tasks)}; the pool unit compares seeds on the same test tasks"
            )
        held = {str(s) for s in new.seeds}
        pool = [k for k, s in enumerate(old.seeds) if str(s) not in held]
        if len(pool) < POOL_FACTOR * len(new.seeds):
            raise CompareError(
                f"baseline {baseline.path}: {name} holds {len(pool)} seeds other than the run's"
                f" {len(new.seeds)}; the pool unit needs at least {POOL_FACTOR} x the run's seeds"
                f" ({POOL_FACTOR * len(new.seeds)}) in its pool, so that its one draw of the pool"
                " barely moves the test's level: export the baseline from a run of more seeds"
                " (`opt-suite run SPEC --seeds 0-N --out DIR`)"
            )
        split[name] = (ti, pool)
    return split


def _pool_comparison(
    baseline: Baseline,
    values: Mapping[str, Any],
    warnings: list[str],
    metric: str,
    alpha: float,
    correction: str,
    permutations: int,
    intervals: bool = True,
) -> Comparison:
    """The pool unit's test of every entry: the run's seeds against the baseline's other seeds.

    Each seed's score is its mean over the test tasks of its values, each divided by the task's
    range (:func:`seed_differences` on values); the run's scores and the pool's are compared by
    the one-sided two-sample permutation test (:func:`opt_suite.stats.permutation_test`).
    """
    split = _pool_split(baseline, values)
    exact = _replayed(values, baseline, metric)
    runs = {name: len(values[name].seeds) for name in baseline.methods}
    pools = {name: len(pool) for name, (_, pool) in split.items()}
    tasks = max(len(old.tasks) for old in baseline.methods.values())
    problem = power_problem(runs, tasks, alpha=alpha, correction=correction,
                            permutations=permutations, unit="pool", pool=pools)  # fmt: skip
    if problem is not None:
        raise CompareError(problem)
    sign = 1.0 if HIGHER_IS_BETTER[metric] else -1.0
    ranges = task_ranges(baseline, metric)
    rows: list[MethodComparison] = []
    p_values = []
    for name, old in baseline.methods.items():
        ti, pool = split[name]
        ours = np.asarray(values[name].values[metric], dtype=np.float64)[:, ti]
        theirs = np.asarray(old.metrics[metric], dtype=np.float64)[pool]
        run_scores = seed_differences(sign * ours, ranges)
        pool_scores = seed_differences(sign * theirs, ranges)
        rng = rng_for("compare", name, metric)
        p = stats.permutation_test(run_scores, pool_scores, permutations, rng)
        low, high = (
            stats.stratified_bootstrap_difference_ci(ours, theirs, permutations, rng, alpha)
            if intervals
            else (float("nan"), float("nan"))
        )
        base_mean, run_mean = float(np.mean(theirs)), float(np.mean(ours))
        loss = _pool_loss(old, values[name].seeds, ours, ranges, metric, run_scores, pool_scores)
        p_values.append(p)
        # adjusted below, once every entry's p is known
        rows.append(
            MethodComparison(name, "pool", f"{runs[name]} seeds vs {pools[name]}", base_mean,
                             run_mean, run_mean - base_mean, low, high, p,
                             p_adjusted=float("nan"), regression=False, degradation=loss)
        )  # fmt: skip
    adjusted = stats.holm(np.array(p_values)) if correction == "holm" else np.array(p_values)
    result = tuple(
        dataclasses.replace(row, p_adjusted=float(q), regression=bool(q <= alpha))
        for row, q in zip(rows, adjusted, strict=True)
    )
    first = next(iter(baseline.methods))
    sizes = (runs[first], pools[first])
    return Comparison(metric, alpha, correction, result, tuple(warnings), exact, "pool",
                      permutations, sizes)  # fmt: skip


def _pool_loss(
    old: BaselineRuns,
    seeds: Sequence[Any],
    ours: np.ndarray,
    ranges: np.ndarray,
    metric: str,
    run_scores: np.ndarray,
    pool_scores: np.ndarray,
) -> float:
    """The pool unit's :attr:`MethodComparison.degradation` of one entry.

    When the baseline holds every seed of the run (CI's run replays seeds of the pool), the
    loss is paired on those seeds: what a change did to the replayed cells, 0 on an exact replay,
    as with the other units. Against the pool it would also hold how the run's few seeds happen
    to differ from the pool's mean, which a mutation check would read as the bug's effect.
    ``ours``: the run's values of the entry, its ``seeds`` by the baseline's test tasks.
    """
    where = {str(s): k for k, s in enumerate(old.seeds)}
    if all(str(s) in where for s in seeds):
        held = [where[str(s)] for s in seeds]
        theirs = np.asarray(old.metrics[metric], dtype=np.float64)[held]
        return degradation(last_bits_as_ties(ours, theirs), ranges, metric)
    return 0.0 - float(np.mean(run_scores) - np.mean(pool_scores))


def describe_test(c: Comparison) -> str:
    """One sentence naming the test, as printed above the table."""
    direction = "higher" if HIGHER_IS_BETTER[c.metric] else "lower"
    corrected = (
        f"Holm-Bonferroni corrected over {len(c.rows)} method entries"
        if c.correction == "holm"
        else "uncorrected"
    )
    what = (
        "seed-level sign-flip permutation test of the mean over seeds of each seed's mean"
        " per-task difference divided by the task's range"
        if c.unit == "seed"
        else "paired sign-flip permutation test of the mean per-(seed, task) difference"
    )
    if c.pool is not None:
        run, pool = c.pool
        labellings = math.comb(run + pool, run)
        drawn = (
            f"all {labellings} labellings"
            if stats.permutation_smallest_p(run, pool, c.permutations) == 1 / labellings
            else f"{c.permutations} random labellings, seeded"
        )
        what = (
            f"two-sample permutation test of the run's {run} seeds against the baseline's {pool}"
            " other seeds, unpaired, each seed's mean over the test tasks of its values divided"
            f" by the task's range ({drawn})"
        )
    return (
        f"test: one-sided {what}; H1: run worse than baseline; {c.metric} is better {direction};"
        f" p-values {corrected}; regression if p <= {c.alpha:g}"
    )


def format_comparison(c: Comparison) -> str:
    """The table of differences with CIs, p-values and verdicts."""
    pct = f"{100 * (1 - c.alpha):g}%"
    header = (
        "method",
        "test",
        "runs",
        "baseline",
        "run",
        "diff",
        f"{pct} CI seeds",
        "CI tasks",
        "P(run>base)",
        "p",
        "p adj",
        "",
    )
    table = [header]
    for r in c.rows:
        table.append(
            (
                r.method,
                r.test,
                r.runs,
                f"{r.baseline_mean:.3f}",
                f"{r.run_mean:.3f}",
                f"{r.difference:+.3f}",
                f"[{r.ci_low:+.3f}, {r.ci_high:+.3f}]",
                "n/a"
                if math.isnan(r.task_ci_low)
                else f"[{r.task_ci_low:+.3f}, {r.task_ci_high:+.3f}]",
                "n/a" if math.isnan(r.paired_improvement) else f"{r.paired_improvement:.2f}",
                f"{r.p_value:.4f}",
                f"{r.p_adjusted:.4f}",
                "REGRESSION" if r.regression else "ok",
            )
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    intervals = (
        "intervals of the difference of means: [seeds] resamples the run's seeds and the pool's"
        " within each test task; unpaired, so no task interval and no paired P (n/a)"
        if c.unit == "pool"
        else "intervals of the mean difference: [seeds] resamples seeds within each test task,"
        " [tasks] resamples test tasks and then seeds; P(run>base) = the fraction of (seed, task)"
        " pairs where the run beats the baseline (ties 1/2)"
    )
    lines = [describe_test(c), intervals, ""]
    lines += [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in table
    ]
    decided = [(r.method, r.verdict) for r in c.rows if r.verdict is not None]
    if decided:
        lines += ["", f"described by the one verdict rule on the paired P (run against baseline;"
                  f" decides nothing here): {familywise_statement(len(decided))}"]  # fmt: skip
        lines += [f"  {name}: {v.text()}" for name, v in decided]
    lines.append("")
    if c.regressions:
        lines.append(
            f"FAIL: {len(c.regressions)} method entr{'y' if len(c.regressions) == 1 else 'ies'}"
            f" significantly worse on {c.metric}: {', '.join(c.regressions)}"
        )
    else:
        lines.append(f"PASS: no method entry is significantly worse on {c.metric}")
    return "\n".join(lines)
