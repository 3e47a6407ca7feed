"""The CI gate: is any method entry's metric significantly worse than in the stored baseline?

The test. Runs are paired by (seed, test task): with the same spec both runs use the same seeds and
tasks, and task difficulty (start-goal distance) dominates the variation of returns, so pairing
removes most of the noise. On the per-pair differences ``d = run - baseline`` (turned so that
positive is better) a **one-sided paired sign-flip permutation test** of the mean asks whether the
run is worse: under H0 ("the change did not alter the results' distribution") each pair's two
values are exchangeable, so every difference is as likely to have the opposite sign. It assumes no
normality (returns are skewed and ``episodes_to_threshold`` is censored), is exact for small numbers
of pairs (all ``2**n`` sign patterns) and Monte Carlo otherwise, and gives p = 1 when a rerun
reproduces the baseline exactly (all differences 0). When no run of a method can be paired (other
seeds or tasks) a one-sided two-sample permutation test of the difference of means is used instead.
p-values are Holm-Bonferroni corrected over the method entries compared, so that ``--alpha`` bounds
the chance that an unchanged suite fails CI at all, not per method.

A gate that cannot fail is refused. The smallest p-value the sign-flip test can give with ``n``
pairs is ``2**-n`` (all differences negative), and Holm multiplies the smallest p-value by the
number of method entries ``m``; when ``m * 2**-n > alpha`` no result whatsoever can be a
regression, so :func:`compare_runs` raises :class:`CompareError` saying how many (seed, task)
pairs it needs (:func:`power_problem`). With 5 method entries and alpha 0.05 that is 7 pairs:
1 seed x 6 test tasks (5/64 = 0.078) cannot fail, 2 seeds x 6 tasks (5/4096) can. An incomplete
run (a failed or missing evaluation cell, an interrupted run) is refused too: what it left out
may be what regressed.

The printed interval is a ``1 - alpha`` stratified-bootstrap percentile CI of the mean difference.
Each method's runs share its discovered options, so the runs are not independent draws of option
discovery: the test asks "are these options worse on these tasks and seeds", not "is the method
worse".
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from opt_suite import stats
from opt_suite.report.baseline import Baseline
from opt_suite.report.build import ReportInputs
from opt_suite.report.episodes import learning_curves
from opt_suite.report.leaderboard import rng_for
from opt_suite.report.metrics import HIGHER_IS_BETTER, METRICS, resolve_thresholds, run_metrics

__all__ = [
    "CompareError",
    "Comparison",
    "MethodComparison",
    "compare_runs",
    "format_comparison",
    "power_problem",
]

PERMUTATIONS = 10_000


class CompareError(ValueError):
    """The run and the baseline cannot be compared (exit status 2); the message says why."""


@dataclasses.dataclass(frozen=True)
class MethodComparison:
    """The test of one method entry."""

    method: str
    test: str  # "paired" or "unpaired"
    runs: str  # "20 pairs" or "20 vs 18 runs"
    baseline_mean: float
    run_mean: float
    difference: float  # run mean - baseline mean, in the metric's units
    ci_low: float
    ci_high: float
    p_value: float  # one-sided, H1: run worse
    p_adjusted: float
    regression: bool


@dataclasses.dataclass(frozen=True)
class Comparison:
    """The tests of every method entry in the baseline, and the warnings for people."""

    metric: str
    alpha: float
    correction: str
    rows: tuple[MethodComparison, ...]
    warnings: tuple[str, ...]

    @property
    def regressions(self) -> list[str]:
        """Method entries significantly worse than in the baseline."""
        return [r.method for r in self.rows if r.regression]


def _smallest_p(pairs: int | None, permutations: int) -> float:
    """Smallest p-value of the paired test (``pairs``) or of the unpaired one (None)."""
    if pairs is None:
        return 1.0 / (1 + permutations)
    return stats.paired_sign_flip_smallest_p(pairs, permutations)


def power_problem(
    pairs: Mapping[str, int | None],
    tasks: int,
    *,
    alpha: float = 0.05,
    correction: str = "holm",
    permutations: int = PERMUTATIONS,
) -> str | None:
    """Why a gate of this design can never report a regression, or None when it can.

    Args:
        pairs: method entry -> its number of (seed, task) pairs (None: tested unpaired).
        tasks: test tasks per seed (to say how many seeds are needed).
        alpha: the significance level.
        correction: ``"holm"`` (multiply by the number of entries) or ``"none"``.
        permutations: random sign patterns of the Monte Carlo test.
    """
    m = len(pairs) if correction == "holm" else 1
    weak = {
        name: n
        for name, n in pairs.items()
        if m * _smallest_p(n, permutations) > alpha * (1 + 1e-9)
    }
    if not weak:
        return None
    name, n = next(iter(weak.items()))
    adjusted = m * _smallest_p(n, permutations)
    corrected = f" x {m} method entries (Holm)" if m > 1 else ""
    observed = f"{n} (seed, task) pairs" if n is not None else "unpaired runs"
    need = next(
        (k for k in range(1, 63) if m * _smallest_p(k, permutations) <= alpha * (1 + 1e-9)),
        None,
    )
    if need is None:
        remedy = f"raise --permutations above {math.ceil(m / alpha)}"
    else:
        seeds = math.ceil(need / max(1, tasks))
        remedy = (
            f"it needs at least {need} (seed, task) pairs per method entry, e.g. {seeds} seeds x"
            f" {tasks} test tasks: raise evaluation.seeds (or the test tasks) and re-export the"
            " baseline"
        )
    return (
        f"this gate cannot fail: with {observed} the smallest p-value the test can reach is"
        f" {_smallest_p(n, permutations):.3g}{corrected} = {adjusted:.3g} > alpha {alpha:g}, so"
        f" no result, however much worse, would be a regression ({', '.join(weak)}); {remedy}"
    )


def _run_values(inputs: ReportInputs, baseline: Baseline, warnings: list[str]) -> dict[str, Any]:
    """The run's per-run metrics, defined as in the baseline (fraction, window, thresholds)."""
    curves = learning_curves(inputs.episodes, inputs.methods, inputs.frame_budget)
    own = resolve_thresholds(curves, inputs.settings.threshold, baseline.final_fraction)
    thresholds = {t: baseline.thresholds.get(str(t), v) for t, v in own.items()}
    fresh = [t for t in own if str(t) not in baseline.thresholds]
    if fresh:
        warnings.append(
            f"tasks {fresh} have no stored threshold: episodes_to_threshold uses this run's"
            " own thresholds there"
        )
    return run_metrics(curves, baseline.final_fraction, thresholds, baseline.window)


