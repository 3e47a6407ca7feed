"""``opt-suite merge-stores OUT SHARD_DIR...``: join shard run directories into one run.

Shards are ``opt-suite run SPEC --shard i/N --out SHARD_DIR`` runs (e.g. one Slurm array task
each, docs/scaling.md). The merge copies their completed cells, reference returns and expert
checkpoints into ``OUT`` and writes the reports as ``opt-suite run`` would; merging again (another
shard finished, or the same one twice) adds only what is new.

Exit status: 0 when every planned cell of the merged run is done, 1 when some are missing or
failed (rerun those shards, merge again), 2 for bad input: no store, shards of other specs or
code, a conflicting cell (``opt_suite.store.merge``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare ``opt-suite merge-stores``' arguments."""
    parser.add_argument("out", metavar="OUT", help="run directory to merge into (created)")
    parser.add_argument(
        "shards", metavar="SHARD_DIR", nargs="+", help="run directories of the shards (--out)"
    )
    parser.add_argument("--no-report", action="store_true", help="do not write the reports")


def run(args: argparse.Namespace) -> int:
    """Merge the shards, then write the reports; print a one-line summary."""
    from opt_suite.cli.run import _write_reports
    from opt_suite.runner.references import ReferenceError, merge_references
    from opt_suite.store.files import EXPERTS_FOLDER, copy_missing_files
    from opt_suite.store.merge import merge_stores

    out = Path(args.out)
    shards = [Path(s) for s in args.shards]
    summary = merge_stores(out, shards, ["opt-suite", "merge-stores", *sys.argv[2:]])
    for shard in shards:
        # PPO experts' checkpoints: a rerun into OUT (or a reference measured there) reuses them.
        copy_missing_files(shard / EXPERTS_FOLDER, out / EXPERTS_FOLDER)
    try:
        merge_references(out, shards, summary.spec_hash)
    except ReferenceError as exc:
        print(f"opt-suite merge-stores: {exc}", file=sys.stderr)
        return 2
    for note in summary.notes:
        print(f"note: {note}", file=sys.stderr)
    written = [str(out / "results.sqlite")]
    reported = True
    if not args.no_report:
        reports = _write_reports(out, summary.spec_hash)
        reported = reports is not None
        written += reports or []
    missing = summary.planned - summary.done
    state = "all done" if summary.complete else f"{missing} not done"
    if summary.missing_shards:
        state += f", shard(s) {', '.join(summary.missing_shards)} not merged yet"
    if not summary.complete:
        state += ": run or rerun the shards that hold them, then merge again"
    added = (
        f"{summary.runs_added} run(s) and {summary.cells_added} cell(s) added, "
        f"{summary.cells_present} already there"
        if summary.recorded
        else "nothing new to add"
    )
    seeds = ",".join(map(str, summary.seeds))
    print(
        f"opt-suite merge-stores: {summary.spec_name}: {len(shards)} shard(s), {added}; "
        f"{summary.planned} cells planned for seeds {seeds}, {state}; wrote {', '.join(written)}",
        file=sys.stderr,
    )
    return 0 if summary.complete and reported else 1
