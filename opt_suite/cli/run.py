"""``opt-suite run SPEC``: run a spec's whole protocol, store the results and write the reports.

A spec with a ``sweep:`` block runs each variant in turn into the same results folder (cells the
variants share are computed once) and writes each variant's report under ``variants/<name>/``
plus ``sweep.md``/``sweep.csv``, one table across the variants (``opt_suite.report.sweep``).

Exit status: 0 when every cell is done, 1 when some cell failed (they are listed and retried by the
next run of the same command), 2 for bad input (spec, names, seeds, directory, backend).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

# Re-exported: reading commands and `run --seeds` share the one parser (opt_suite.run_view).
from opt_suite.run_view import MAX_SEED_INDEX, parse_seeds, select_methods_and_seeds

__all__ = ["add_arguments", "run", "MAX_SEED_INDEX", "parse_seeds", "select_methods_and_seeds"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare ``opt-suite run``'s arguments."""
    parser.add_argument("spec", help="spec file (YAML), or the name of a bundled spec")
    parser.add_argument(
        "--out", metavar="DIR", help="results directory (default: results/<spec name>)"
    )
    parser.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="worker processes (default: one per core; 0: run cells in this process; at most "
        f"{WORKERS_PER_CORE} per core)",
    )
    parser.add_argument(
        "--backend", choices=("local", "ray"), default="local", help="where cells run"
    )
    parser.add_argument("--address", metavar="ADDR", help="Ray cluster to join (--backend ray)")
    parser.add_argument(
        "--seeds",
        metavar="LIST",
        help="seed indices to run, e.g. '0-4' or '0,2,7' (default: 0..evaluation.seeds-1)",
    )
    parser.add_argument(
        "--shard",
        metavar="I/N",
        help="run only shard I of N (1-based): every N-th of the run's seeds from the I-th, into "
        "a store of its own; join the shards with `opt-suite merge-stores` (docs/scaling.md)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress line")
    parser.add_argument("--no-report", action="store_true", help="do not write the reports")


# Workers beyond the cores only queue for them, and each holds its own TensorFlow (hundreds of MB):
# --workers 100000 once started 168 processes and 6 GB for a 30-cell spec. A few per core still
# let cells that wait on I/O overlap.
WORKERS_PER_CORE = 4


def max_workers() -> int:
    """The largest ``--workers`` accepted on this machine: :data:`WORKERS_PER_CORE` per core."""
    return WORKERS_PER_CORE * (os.cpu_count() or 1)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread: the run unwinds exactly as on Ctrl-C.

    Unwinding marks the run ``interrupted`` in the store, releases the cell claims and stops the
    worker pool, so no worker and no semaphore outlives the runner (the default action of SIGTERM
    would kill the process on the spot and leave the run ``running`` forever).
    """

    signum = signal.SIGTERM


def _on_sigterm(signum: int, frame: object) -> None:
    raise Terminated()


def _check_writable(directory: Path) -> str | None:
    """None if results can be written in ``directory`` (created if missing), else why not."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        probe = directory / f".write-test-{os.getpid()}"
        probe.write_text("ok")
        probe.unlink()
    except OSError as exc:
        return f"cannot write results to {directory}: {exc.strerror or exc}"
    return None


