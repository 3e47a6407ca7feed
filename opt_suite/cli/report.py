"""``opt-suite report DIR [--export-baseline FILE]``: (re)write a run's reports from its store.

Writes ``returns.csv``, ``leaderboard.{md,csv,json}``, ``curves.png`` and ``index.html`` into DIR
(the same files ``opt-suite run`` writes at its end); ``--export-baseline FILE`` also writes the CI
baseline that ``opt-suite compare`` tests later runs against -- refreshing an existing one prints
which cells moved (:mod:`opt_suite.report.replay`); ``--spec NAME_OR_HASH`` chooses one
spec's runs in a directory several specs ran in (default: the latest run's spec). Exit status 2 on
bad input (an unknown or ambiguous ``--spec`` too, listing the candidates). For a
sweep run (a ``sweep.json`` in DIR) it writes every variant's report under ``variants/<name>/`` and
``sweep.md``/``sweep.csv``, the metric and P(improvement) per variant.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from opt_suite.report.measured_rates import UNITS

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare DIR and --export-baseline."""
    parser.add_argument("directory", metavar="DIR", type=Path, help="the --out directory of a run")
    parser.add_argument(
        "--export-baseline",
        metavar="FILE",
        type=Path,
        help="also write the run's per-run metrics as a baseline for `opt-suite compare`",
    )
    parser.add_argument(
        "--unit",
        choices=UNITS,
        help="with --export-baseline: record the gate's test in the baseline (settings.gate_unit;"
        " compare and gate-rates then use it, and refuse another --unit); default: what the"
        " baseline being refreshed recorded, else nothing (compare's own default, pair)",
    )
    parser.add_argument(
        "--spec",
        metavar="NAME_OR_HASH",
        help="in a directory shared by several specs, report this one: its name or a prefix of "
        "its hash (default: the latest run's spec)",
    )


def _baseline_warnings(inputs, analysis, unit: str | None) -> list[str]:
    """What would make ``opt-suite compare`` against this baseline refuse or mean little."""
    from opt_suite.report.gate import power_problem

    if unit == "seed":
        units = {name: len(m.seeds) for name, m in analysis.metrics.items()}
    else:
        units = {name: m.values["auc"].size for name, m in analysis.metrics.items()}
    tasks = max(len(m.tasks) for m in analysis.metrics.values())
    messages = []
    # The pool unit's power depends on the run it is given (its seeds against the others), so
    # compare checks it then (power_problem with the pool's sizes); a pair or seed test's here.
    problem = None if unit == "pool" else power_problem(units, tasks, unit=unit or "pair")
    if problem is not None:
        messages.append(f"at the default alpha 0.05, {problem}")
    if inputs.incomplete:
        messages.append("it was exported from an incomplete run: " + "; ".join(inputs.incomplete))
    return messages


def _previous_baseline(path: Path) -> Any:
    """The baseline a refresh replaces, to print what moved; None when there is none yet.

    A file there that is not a baseline is not overwritten: it may be the user's.
    """
    from opt_suite.files_guard import InputError
    from opt_suite.report import BaselineError, load_baseline

    if not path.exists():
        return None
    try:
        return load_baseline(path)
    except BaselineError as exc:
        raise InputError(
            f"--export-baseline {path}: the file there is not an opt-suite baseline, and is not"
            f" overwritten ({exc}); remove it or name another file"
        ) from None


def _measured_rates_note(path: Path, previous: Any) -> str:
    """Keep the previous file's measured rates when the numbers are the same; else say so.

    The rates hold for the numbers they were measured against (their digest): a refresh that
    changed none keeps them, one that changed any needs them measured again before ``compare``
    trusts the gate.
    """
    from opt_suite.report import load_baseline
    from opt_suite.report.baseline import stamp_baseline

    measured = getattr(previous, "measured", None)
    if measured is not None and measured.baseline_digest == load_baseline(path).digest:
        stamp_baseline(path, measured)
        return f"kept the measured gate rates of {path} (measured_rates): the numbers are the same"
    return (
        f"note: {path} has no measured gate rates"
        + (" (the previous file's were of other numbers)" if measured is not None else "")
        + f": `opt-suite compare` refuses it until `opt-suite gate-rates FRESH_RUN --baseline"
        f" {path} --stamp` measures them on a run of fresh seeds (or is run with --unmeasured-ok)"
    )


