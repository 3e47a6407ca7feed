"""``opt-suite gate-rates DIR --baseline FILE``: the results gate's false-alarm rate and power.

``DIR`` holds a run of the baseline's spec under seeds the baseline does not have (``opt-suite run
SPEC --seeds 2-41 --out DIR`` for a two-seed baseline and 20 reruns; with ``--unit pool``, groups
of the spec's ``evaluation.seeds``, each against the whole baseline pool). Each group of fresh
seeds is compared with the baseline by the gate itself, as ``compare`` would, unchanged (false
alarms) and with each method entry made worse by fractions of each task's metric range (power); see
:mod:`opt_suite.report.gate_rates`. Exit 0 when the false-alarm rate is at most ``--alpha``, 1 when
it is above (the gate trips without regressions more often than it promises), 2 on bad input.

``--stamp`` writes the measured rates into the baseline file (``measured_rates``,
:mod:`opt_suite.report.measured_rates`): ``compare`` refuses a baseline whose rates were never
measured for the test it runs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from opt_suite.cli.compare import MAX_PERMUTATIONS, _alpha, add_unit_argument, unit_for_test
from opt_suite.cli.numbers import integer, real


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare DIR, --baseline and the gate's settings."""
    from opt_suite.report.metrics import METRICS

    parser.add_argument(
        "directory", metavar="DIR", type=Path, help="a run of the spec under the fresh seeds"
    )
    parser.add_argument("--baseline", metavar="FILE", type=Path, required=True)
    parser.add_argument("--metric", choices=METRICS, default="auc")
    parser.add_argument("--alpha", type=_alpha, default=0.05)
    parser.add_argument(
        "--degradation",
        type=real(0.0, 10.0, open_low=True),
        action="append",
        help="an injected degradation, as a fraction of each task's metric range "
        "(repeatable; default: 0.05, 0.1 and 0.2)",
    )
    parser.add_argument("--permutations", type=integer(100, MAX_PERMUTATIONS), default=10_000)
    add_unit_argument(parser)
    parser.add_argument("--json", action="store_true", help="print the rates as JSON")
    parser.add_argument(
        "--stamp",
        action="store_true",
        help="write the measured rates into the baseline file (measured_rates), which `compare`"
        " requires for the test it runs",
    )


def run(args: argparse.Namespace) -> int:
    """Measure and print; 0 when false alarms are within alpha, 1 when above, 2 on bad input."""
    import datetime

    from opt_suite.report import BaselineError, CompareError, ReportDataError, load_baseline
    from opt_suite.report.baseline import stamp_baseline
    from opt_suite.report.gate_rates import CORRECTION, gate_rates, measured
    from opt_suite.report.source import load_view_inputs
    from opt_suite.run_view import RunView
    from opt_suite.store import StoreError

    fractions = tuple(args.degradation or (0.05, 0.1, 0.2))
    try:
        baseline = load_baseline(args.baseline)
        unit = unit_for_test(args.unit, baseline)
        with RunView(args.directory) as view:
            inputs, warnings = load_view_inputs(view)
            # The pool unit's rerun is a run as CI makes it: the spec's seeds, not the baseline's.
            run_size = view.spec().evaluation.seeds if unit == "pool" else None
        for message in warnings:
            print(f"warning: {message}", file=sys.stderr)
        rates = gate_rates(
            inputs,
            baseline,
            fractions=fractions,
            metric=args.metric,
            alpha=args.alpha,
            permutations=args.permutations,
            unit=unit,
            run_size=run_size,
        )
        if args.stamp:  # what was measured, on the content it was measured against
            today = datetime.datetime.now(datetime.UTC).date().isoformat()
            stamp_baseline(args.baseline, measured(rates, baseline, today))
    except (BaselineError, CompareError, ReportDataError, StoreError, ValueError) as exc:
        print(f"opt-suite gate-rates: {exc}", file=sys.stderr)
        return 2
    if args.json:
        doc = {
            "metric": rates.metric,
            "alpha": rates.alpha,
            "unit": rates.unit,
            "correction": CORRECTION,
            "baseline_digest": baseline.digest,
            "stamped": args.stamp,
            "reruns": rates.reruns,
            "false_alarms": rates.false_alarms,
            "false_alarm_rate": rates.false_alarm_rate,
            "flagged_methods": dict(rates.flagged_methods),
            "power": {str(f): dict(rates.power[f]) for f in fractions},
            "power_rate": {str(f): rates.power_rate(f) for f in fractions},
        }
        print(json.dumps(doc, indent=1))
    else:
        flagged = ", ".join(f"{m} {n}" for m, n in rates.flagged_methods.items() if n)
        pooled = max(len(runs.seeds) for runs in baseline.methods.values())
        what = (
            f" (each {run_size} fresh seeds against the baseline's {pooled}, unpaired)"
            if rates.unit == "pool"
            else ""
        )
        print(
            f"{rates.reruns} reruns under fresh seeds, metric {rates.metric}, unit"
            f" {rates.unit}{what},"
            f" alpha "
            f"{rates.alpha:g}: false alarms {rates.false_alarms}/{rates.reruns} = "
            f"{rates.false_alarm_rate:.3f}" + (f" (flagged: {flagged})" if flagged else "")
        )
        for fraction in fractions:
            caught = rates.power[fraction]
            per = ", ".join(f"{m} {n}/{rates.reruns}" for m, n in caught.items())
            print(
                f"power at {fraction:g} of each task's range: {rates.power_rate(fraction):.3f} "
                f"({per})"
            )
        if args.stamp:
            print(f"stamped {args.baseline} with these rates (measured_rates)")
    return 0 if rates.false_alarm_rate <= rates.alpha else 1
