"""``opt-suite export-tensorboard RUN_DIR [--out DIR] [--spec NAME_OR_HASH]``: TensorBoard logs.

Writes one TensorBoard run per (method entry, seed, test task), named as CleanRL names its runs,
``{env_id}__{exp_name}__{seed}__{timestamp}``: the test task's id (``fourrooms-13x13-test-3``),
the method entry, the seed index and the run's start time from the store (not the export's wall
time, so that exporting twice writes the same bytes). Each holds CleanRL's tags:

- ``charts/episodic_return`` and ``charts/episodic_length`` at the global step, the env steps the
  test-time learner had taken when the episode ended;
- ``charts/episodic_return_frames``: the same returns at the emulator frames used by then, when
  the family skips frames (Atari), so that tasks with different frame skips share an axis.

One more run per (method entry, seed) that recorded discovery curves,
``discovery__{exp_name}__{seed}__{timestamp}``, holds each curve as ``discovery/<name>`` at its
epoch: Algorithm 1's Ĵ and its terms (``discovery/jhat``, ``prob``, ``terminations``, ``kl``,
``option_round``; the paper's Fig. 1a) or option-critic's interaction curves.

A sweep run's variants are exported one at a time (``--spec`` with a variant's hash prefix).
Only a complete run is exported (every planned cell done, the run finished): a missing, incomplete
or damaged run exits 2 with one line. The logs are written into a temporary folder beside DIR and
renamed into place at the end, so DIR never holds a partial export. The events are written with
tensorboard's record writer and protos directly: no TensorFlow import.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["add_arguments", "run", "run_name", "MARKER"]

MARKER = "export.json"  # written last: a folder without it is not an export


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare RUN_DIR, --out and --spec."""
    parser.add_argument("directory", metavar="RUN_DIR", type=Path, help="a run's --out folder")
    parser.add_argument(
        "--out", type=Path, help="folder of the logs (default: RUN_DIR/tensorboard); replaced"
    )
    parser.add_argument(
        "--spec",
        metavar="NAME_OR_HASH",
        help="in a directory several specs ran in, export this one (name or hash prefix)",
    )


