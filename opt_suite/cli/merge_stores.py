"""``opt-suite merge-stores OUT SHARD_DIR...``: join shard run directories into one run.

Shards are ``opt-suite run SPEC --shard i/N --out SHARD_DIR`` runs (e.g. one Slurm array task
each, docs/scaling.md). The merge copies their completed cells, reference returns and expert
checkpoints into ``OUT`` and writes the reports as ``opt-suite run`` would; merging again (another
shard finished, or the same one twice) adds only what is new. Shards of a sweep (their
``sweep.json``) are merged variant by variant, and the sweep's reports written.

Exit status: 0 when every planned cell of the merged run is done, 1 when some are missing or
failed (rerun those shards, merge again), 2 for bad input: no store, shards of other specs or
code, a conflicting cell (``opt_suite.store.merge``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare ``opt-suite merge-stores``' arguments."""
    parser.add_argument("out", metavar="OUT", help="run directory to merge into (created)")
    parser.add_argument(
        "shards", metavar="SHARD_DIR", nargs="+", help="run directories of the shards (--out)"
    )
    parser.add_argument("--no-report", action="store_true", help="do not write the reports")


def run(args: argparse.Namespace) -> int:
    """Merge the shards (each variant's, for a sweep), then write the reports; print a summary."""
    from opt_suite.cli.run import _write_reports
    from opt_suite.report.episodes import ReportDataError
    from opt_suite.report.sweep import write_manifest
    from opt_suite.runner.references import ReferenceError, merge_references
    from opt_suite.store.files import EXPERTS_FOLDER, copy_missing_files
    from opt_suite.store.merge import merge_stores

    out = Path(args.out)
    shards = [Path(s) for s in args.shards]
    argv = ["opt-suite", "merge-stores", *sys.argv[2:]]
    try:
        sweep = _sweep_of(out, shards)
    except (ReportDataError, ValueError) as exc:
        print(f"opt-suite merge-stores: error: {exc}", file=sys.stderr)
        return 2
    hashes = [None] if sweep is None else [str(v["spec_hash"]) for v in sweep["variants"]]
    summaries = []
    for spec_hash in hashes:
        summary = merge_stores(out, shards, argv, spec_hash)
        try:
            merge_references(out, shards, summary.spec_hash)
        except ReferenceError as exc:
            print(f"opt-suite merge-stores: {exc}", file=sys.stderr)
            return 2
        summaries.append(summary)
    for shard in shards:
        # PPO experts' checkpoints: a rerun into OUT (or a reference measured there) reuses them.
        copy_missing_files(shard / EXPERTS_FOLDER, out / EXPERTS_FOLDER)
    if sweep is not None:
        entries = [{k: v[k] for k in ("name", "values", "spec_hash")} for v in sweep["variants"]]
        write_manifest(out, sweep["spec"], entries)
    for note in dict.fromkeys(n for summary in summaries for n in summary.notes):
        print(f"note: {note}", file=sys.stderr)
    written = [str(out / "results.sqlite")]
    reported = True
    if not args.no_report:
        own = None if sweep is not None else summaries[0].spec_hash
        reports = _write_reports(out, own, sweep=sweep is not None)
        reported = reports is not None
        written += [p for p in reports or [] if "variants" not in Path(p).parts]
    complete = all(summary.complete for summary in summaries)
    for summary in summaries:
        name = summary.spec_name + (
            "" if sweep is None else f" (variant {_variant_name(sweep, summary.spec_hash)})"
        )
        print(_summary_line(name, len(shards), summary, written), file=sys.stderr)
    return 0 if complete and reported else 1


def _sweep_of(out: Path, shards: list[Path]) -> dict[str, Any] | None:
    """The shards' sweep manifest (``sweep.json``), or None when they are runs of one spec.

    Raises:
      ValueError: some shards are sweeps and some not, their sweeps differ, or ``out`` holds
        another sweep (or one spec's runs): one line, nothing written.
    """
    from opt_suite.report.sweep import is_sweep_run, read_manifest
    from opt_suite.store.contents import has_runs

    found = [(shard, read_manifest(shard) if is_sweep_run(shard) else None) for shard in shards]
    if all(manifest is None for _, manifest in found):
        if is_sweep_run(out):
            raise ValueError(f"{out} holds a sweep; the shards are runs of one spec")
        return None
    first_shard, first = found[0]

    def variants(manifest: dict[str, Any] | None) -> Any:
        return (
            None
            if manifest is None
            else [(v["name"], v["spec_hash"]) for v in manifest["variants"]]
        )

    for shard, manifest in found[1:]:
        if variants(manifest) != variants(first):
            raise ValueError(
                f"{shard} and {first_shard} are not shards of one sweep (their sweep.json name"
                " other variants or spec hashes, or one is not a sweep); only shards of one"
                " sweep merge"
            )
    if is_sweep_run(out) and variants(read_manifest(out)) != variants(first):
        raise ValueError(f"{out} holds another sweep than {first_shard}")
    if not is_sweep_run(out) and has_runs(out) and out not in shards:
        raise ValueError(f"{out} holds a run of one spec, not of the shards' sweep")
    return first


def _variant_name(sweep: dict[str, Any], spec_hash: str) -> str:
    return next(str(v["name"]) for v in sweep["variants"] if v["spec_hash"] == spec_hash)


def _summary_line(name: str, shards: int, summary: Any, written: list[str]) -> str:
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
    return (
        f"opt-suite merge-stores: {name}: {shards} shard(s), {added}; "
        f"{summary.planned} cells planned for seeds {seeds}, {state}; wrote {', '.join(written)}"
    )