def _align(new_keys: tuple, old_keys: tuple) -> tuple[list[int], list[int]]:
    """Positions of the common keys (compared as text) in each tuple, in ``new_keys`` order."""
    old_pos = {str(k): i for i, k in enumerate(old_keys)}
    common = [(i, old_pos[str(k)]) for i, k in enumerate(new_keys) if str(k) in old_pos]
    return [i for i, _ in common], [j for _, j in common]


def compare_runs(
    inputs: ReportInputs,
    baseline: Baseline,
    *,
    metric: str = "auc",
    alpha: float = 0.05,
    allow_spec_change: bool = False,
    correction: str = "holm",
    permutations: int = PERMUTATIONS,
) -> Comparison:
    """Test every baseline method entry's ``metric`` in the run against the baseline.

    Raises:
        CompareError: unknown metric, bad alpha, spec hash mismatch (unless
            ``allow_spec_change``), a baseline method entry absent from the run or without the
            metric, an incomplete run, or a design whose smallest attainable p-value is above
            ``alpha`` (:func:`power_problem`).
    """
    if metric not in METRICS:
        raise CompareError(f"unknown metric {metric!r}; expected one of {list(METRICS)}")
    if not 0 < alpha < 1:
        raise CompareError(f"alpha must be between 0 and 1, got {alpha}")
    if correction not in ("holm", "none"):
        raise CompareError(f"correction must be 'holm' or 'none', got {correction!r}")
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
    present = set(inputs.episodes.methods())
    missing = [m for m in baseline.methods if m not in present]
    if missing:
        raise CompareError(
            f"method entries {missing} of baseline {baseline.path} are not in the run"
        )
    lacking = [m for m, b in baseline.methods.items() if metric not in b.metrics]
    if lacking:
        raise CompareError(f"baseline {baseline.path} has no {metric!r} values for {lacking}")
    extra = sorted(present - set(baseline.methods))
    if extra:
        warnings.append(f"method entries {extra} are not in the baseline: not compared")
    values = _run_values(inputs, baseline, warnings)
    alignment = {}
    for name, old in baseline.methods.items():
        new = values[name]
        alignment[name] = (_align(new.seeds, old.seeds), _align(new.tasks, old.tasks))
    pairs = {
        name: (len(si) * len(ti) if si and ti else None)
        for name, ((si, _), (ti, _)) in alignment.items()
    }
    tasks = max(len(old.tasks) for old in baseline.methods.values())
    problem = power_problem(
        pairs, tasks, alpha=alpha, correction=correction, permutations=permutations
    )
    if problem is not None:
        raise CompareError(problem)
    sign = 1.0 if HIGHER_IS_BETTER[metric] else -1.0
    rows, p_values = [], []
    for name, old in baseline.methods.items():
        new = values[name]
        x, y = new.values[metric], old.metrics[metric]
        (si, sj), (ti, tj) = alignment[name]
        rng = rng_for("compare", name, metric)
        if si and ti:
            if len(si) * len(ti) < x.size or len(sj) * len(tj) < y.size:
                warnings.append(
                    f"{name}: only {len(si)} seeds x {len(ti)} tasks are in both runs; the others"
                    " are left out"
                )
            diff = x[np.ix_(si, ti)] - y[np.ix_(sj, tj)]
            p = stats.paired_sign_flip_test(sign * diff, permutations, rng)
            low, high = stats.stratified_bootstrap_ci(diff, stats.mean, permutations, rng, alpha)
            kind, runs = "paired", f"{diff.size} pairs"
            base_mean = float(np.mean(y[np.ix_(sj, tj)]))
            run_mean = float(np.mean(x[np.ix_(si, ti)]))
        else:
            warnings.append(f"{name}: no (seed, task) run in common; unpaired test")
            p = stats.permutation_test(sign * x, sign * y, permutations, rng)
            low, high = stats.stratified_bootstrap_difference_ci(x, y, permutations, rng, alpha)
            kind, runs = "unpaired", f"{x.size} vs {y.size} runs"
            base_mean, run_mean = float(np.mean(y)), float(np.mean(x))
        p_values.append(p)
        rows.append((name, kind, runs, base_mean, run_mean, run_mean - base_mean, low, high, p))
    adjusted = stats.holm(np.array(p_values)) if correction == "holm" else np.array(p_values)
    result = tuple(
        MethodComparison(*row, p_adjusted=float(q), regression=bool(q <= alpha))
        for row, q in zip(rows, adjusted, strict=True)
    )
    return Comparison(metric, alpha, correction, result, tuple(warnings))