def run(args: argparse.Namespace) -> int:
    """Export; 0 on success, 2 on bad input (one line, nothing written)."""
    from opt_suite.report.sweep import whole_sweep_problem
    from opt_suite.store import StoreError

    out = args.out if args.out is not None else args.directory / "tensorboard"
    try:
        if not args.directory.is_dir():
            raise StoreError(f"{args.directory}: no such directory")
        problem = None if args.spec else whole_sweep_problem(args.directory, "export")
        if problem is not None:
            raise StoreError(problem)
        runs, stamp = collect(args.directory, args.spec)
        _write_atomically(out, runs, stamp)
    except StoreError as exc:
        print(f"opt-suite export-tensorboard: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"opt-suite export-tensorboard: cannot write {out}: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # a damaged store must not print a traceback
        message = f"cannot export {args.directory}: {type(exc).__name__}: {exc}"
        print(f"opt-suite export-tensorboard: {message}", file=sys.stderr)
        return 2
    print(f"wrote {len(runs)} TensorBoard runs to {out} (tensorboard --logdir {out})")
    return 0


def run_name(env_id: str, exp_name: str, seed: int, timestamp: int) -> str:
    """CleanRL's run name, with characters a folder name should not hold replaced by ``-``."""
    parts = (env_id, exp_name, str(seed), str(timestamp))
    return "__".join(re.sub(r"[^A-Za-z0-9._=+-]+", "-", part).strip("-") for part in parts)


# One exported run: its folder name and its scalars as (tag, step, value), in write order.
ExportRun = tuple[str, list[tuple[str, int, float]]]


def collect(directory: Path, selector: str | None) -> tuple[list[ExportRun], int]:
    """Every run to write and the run's start time, from the store; StoreError unless complete."""
    import sqlite3

    from opt_suite.store import StoreError
    from opt_suite.store.reader import ResultsStore, select_spec

    try:
        spec_hash = None if selector is None else select_spec(directory, selector)
        with ResultsStore(directory, spec_hash) as store:
            info = store.run()
            cells = store.cells()
            tasks = {t.index: t.task_id for t in store.tasks("test")}
            episodes = store.episodes()
            curves = store.curves()
    except sqlite3.Error as exc:
        raise StoreError(f"the results store in {directory} is damaged ({exc})") from None
    problem = _incomplete(info.status, cells)
    if problem:
        raise StoreError(f"{directory}: {problem}; rerun `opt-suite run SPEC --out {directory}`")
    stamp = int(info.started)
    runs = _episode_runs(episodes, tasks, stamp)
    runs += _curve_runs(curves, stamp)
    if not runs:
        raise StoreError(f"{directory}: the run recorded no episodes or curves to export")
    return runs, stamp


def _incomplete(status: str, cells: Iterable[Any]) -> str | None:
    if status != "done":
        return f"the run has status {status!r}, not done: its logs would be incomplete"
    left = [c for c in cells if c.status != "done"]
    if left:
        first = left[0]
        return (
            f"{len(left)} planned cell(s) not done (first: {first.kind} of {first.method!r} seed "
            f"{first.seed} is {first.status})"
        )
    return None


def _episode_runs(episodes: list[Any], tasks: dict[int, str], stamp: int) -> list[ExportRun]:
    grouped: dict[tuple[str, int, int], list[Any]] = {}
    for row in episodes:  # ordered by method, seed, task, episode
        grouped.setdefault((row.method, row.seed, row.task), []).append(row)
    runs = []
    for (method, seed, task), rows in grouped.items():
        env_id = tasks.get(task, f"test-{task}")
        scalars: list[tuple[str, int, float]] = []
        global_step = 0
        skips_frames = False
        for row in rows:
            global_step += row.steps
            skips_frames = skips_frames or row.frames != global_step
        global_step = 0
        for row in rows:
            global_step += row.steps
            scalars.append(("charts/episodic_return", global_step, row.ret))
            scalars.append(("charts/episodic_length", global_step, float(row.steps)))
            if skips_frames:
                scalars.append(("charts/episodic_return_frames", row.frames, row.ret))
        runs.append((run_name(env_id, method, seed, stamp), scalars))
    return runs


def _curve_runs(curves: list[Any], stamp: int) -> list[ExportRun]:
    grouped: dict[tuple[str, int], list[tuple[str, int, float]]] = {}
    for row in curves:
        grouped.setdefault((row.method, row.seed), []).append(
            (f"discovery/{row.name}", row.step, row.value)
        )
    return [
        (run_name("discovery", method, seed, stamp), scalars)
        for (method, seed), scalars in grouped.items()
    ]


def _write_atomically(out: Path, runs: list[ExportRun], stamp: int) -> None:
    """Write into a temporary sibling of ``out``, then swap it in (replacing an older export)."""
    from opt_suite.store import StoreError

    if out.exists() and not (out / MARKER).is_file():
        raise StoreError(f"{out} exists and is not an earlier export: give another --out")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        for name, scalars in runs:
            write_events(staging / name, scalars, stamp)
        (staging / MARKER).write_text(json.dumps({"runs": [n for n, _ in runs]}, indent=1) + "\n")
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old.", dir=out.parent))
            os.replace(out, old / out.name)
            os.replace(staging, out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(staging, out)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def write_events(folder: Path, scalars: list[tuple[str, int, float]], stamp: int) -> Path:
    """One event file of scalar summaries, written the way ``tensorboard.summary.Writer`` does.

    The file name and every wall time are the run's start ``stamp`` (seconds since the epoch),
    not the time of the export, so the same scalars give the same bytes.
    """
    import numpy as np
    from tensorboard.compat.proto import event_pb2, summary_pb2  # type: ignore[import-untyped]
    from tensorboard.plugins.scalar import metadata as scalar_metadata  # type: ignore[import-untyped]
    from tensorboard.summary.writer.record_writer import RecordWriter  # type: ignore[import-untyped]
    from tensorboard.util import tensor_util  # type: ignore[import-untyped]

    folder.mkdir(parents=True)
    path = folder / f"events.out.tfevents.{stamp:010d}.opt-suite"
    meta = summary_pb2.SummaryMetadata(
        plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name=scalar_metadata.PLUGIN_NAME),
        data_class=summary_pb2.DataClass.DATA_CLASS_SCALAR,
    )
    with path.open("wb") as handle:
        writer = RecordWriter(handle)
        header = event_pb2.Event(wall_time=float(stamp), file_version="brain.Event:2")
        writer.write(header.SerializeToString())
        for tag, step, value in scalars:
            event = event_pb2.Event(wall_time=float(stamp), step=int(step))
            event.summary.value.add(
                tag=tag, tensor=tensor_util.make_tensor_proto(np.float32(value)), metadata=meta
            )
            writer.write(event.SerializeToString())
    return path
