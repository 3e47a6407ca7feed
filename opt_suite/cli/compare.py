"""``opt-suite compare DIR --baseline FILE``: fail CI when results regress against a baseline.

Exit status: 0 when no method entry's metric is significantly worse than in the baseline, 1 when at
least one is (a regression) -- or, with ``--require-identical``, when any compared cell differs from
the baseline at all --, 2 on bad input (missing directory or baseline, spec hash mismatch, a
(method, seed, task) pair of the baseline missing from the run, ...). The test is described in
:mod:`opt_suite.report.gate` and named in the output.

Before the statistics, an exact replay line (:mod:`opt_suite.report.replay`) says "identical" or
which cells changed.

The baseline must carry its measured gate rates for the test used (``measured_rates``, written by
``opt-suite gate-rates --stamp``; :mod:`opt_suite.report.measured_rates`): a gate whose power was
never measured is refused (exit 2) unless ``--unmeasured-ok``, which the report then says loudly.

The run must cover the whole baseline. To test a run on part of it (a run of fewer seeds, or
without a method entry), narrow the baseline explicitly: ``--only-seeds 1`` and/or
``--only-methods NAME...``; the output says how much of the baseline was left out.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from opt_suite.cli.numbers import integer
from opt_suite.report.measured_rates import UNITS

if TYPE_CHECKING:
    from opt_suite.report.baseline import Baseline

__all__ = ["add_arguments", "run"]


def _alpha(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"alpha must be a number between 0 and 1, got {text!r}")
    return value


MAX_PERMUTATIONS = 10_000_000  # about a minute per method entry; more buys no precision


def add_unit_argument(parser: argparse.ArgumentParser) -> None:
    """``--unit``: the test's unit, shared by ``compare`` and ``gate-rates`` (one test)."""
    parser.add_argument(
        "--unit",
        choices=UNITS,
        default=None,
        help="the test's unit: every (seed, task) pair, or each seed's mean of range-normalised"
        " differences (the seed as the unit; needs >= 7 seeds for 5 entries at alpha 0.05), both"
        " paired sign-flip tests; or pool: the run's seeds against the baseline's other seeds,"
        " each seed's mean of range-normalised values, a two-sample permutation test (a"
        " baseline of many seeds; default: the baseline's settings.gate_unit, else pair)",
    )


def unit_for_test(asked: str | None, baseline: Baseline) -> str:
    """The unit to test with: ``--unit``, else the one the baseline records, else ``pair``.

    Raises:
      BaselineError: ``--unit`` contradicts the baseline's ``settings.gate_unit`` (the test its
        gate was designed and measured with: another one would gate with unmeasured rates).
    """
    from opt_suite.report import BaselineError

    recorded = baseline.gate_unit
    if asked is not None and recorded is not None and asked != recorded:
        raise BaselineError(
            f"{baseline.path}: settings.gate_unit is {recorded!r}, the test this gate was exported"
            f" for; --unit {asked} would gate with another test (drop --unit, or export the"
            f" baseline again with `opt-suite report DIR --export-baseline FILE --unit {asked}`)"
        )
    return asked or recorded or "pair"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare DIR, --baseline and the test's options."""
    from opt_suite.report.metrics import METRICS

    parser.add_argument("directory", metavar="DIR", type=Path, help="the --out directory of a run")
    parser.add_argument(
        "--baseline",
        metavar="FILE",
        type=Path,
        required=True,
        help="baseline written by `opt-suite report DIR --export-baseline FILE`",
    )
    parser.add_argument(
        "--metric", choices=METRICS, default="auc", help="per-run metric to test (default: auc)"
    )
    parser.add_argument(
        "--alpha",
        type=_alpha,
        default=0.05,
        help="significance level, family-wise over method entries (default: 0.05)",
    )
    parser.add_argument(
        "--correction",
        choices=("holm", "none"),
        default="holm",
        help="multiple-comparison correction over method entries (default: holm)",
    )
    add_unit_argument(parser)
    parser.add_argument(
        "--permutations",
        type=integer(100, MAX_PERMUTATIONS),
        default=10_000,
        help="random permutations / bootstrap resamples (default: 10000)",
    )
    parser.add_argument(
        "--only-seeds",
        metavar="LIST",
        help="compare on these baseline seeds only, e.g. '1' or '0-4,7' (default: every seed;"
        " the run must hold all of them)",
    )
    parser.add_argument(
        "--only-methods",
        nargs="+",
        metavar="NAME",
        help="compare these baseline method entries only (default: every one; the run must hold"
        " all of them)",
    )
    parser.add_argument(
        "--allow-spec-change",
        action="store_true",
        help="compare even if the run's spec hash differs from the baseline's",
    )
    parser.add_argument(
        "--require-identical",
        action="store_true",
        help="exit 1 unless every compared cell equals the baseline to the last bit (a refactor"
        " that must not change numbers)",
    )
    parser.add_argument(
        "--spec",
        metavar="NAME_OR_HASH",
        help="in a directory shared by several specs, compare this one's runs: its name or a "
        "prefix of its hash (default: the latest run's spec)",
    )
    parser.add_argument(
        "--unmeasured-ok",
        action="store_true",
        help="compare against a baseline whose false-alarm rate and power were never measured"
        " for this test (no measured_rates from `gate-rates --stamp`); the report says so loudly",
    )


