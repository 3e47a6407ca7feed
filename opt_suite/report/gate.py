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

The printed interval is a ``1 - alpha`` stratified-bootstrap percentile CI of the mean difference.
Each method's runs share its discovered options, so the runs are not independent draws of option
discovery: the test asks "are these options worse on these tasks and seeds", not "is the method
worse".
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from opt_suite import stats
from opt_suite.report.baseline import Baseline
from opt_suite.report.build import ReportInputs
from opt_suite.report.episodes import learning_curves
from opt_suite.report.leaderboard import rng_for
from opt_suite.report.metrics import HIGHER_IS_BETTER, METRICS, resolve_thresholds, run_metrics

__all__ = ["CompareError", "Comparison", "MethodComparison", "compare_runs", "format_comparison"]

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


def _run_values(inputs: ReportInputs, baseline: Baseline, warnings: list[str]) -> dict[str, Any]:
    """The run's per-run metrics, defined as in the baseline (fraction, window, thresholds)."""
    curves = learning_curves(inputs.episodes, inputs.methods)
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
        CompareError: unknown metric, bad alpha, spec hash mismatch (unless ``allow_spec_change``),
            or a baseline method entry absent from the run or without the metric.
    """
    if metric not in METRICS:
        raise CompareError(f"unknown metric {metric!r}; expected one of {list(METRICS)}")
    if not 0 < alpha < 1:
        raise CompareError(f"alpha must be between 0 and 1, got {alpha}")
    if correction not in ("holm", "none"):
        raise CompareError(f"correction must be 'holm' or 'none', got {correction!r}")
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
    sign = 1.0 if HIGHER_IS_BETTER[metric] else -1.0
    rows, p_values = [], []
    for name, old in baseline.methods.items():
        new = values[name]
        x, y = new.values[metric], old.metrics[metric]
        si, sj = _align(new.seeds, old.seeds)
        ti, tj = _align(new.tasks, old.tasks)
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