def run(args: argparse.Namespace) -> int:
    """Write the reports (and the baseline); 0 on success, 2 on bad input."""
    from opt_suite.files_guard import InputError, output_file
    from opt_suite.report import (
        REPORT_FILES,
        ReportDataError,
        analyse,
        export_baseline,
        load_baseline,
        write_report_files,
    )
    from opt_suite.report.replay import format_replay, replay
    from opt_suite.report.source import load_view_inputs
    from opt_suite.report.stale import report_owner, set_aside_stale
    from opt_suite.report.tables import leaderboard_warnings
    from opt_suite.run_view import RunView
    from opt_suite.store import StoreError

    if not args.directory.is_dir():
        print(f"opt-suite report: {args.directory}: no such directory", file=sys.stderr)
        return 2
    if args.unit is not None and args.export_baseline is None:
        print(
            "opt-suite report: --unit records the gate's test in a baseline: it needs "
            "--export-baseline FILE",
            file=sys.stderr,
        )
        return 2
    from opt_suite.report.sweep import is_sweep_run, write_sweep_reports

    if is_sweep_run(args.directory):
        if args.export_baseline is not None:
            print(
                f"opt-suite report: {args.directory} is a sweep run: export a baseline from one "
                "variant's own run (opt-suite run the variant's spec into its own folder)",
                file=sys.stderr,
            )
            return 2
        try:
            for path in write_sweep_reports(args.directory):
                print(f"wrote {path}")
        except (StoreError, ReportDataError) as exc:
            print(f"opt-suite report: {exc}", file=sys.stderr)
            return 2
        except OSError as exc:
            print(f"opt-suite report: cannot write: {exc}", file=sys.stderr)
            return 2
        return 0
    try:
        previous_baseline = None
        if args.export_baseline is not None:  # before anything is written
            output_file(args.export_baseline, "the baseline file (--export-baseline)")
            previous_baseline = _previous_baseline(args.export_baseline)
        for name in (*REPORT_FILES, "fig1a.png", "discovery.png"):
            # Rewritten in place: a FIFO there would block the write forever, a folder fail it.
            output_file(args.directory / name, "a report file")
        with RunView(args.directory, args.spec) as view:
            if (which := view.which()) is not None:
                print(f"note: {which}")
            inputs, warnings = load_view_inputs(view)
        for message in warnings:
            print(f"warning: {message}", file=sys.stderr)
        previous = report_owner(args.directory)
        written = write_report_files(inputs, args.directory)
        for path in written:
            print(f"wrote {path}")
        for message in set_aside_stale(args.directory, inputs.spec_hash, written, previous):
            print(f"note: {message}")
        for message in leaderboard_warnings(args.directory):
            print(f"warning: leaderboard: {message}", file=sys.stderr)
        if args.export_baseline is not None:
            analysis = analyse(inputs)
            # A refresh keeps the test the baseline was exported for unless told otherwise.
            unit = args.unit or getattr(previous_baseline, "gate_unit", None)
            path = export_baseline(inputs, analysis, args.export_baseline, unit)
            print(f"wrote baseline {path}")
            print(_measured_rates_note(path, previous_baseline))
            if previous_baseline is not None:  # a refresh: say what moved
                print(
                    format_replay(
                        replay(load_baseline(path).methods, previous_baseline.methods),
                        f"the previous {path}",
                    )
                )
            for message in _baseline_warnings(inputs, analysis, unit):
                print(f"warning: baseline {path}: {message}", file=sys.stderr)
    except (StoreError, ReportDataError, InputError) as exc:
        print(f"opt-suite report: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"opt-suite report: cannot write: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # never a traceback: the message says what could not be reported
        print(f"opt-suite report: cannot report: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    return 0