def describe_test(c: Comparison) -> str:
    """One sentence naming the test, as printed above the table."""
    direction = "higher" if HIGHER_IS_BETTER[c.metric] else "lower"
    corrected = (
        f"Holm-Bonferroni corrected over {len(c.rows)} method entries"
        if c.correction == "holm"
        else "uncorrected"
    )
    kinds = {r.test for r in c.rows}
    tests = []
    if "paired" in kinds:
        tests.append(
            "one-sided paired sign-flip permutation test of the mean per-(seed, task) difference"
        )
    if "unpaired" in kinds:
        tests.append(
            "one-sided two-sample permutation test of the difference of means (unpaired runs)"
        )
    return (
        f"test: {'; '.join(tests)}; H1: run worse than baseline; {c.metric} is better {direction};"
        f" p-values {corrected}; regression if p <= {c.alpha:g}"
    )


def format_comparison(c: Comparison) -> str:
    """The table of differences with CIs, p-values and verdicts."""
    pct = f"{100 * (1 - c.alpha):g}%"
    header = ("method", "test", "runs", "baseline", "run", "diff", f"{pct} CI", "p", "p adj", "")
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
                f"{r.p_value:.4f}",
                f"{r.p_adjusted:.4f}",
                "REGRESSION" if r.regression else "ok",
            )
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = [describe_test(c), ""]
    lines += [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in table
    ]
    lines.append("")
    if c.regressions:
        lines.append(
            f"FAIL: {len(c.regressions)} method entr{'y' if len(c.regressions) == 1 else 'ies'}"
            f" significantly worse on {c.metric}: {', '.join(c.regressions)}"
        )
    else:
        lines.append(f"PASS: no method entry is significantly worse on {c.metric}")
    return "\n".join(lines)
