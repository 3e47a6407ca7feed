"""A run's returns and discovery curves as TensorBoard event files, byte for byte reproducible.

One TensorBoard run per (method entry, seed, test task), named as CleanRL names its runs
(:func:`run_name`), with CleanRL's tags ``charts/episodic_return`` and ``charts/episodic_length``
at the global step (env steps the test-time learner had taken when the episode ended) and
``charts/episodic_return_frames`` at the frames used by then when the family skips frames; and one
run ``discovery__<entry>__<seed>__<stamp>`` per discovery cell that recorded curves, each curve as
``discovery/<name>`` at its epoch.

**Format.** Every value is a *tensor summary* (a float32 scalar tensor whose metadata names the
scalars plugin, ``data_class`` scalar), which is what ``tf.summary.scalar`` writes in TF 2 and
what TensorBoard's Scalars dashboard shows. The classic
``tensorboard.backend.event_processing.event_accumulator.EventAccumulator`` files them under
``Tags()["tensors"]``, not ``["scalars"]``: read them with ``acc.Tensors(tag)`` and
``tensor_util.make_ndarray(event.tensor_proto)``, or with the data-provider based
``EventMultiplexer``/``tensorboard.data`` API, which converts them (see ``docs/cli.md``).

**Why written here.** ``tf.summary`` and ``torch.utils.tensorboard`` name each event file after
the host, the process and the wall time of writing, and stamp every event with that wall time, so
two exports of the same run never have the same bytes. The bytes are tensorboard's own — its
``RecordWriter`` (the TFRecord framing and CRCs) and its protos — only the file name and the wall
times are ours: the run's start time from the store. Exporting twice gives the same bytes, and no
TensorFlow is imported.

**The folder.** An export is written into a temporary sibling and renamed into place, so the
folder never holds a partial export. It replaces a folder only when that folder is empty or holds
exactly an earlier export, verified by the manifest :data:`MARKER` (the SHA-256 of every file it
wrote), never by a file name; anything else is refused and nothing is deleted.
"""

from __future__ import annotations

import itertools
import re
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from opt_suite.export_folder import replace_problem, swap_in, write_manifest
from opt_suite.run_view import RunView, RunViewError
from opt_suite.store.reader import split_name

__all__ = [
    "MARKER",
    "FORMAT",
    "ExportRun",
    "run_name",
    "collect",
    "export_problem",
    "write_export",
    "write_events",
]

MARKER = "export.json"  # the manifest, written last: a folder without a valid one is no export
FORMAT = "opt-suite tensorboard export 2"  # 2: the manifest lists each file's SHA-256

# One exported run: its folder name and its scalars as (tag, step, value), in write order.
ExportRun = tuple[str, list[tuple[str, int, float]]]


def run_name(env_id: str, exp_name: str, seed: int, timestamp: int) -> str:
    """CleanRL's run name, with characters a folder name should not hold replaced by ``-``."""
    parts = (env_id, exp_name, str(seed), str(timestamp))
    return "__".join(re.sub(r"[^A-Za-z0-9._=+-]+", "-", part).strip("-") for part in parts)


def collect(view: RunView) -> tuple[list[ExportRun], int]:
    """Every run to write and the run's start time; RunViewError unless the run is complete."""
    from opt_suite.store.schema import StoreDatabaseError

    store = view.store
    try:
        cells = store.cells()
        # Keyed by (seed, index): test tasks drawn per seed are stored under their seed's split.
        seeds = {split_name(seed): seed for seed in store.seeds()}
        tasks = {
            (seeds.get(t.split), t.index): t.task_id
            for t in store.tasks()
            if t.split == "test" or t.split in seeds
        }
        episodes = store.episodes()
        curves = store.curves()
    except StoreDatabaseError as exc:
        raise RunViewError(f"the results store in {view.directory} is damaged ({exc})") from None
    problem = _incomplete(view.info.status, cells)
    if problem:
        raise RunViewError(
            f"{view.directory}: {problem}; rerun `opt-suite run SPEC --out {view.directory}`"
        )
    stamp = int(view.info.started)
    runs = _episode_runs(episodes, tasks, stamp) + _curve_runs(curves, stamp)
    if not runs:
        raise RunViewError(f"{view.directory}: the run recorded no episodes or curves to export")
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


def _episode_runs(
    episodes: list[Any], tasks: dict[tuple[int | None, int], str], stamp: int
) -> list[ExportRun]:
    grouped: dict[tuple[str, int, int], list[Any]] = {}
    for row in episodes:  # ordered by method, seed, task, episode
        grouped.setdefault((row.method, row.seed, row.task), []).append(row)
    runs = []
    for (method, seed, task), rows in grouped.items():
        env_id = tasks.get((seed, task), tasks.get((None, task), f"test-{task}"))
        ends = list(itertools.accumulate(r.steps for r in rows))
        skips_frames = any(r.frames != end for r, end in zip(rows, ends, strict=True))
        scalars: list[tuple[str, int, float]] = []
        for row, global_step in zip(rows, ends, strict=True):
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


def export_problem(out: Path) -> str | None:
    """Why ``out`` must not be replaced by an export (one line), or None when it may be.

    It may when it does not exist, is an empty folder, or holds exactly the files its manifest
    lists with the digests it records: an earlier export, unchanged
    (:func:`opt_suite.export_folder.replace_problem`).
    """
    return replace_problem(out, MARKER, FORMAT)


def write_export(out: Path, runs: list[ExportRun], stamp: int, spec: tuple[str, str]) -> None:
    """Write into a temporary sibling of ``out``, then swap it in (replacing an earlier export).

    ``spec`` (name, hash) is recorded in the manifest: a report of another spec in the same run
    folder then moves this export aside (:mod:`opt_suite.report.stale`).

    Raises:
      RunViewError: ``out`` is neither absent, empty, nor an unchanged earlier export.
    """
    problem = export_problem(out)
    if problem is not None:
        raise RunViewError(problem)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        for name, scalars in runs:
            write_events(staging / name, scalars, stamp)
        extra = {"spec": spec[0], "spec_hash": spec[1], "runs": [n for n, _ in runs]}
        write_manifest(staging, MARKER, FORMAT, extra)
        swap_in(staging, out)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def write_events(folder: Path, scalars: list[tuple[str, int, float]], stamp: int) -> Path:
    """One event file of scalar tensor summaries, as ``tf.summary.scalar`` writes them.

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