def run(args: argparse.Namespace) -> int:
    """Run the protocol; print a one-line summary and the failed cells."""
    from opt_suite.registry import RegistryError
    from opt_suite.runner import BackendError, ClusterLost, run_protocol
    from opt_suite.runner.estimate import WorkTooLarge
    from opt_suite.runner.progress import format_duration
    from opt_suite.runner.shards import parse_shard, shard_seeds
    from opt_suite.spec import SpecError, find_spec, load_sweep, spec_hash
    from opt_suite.store import StoreError

    def error(message: str, status: int = 2) -> int:
        print(f"opt-suite run: error: {message}", file=sys.stderr)
        return status

    try:
        seeds = parse_seeds(args.seeds) if args.seeds else None
        shard = parse_shard(args.shard) if args.shard is not None else None
    except ValueError as exc:
        return error(str(exc))
    if args.workers is not None and args.workers < 0:
        return error(f"--workers must be >= 0, got {args.workers}")
    if args.workers is not None and args.workers > max_workers():
        return error(
            f"--workers {args.workers} is more than {max_workers()} ({WORKERS_PER_CORE} per core "
            f"on this machine's {os.cpu_count() or 1}); more workers than cores only queue for them"
        )
    if args.address and args.backend != "ray":
        return error("--address needs --backend ray")
    try:
        sweep = load_sweep(find_spec(args.spec))
    except SpecError as exc:
        for line in exc.problems:
            print(line, file=sys.stderr)
        return 2
    spec = sweep.base
    # A sweep's shard takes the same share of every variant's seeds (variants may differ in
    # evaluation.seeds), so merging the shards gives every variant whole.
    variant_seeds: dict[str, Any] = {v.name: seeds for v in sweep.variants}
    if shard is not None:
        try:
            for variant in sweep.variants:
                own = range(variant.spec.evaluation.seeds) if seeds is None else seeds
                variant_seeds[variant.name] = shard_seeds(own, shard)
            seeds = shard_seeds(range(spec.evaluation.seeds) if seeds is None else seeds, shard)
        except ValueError as exc:
            return error(str(exc))
    directory = Path(args.out or Path("results") / spec.name)
    problem = _check_writable(directory)
    if problem:
        return error(problem)
    from opt_suite.store.filesystems import lost_locks_warning, shared_filesystem_note

    for notice in (shared_filesystem_note(directory), lost_locks_warning(directory)):
        if notice:
            print(notice, file=sys.stderr)
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if in_main_thread else None
    if sweep.variants:
        try:
            return _run_sweep(args, sweep, directory, variant_seeds)
        except ClusterLost as exc:  # not bad input: a rerun completes it
            return error(str(exc), status=1)
        except (RegistryError, BackendError, StoreError, WorkTooLarge) as exc:
            return error(str(exc))
        except OSError as exc:
            return error(f"cannot write results to {directory}: {exc}")
        finally:
            if in_main_thread:
                signal.signal(signal.SIGTERM, previous)
    try:
        result = run_protocol(
            spec,
            directory,
            seeds=seeds,
            workers=args.workers,
            backend=args.backend,
            address=args.address,
            argv=["opt-suite", "run", *sys.argv[2:]],
            quiet=args.quiet,
        )
    except ClusterLost as exc:  # not bad input: a rerun completes it
        return error(str(exc), status=1)
    except (RegistryError, BackendError, StoreError, WorkTooLarge) as exc:
        return error(str(exc))
    except OSError as exc:  # e.g. the disk is full before any cell ran (SQLite's: StoreError)
        return error(f"cannot write results to {directory}: {exc}")
    finally:
        if in_main_thread:
            signal.signal(signal.SIGTERM, previous)

    summary = result.summary
    for _label, message in summary.failed:
        print(f"failed: {message}", file=sys.stderr)
    for label, reason in summary.skipped:
        print(f"not run: {label} ({reason})", file=sys.stderr)
    written = [str(directory / "results.sqlite")]
    reported = True
    if not args.no_report:
        reports = _write_reports(directory, spec_hash(spec))
        reported = reports is not None
        written += reports or []
    state = (
        "all done"
        if summary.ok
        else f"{len(summary.failed)} failed, {len(summary.skipped)} not run"
    )
    print(
        f"opt-suite run: {spec.name}: {summary.total} cells ({summary.reused} reused, "
        f"{summary.computed} computed"
        + (f", {summary.by_others} by another runner" if summary.by_others else "")
        + f") {state} in {format_duration(result.wall_s)}; wrote {', '.join(written)}"
        + ("" if summary.ok else retry_hint(summary, directory)),
        file=sys.stderr,
    )
    return 0 if summary.ok and reported else 1


def retry_hint(summary: Any, directory: Path) -> str:
    """What to do about failed cells: rerun only for those whose failure may not come back.

    A cell is a function of its inputs and seeds: a failure of its own code (e.g. an env's
    ``TypeError`` on a kwarg) is the same on every rerun, so "rerun to retry" would be wrong there.
    """
    logs = f"worker output: {directory / 'logs'}"
    fixed = len(summary.deterministic)
    if summary.failed and fixed == len(summary.failed):
        return (
            f"; the failures come from the cells' inputs and would repeat on a rerun: fix the "
            f"cause named above, then rerun ({logs})"
        )
    if fixed:
        return (
            f"; rerun the same command to retry the {len(summary.failed) - fixed} failed cell(s) "
            f"that may succeed on retry ({fixed} would fail again until their cause is fixed; "
            f"{logs})"
        )
    return f"; rerun the same command to retry the failed cells ({logs})"