UNMEASURED = (
    "WARNING: UNMEASURED GATE (--unmeasured-ok): {problem} -- a PASS below says nothing about"
    " what this gate can catch"
)


def run(args: argparse.Namespace) -> int:
    """Compare; 0 pass, 1 regression, 2 bad input."""
    from opt_suite.report import (
        BaselineError,
        CompareError,
        ReportDataError,
        compare_runs,
        format_comparison,
        load_baseline,
    )
    from opt_suite.report.measured_rates import describe, unmeasured_problem
    from opt_suite.report.replay import format_replay
    from opt_suite.report.source import load_view_inputs
    from opt_suite.run_view import RunView, parse_seeds
    from opt_suite.store import StoreError

    if not args.directory.is_dir():
        print(f"opt-suite compare: {args.directory}: no such directory", file=sys.stderr)
        return 2
    from opt_suite.report.sweep import whole_sweep_problem

    try:  # a damaged sweep.json is bad input too
        problem = None if args.spec else whole_sweep_problem(args.directory, "compare")
    except ReportDataError as exc:
        problem = str(exc)
    if problem is not None:
        print(f"opt-suite compare: {problem}", file=sys.stderr)
        return 2
    try:
        only_seeds = None if args.only_seeds is None else parse_seeds(args.only_seeds)
    except ValueError as exc:
        print(f"opt-suite compare: --only-seeds: {exc}".replace("--seeds: ", ""), file=sys.stderr)
        return 2
    try:
        baseline = load_baseline(args.baseline)
        unit = unit_for_test(args.unit, baseline)
        with RunView(args.directory, args.spec) as view:
            inputs, warnings = load_view_inputs(view)
        # Printed first: a cell that failed in the run is often why a comparison is impossible.
        for message in warnings:
            print(f"warning: {message}", file=sys.stderr)
        result = compare_runs(
            inputs,
            baseline,
            metric=args.metric,
            alpha=args.alpha,
            allow_spec_change=args.allow_spec_change,
            correction=args.correction,
            permutations=args.permutations,
            only_seeds=only_seeds,
            only_methods=args.only_methods,
            unit=unit,
        )
    except (BaselineError, CompareError, StoreError, ReportDataError) as exc:
        print(f"opt-suite compare: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # exit 1 means a regression and nothing else: anything else is 2
        print(f"opt-suite compare: cannot compare: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    # Checked after the comparison so that a run that cannot be compared says why first; what
    # is refused here is the baseline's unknown power, whatever the run holds.
    unmeasured = unmeasured_problem(
        baseline.path,
        baseline.measured,
        baseline.digest,
        unit=unit,
        metric=args.metric,
        alpha=args.alpha,
        correction=args.correction,
    )
    if unmeasured is not None and not args.unmeasured_ok:
        print(f"opt-suite compare: {unmeasured}", file=sys.stderr)
        return 2
    for message in result.warnings:
        print(f"warning: {message}", file=sys.stderr)
    print(f"opt-suite compare: {args.directory} against {args.baseline}, metric {args.metric}")
    if unmeasured is not None:
        warning = UNMEASURED.format(problem=unmeasured)
        print(warning)
        print(warning, file=sys.stderr)
    else:
        assert baseline.measured is not None
        narrowed = " (of the whole baseline: fewer seeds compared have less power)"
        print(describe(baseline.measured) + (narrowed if args.only_seeds else ""))
    # Exact replay first: "identical" proves a refactor changed no number; "changed" names the
    # cells even when the statistics below find no regression.
    assert result.replay is not None
    print(format_replay(result.replay, str(args.baseline)))
    print()
    print(format_comparison(result))
    if args.require_identical and not result.replay.identical:
        print("FAIL: --require-identical: the run does not replay the baseline exactly")
        return 1
    return 1 if result.regressions else 0
