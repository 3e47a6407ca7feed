"""``opt-suite validate SPEC [SPEC…] [--resolved]``: check specs and report every problem at once.

Prints ``ok: NAME (hash …): WORK`` for each valid spec (WORK: cells, env steps and the largest
array, see :mod:`opt_suite.runner.estimate`), then ``time: about …`` with ``--workers N`` (default
one per core), the plan priced by the committed calibration (:mod:`opt_suite.runner.cost_model`;
``docs/estimates.md`` says how far off it was on the timed specs), and a ``warning:`` line on
stderr for each method entry whose discovery takes far more gradient steps than the spec's other
methods' (the status stays 0), or its problems on stderr, one line each
(``file:LINE:COL: key.path: message``), and exits with status 2 if any spec has a problem. With
``--resolved`` it prints the canonical YAML instead: every default filled in, ``extends`` merged,
keys sorted — exactly what a run will use. SPEC may also name a bundled spec (``fourrooms-quick``).
A spec with a ``sweep:`` block is checked variant by variant (``opt_suite.spec.sweep``); its
variants are listed, and ``--resolved`` prints each one.

``--deep`` also runs the contract checks of every component a valid spec names, with its params
on its own family (:mod:`opt_suite.testing.spec_checks`): each failed check is one line on stderr
naming the component, and the status is 2. It runs the components (a few cells' worth of work).
A component that raises ``SystemExit`` (even ``sys.exit(0)``) or a ``KeyboardInterrupt`` no signal
caused fails its check: the status is 2, never 0, and only the user's own Ctrl-C stops validate.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from typing import Any

from opt_suite.interrupts import CODE_EXITS, raised_by_code, signals_noted
from opt_suite.runner.progress import format_duration
from opt_suite.spec import SpecError, canonical_yaml, find_spec, load_sweep, spec_hash
from opt_suite.spec.schema import Spec

HASH_CHARS = 12  # shown; the full hash is in the --resolved header


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the command's arguments."""
    parser.add_argument("specs", nargs="+", metavar="SPEC", help="spec file, or bundled spec name")
    parser.add_argument(
        "--resolved", action="store_true", help="print the canonical YAML of each valid spec"
    )
    parser.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="the time estimate's worker processes, as `run --workers N` (default: one per core)",
    )
    parser.add_argument(
        "--deep",
        action="store_true",
        help="also run the contract checks of the spec's family, methods, learner and source "
        "(runs them briefly)",
    )


def _work(spec: Spec) -> str:
    """The spec's work estimate (``opt_suite.runner.estimate``), or why there is none."""
    from opt_suite.runner.planning import resolve_components, work_estimate

    try:
        components = resolve_components(spec)
        family = components.family(spec.family.params)
        t = spec.tasks
        train, _ = family.make_tasks(t.vary, t.list, t.count, t.train, t.test, t.seed)
        seeds = range(spec.evaluation.seeds)
        return work_estimate(spec, seeds, components, family, train).describe()
    except Exception as exc:  # the estimate informs; it must not make a valid spec fail
        return f"no work estimate ({type(exc).__name__}: {exc})"


def _time(spec: Spec, workers: int, done: set[str]) -> tuple[float, str]:
    """(seconds, one line): how long ``spec`` takes on ``workers``, its cells in ``done`` free.

    Adds the spec's cells to ``done``, so that a sweep's later variants reuse the earlier ones'
    as the run does. NaN seconds when there is no estimate (the line says why).
    """
    from opt_suite.runner.cost_model import estimate_time, load_calibration
    from opt_suite.runner.planning import cost_keys, plan_spec, resolve_components

    calibration = load_calibration()
    if calibration is None:
        return math.nan, "no time estimate: this installation has no calibration"
    try:
        components = resolve_components(spec)
        plan = plan_spec(spec, list(range(spec.evaluation.seeds)), components)[3]
        keyed = cost_keys(spec, components, plan)
    except Exception as exc:  # the estimate informs; it must not make a valid spec fail
        return math.nan, f"no time estimate ({type(exc).__name__}: {exc})"
    found = estimate_time(plan.cells, keyed, calibration, workers, done, spec.evaluation.learner)
    done.update(c.cell_id for c in plan.cells)
    return found.wall_s, found.describe()


def _workers(args: argparse.Namespace) -> int:
    """The workers the time estimate schedules on (``--workers 0`` runs in one process: 1)."""
    return (os.cpu_count() or 1) if args.workers is None else max(1, args.workers)