def _run_sweep(args: argparse.Namespace, sweep: Any, directory: Path, seeds: dict[str, Any]) -> int:
    """Run every variant of a sweep into ``directory``'s one store, then the sweep's reports.

    One store for all variants: a cell whose inputs two variants share (e.g. the demonstrations
    and every discovery when only the learner's α changes) has one content hash, so the second
    variant reuses it — computed once. ``sweep.json`` (written first, so a crash leaves it) names
    the variants; the summary line says how many planned cells were shared. ``seeds``: each
    variant's seed indices by name (None: its own ``evaluation.seeds``).
    """
    from opt_suite.report.sweep import write_manifest
    from opt_suite.runner import run_protocol
    from opt_suite.runner.progress import format_duration
    from opt_suite.spec import spec_hash

    entries = [
        {"name": v.name, "values": v.values, "spec_hash": spec_hash(v.spec)} for v in sweep.variants
    ]
    write_manifest(directory, sweep.base.name, entries)
    planned = computed = failed = 0
    wall = 0.0
    for i, (variant, entry) in enumerate(zip(sweep.variants, entries, strict=True)):
        print(f"opt-suite run: variant {i + 1}/{len(entries)}: {variant.name}", file=sys.stderr)
        result = run_protocol(
            variant.spec,
            directory,
            seeds=seeds[variant.name],
            workers=args.workers,
            backend=args.backend,
            address=args.address,
            argv=["opt-suite", "run", *sys.argv[2:]],
            quiet=args.quiet,
        )
        summary = result.summary
        for _label, message in summary.failed:
            print(f"failed: {variant.name}: {message}", file=sys.stderr)
        for label, reason in summary.skipped:
            print(f"not run: {variant.name}: {label} ({reason})", file=sys.stderr)
        entry["cells"] = {
            "planned": summary.total,
            "computed": summary.computed,
            "reused": summary.reused,
            "failed": len(summary.failed) + len(summary.skipped),
        }
        planned += summary.total
        computed += summary.computed
        failed += len(summary.failed) + len(summary.skipped)
        wall += result.wall_s
    write_manifest(directory, sweep.base.name, entries)
    written = [str(directory / "results.sqlite"), str(directory / "sweep.json")]
    reported = True
    if not args.no_report:
        reports = _write_reports(directory, None, sweep=True)
        reported = reports is not None
        written += [p for p in reports or [] if "variants" not in Path(p).parts]
    print(
        f"opt-suite run: {sweep.base.name}: sweep of {len(entries)} variants, {planned} cells "
        f"planned, {computed} computed, {planned - computed} shared with another variant or "
        f"done before; {'all done' if not failed else f'{failed} failed or not run'} in "
        f"{format_duration(wall)}; wrote {', '.join(written)} and variants/<name>/",
        file=sys.stderr,
    )
    return 0 if not failed and reported else 1


def _write_reports(directory: Path, own_spec: str | None, sweep: bool = False) -> list[str] | None:
    """The report files written, or None (after saying why) when they could not be written.

    A problem there never loses the stored results: ``opt-suite report DIR`` can write them later.
    """
    try:
        from opt_suite.report import write_reports
    except ImportError as exc:
        print(f"reports not written: opt_suite.report is unavailable ({exc})", file=sys.stderr)
        return None
    try:
        if sweep:
            from opt_suite.report.sweep import write_sweep_reports

            return [str(p) for p in write_sweep_reports(directory)]
        written = [str(p) for p in write_reports(directory, own_spec)]
    except Exception as exc:
        # A full disk may be gone on retry; an error of the report code will come back.
        then = (
            f"retry with `opt-suite report {directory}`"
            if isinstance(exc, OSError)
            else f"`opt-suite report {directory}` writes them once the cause is fixed"
        )
        print(
            f"reports not written: {type(exc).__name__}: {exc} (the results are stored; {then})",
            file=sys.stderr,
        )
        return None
    from opt_suite.report.tables import leaderboard_warnings

    for message in leaderboard_warnings(directory):
        print(f"warning: leaderboard: {message}", file=sys.stderr)
    return written