def _cost_warnings(spec: Spec) -> None:
    """Warn (stderr, status unchanged) about method entries with far costlier discovery."""
    from opt_suite.runner.estimate import costly_discoveries
    from opt_suite.runner.protocol import resolve_components

    try:
        methods = resolve_components(spec).methods
    except Exception:  # the warning informs; _work already says why components did not resolve
        return
    for message in costly_discoveries(spec, methods):
        print(f"warning: {spec.name}: {message}", file=sys.stderr)


def _say_imports(spec: Any) -> None:
    """Say which module a ``module:Id`` env id imported: naming a module runs its code."""
    env_id = getattr(spec.family.params, "id", None)
    if isinstance(env_id, str) and ":" in env_id:
        module = env_id.rpartition(":")[0]
        print(
            f"  note: family.params.id imported module {module!r} of an installed package; "
            "naming a module runs its import, as installing a plugin does"
        )


def run(args: argparse.Namespace) -> int:
    """Validate every spec; 0 if all are valid, else 2."""
    from opt_suite.cli.run import max_workers

    if args.workers is not None and not 0 <= args.workers <= max_workers():
        print(
            f"opt-suite validate: --workers must be between 0 and {max_workers()} on this"
            f" machine, got {args.workers}",
            file=sys.stderr,
        )
        return 2
    status = 0
    for number, arg in enumerate(args.specs):
        path = find_spec(arg)
        # A plugin's sys.exit(0) or KeyboardInterrupt (in its import, Params.check, discover...)
        # must fail the spec, never end validate with 0 nor be reported as the user's Ctrl-C.
        with signals_noted() as arrived:
            try:
                status = max(status, _one(args, number, path))
            except CODE_EXITS as exc:
                if not raised_by_code(exc, arrived):
                    raise
                print(
                    f"{path}: a component raised {type(exc).__name__}({exc}) while validating "
                    "(its code, not a signal): the spec cannot be validated",
                    file=sys.stderr,
                )
                status = 2
    return status


def _one(args: argparse.Namespace, number: int, path: Any) -> int:
    """Validate one spec (its ``number`` among the arguments); 0 if valid, else 2."""
    status = 0
    try:
        sweep = load_sweep(path)
    except SpecError as exc:
        print("\n".join(exc.problems), file=sys.stderr)
        return 2
    except Exception as exc:  # a bug must still not print a traceback at a user
        print(f"{path}: internal error while validating: {exc!r}", file=sys.stderr)
        return 2
    spec = sweep.base
    if args.resolved:
        for i, (variant, one) in enumerate(sweep.specs):
            separator = "---\n" if number or i else ""
            title = spec.name if variant is None else f"{spec.name}, sweep variant {variant}"
            print(f"{separator}# {title}: resolved from {path}\n# spec_hash: {spec_hash(one)}")
            print(canonical_yaml(one), end="")
    elif not sweep.variants:
        print(f"ok: {spec.name} (hash {spec_hash(spec)[:HASH_CHARS]}): {_work(spec)}")
        print(f"  time: {_time(spec, _workers(args), set())[1]}")
        _cost_warnings(spec)
        _say_imports(spec)
    else:
        print(f"ok: {spec.name}: a sweep of {len(sweep.variants)} variants, each valid")
        done: set[str] = set()
        total = 0.0
        for i, member in enumerate(sweep.variants):
            digest = spec_hash(member.spec)[:HASH_CHARS]
            print(f"  {member.name} (hash {digest}): {_work(member.spec)}")
            seconds, line = _time(member.spec, _workers(args), done)
            total += seconds
            later = i > 0 and not math.isnan(seconds)
            reused = " (the earlier variants' cells reused)" if later else ""
            print(f"    time: {line}{reused}")
            _cost_warnings(member.spec)
        if not math.isnan(total):
            print(f"  time in all: about {format_duration(total)} with --workers {_workers(args)}")
    if args.deep and not args.resolved:
        for variant, one in sweep.specs:
            status = max(status, _deep(one, path if variant is None else f"{path} [{variant}]"))
    return status


def _deep(spec: Spec, where: object) -> int:
    """Run the contract checks of ``spec``'s components; print the outcome; 0 or 2."""
    from opt_suite.testing.spec_checks import check_spec_components

    try:
        report = check_spec_components(spec)
    except Exception as exc:  # resolving or building the family: one line, never a traceback
        print(f"{where}: deep check: could not start: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    for problem in report.problems:
        print(f"{where}: deep check: {problem}", file=sys.stderr)
    if report.problems:
        return 2
    print(f"deep: {len(report.checked)} components pass their contract checks")
    return 0
