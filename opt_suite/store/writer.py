"""Writing the results store: the runner's parent process is its only writer.

The order of a cell's commit is what makes a crash at any moment harmless: first its files go into
a temporary folder that is renamed into place, then one SQLite transaction writes its episodes,
curves, option-set row and finally its ``cells`` row with ``status = 'done'``. A cell is done only
when that row exists, so a crash before the commit leaves a folder that the next attempt replaces,
and a crash after it leaves a complete cell.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import socket
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from opt_suite.store.files import (
    OPTIONS_FILE,
    cell_dir,
    process_alive,
    write_cell_dir,
    write_text_atomic,
)
from opt_suite.store.schema import DB_NAME, RUN_FAMILY_KEY, StoreError, connect
from opt_suite.store.verify import episodes_checksum, folder_problem

__all__ = ["CellRecord", "DirectoryInUse", "StoreWriter"]


class DirectoryInUse(StoreError):
    """Another ``opt-suite run`` of a different spec is running in the directory."""

    def __init__(self, directory: Path, spec_name: str, other: dict[str, Any]) -> None:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(other["at"]))
        super().__init__(
            f"{directory} is in use by another `opt-suite run` of spec {other['name']!r}"
            f" ({other['hash'][:12]}; pid {other['pid']} on {other['host']}, started {when});"
            f" one directory holds one spec at a time, so {spec_name!r} is not run there. Use"
            " another --out, or rerun when that run has finished"
        )


@dataclasses.dataclass(frozen=True, eq=False)
class CellRecord:
    """Everything stored about one completed cell.

    Attributes:
      cell_id, kind, method, seed: the cell's identity (``method`` is the spec entry name).
      inputs: JSON-serialisable inputs the id hashes (written for provenance).
      started, finished, wall_s, host: when and where it ran (``wall_s`` is the compute alone).
      info: small JSON facts (a method's ``Discovery.info``).
      files: file name -> writer, for the cell folder.
      num_options: the option set's size, for discovery cells (their folder holds options.npz).
      episodes: (task, returns [E], steps [E], frames [E]) per test task, for evaluation cells
        (``frames``: cumulative emulator frames at the end of each episode).
      curves: name -> 1-D array, for discovery cells.
    """

    cell_id: str
    kind: str
    method: str | None
    seed: int
    inputs: dict[str, Any]
    started: float
    finished: float
    wall_s: float
    host: str
    info: dict[str, Any] = dataclasses.field(default_factory=dict)
    files: dict[str, Callable[[Path], None]] = dataclasses.field(default_factory=dict)
    num_options: int | None = None
    episodes: Sequence[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = ()
    curves: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)


class StoreWriter:
    """Creates and writes the results store of one run directory.

    Args:
      directory: the run directory (created if missing).

    Raises:
      OSError: the directory cannot be created or written.
      StoreError: it holds a store of another schema version.
    """

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        (self.directory / "cells").mkdir(parents=True, exist_ok=True)
        self.conn = connect(self.directory / DB_NAME, create=True)

    def close(self) -> None:
        """Close the database connection."""
        self.conn.close()

    # -- runs ------------------------------------------------------------------------------------
    def begin_run(
        self,
        *,
        spec_name: str,
        spec_hash: str,
        spec_yaml: str,
        provenance: dict[str, Any],
        backend: str,
        workers: int,
        seeds: Sequence[int],
        argv: Sequence[str],
    ) -> int:
        """Record a new run (status ``running``) and write ``spec.yaml``; return its id.

        ``provenance`` is :func:`~opt_suite.store.provenance.collect_provenance`'s, plus
        ``family`` (``{"name", "frame_unit"}``, read back by ``ResultsStore.run_family``).

        One directory, one spec at a time: runners of the same spec share a directory (they split
        its cells), but a runner of another spec is refused while one still runs there.

        Raises:
          DirectoryInUse: another live ``opt-suite run`` of a different spec runs in this
            directory (the message names it).
        """
        with _transaction(self.conn):
            other = self._live_run_of_another_spec(spec_hash)
            if other is not None:
                raise DirectoryInUse(self.directory, spec_name, other)
            write_text_atomic(self.directory / "spec.yaml", spec_yaml)
            cursor = self.conn.execute(
                "INSERT INTO runs (spec_name, spec_hash, spec_yaml, git_commit, versions, host, "
                "pid, argv, backend, workers, seeds, started, status) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running')",
                (
                    spec_name,
                    spec_hash,
                    spec_yaml,
                    provenance.get("git_commit"),
                    json.dumps(provenance.get("versions", {}), sort_keys=True),
                    provenance.get("host", socket.gethostname()),
                    os.getpid(),
                    json.dumps(list(argv)),
                    backend,
                    workers,
                    json.dumps(sorted(seeds)),
                    time.time(),
                ),
            )
            if "family" in provenance and cursor.lastrowid is not None:
                # The family's own facts the report reads without loading it (its frame unit), in
                # the key-value table: a column would need a new schema version for one string.
                self.conn.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                    (f"{RUN_FAMILY_KEY}{cursor.lastrowid}", json.dumps(provenance["family"])),
                )
        if cursor.lastrowid is None:  # sqlite3 sets it after every successful INSERT
            raise RuntimeError(f"{self.directory}: the runs table did not return the new run's id")
        return cursor.lastrowid

    def _live_run_of_another_spec(self, spec_hash: str) -> dict[str, Any] | None:
        """A run of another spec still recorded ``running`` whose process is alive, or None.

        A runner killed with ``kill -9`` stays ``running`` forever; on this host its pid tells
        that it is gone. A runner on another host sharing the directory is assumed alive.
        """
        rows = self.conn.execute(
            "SELECT spec_name, spec_hash, host, pid, started FROM runs "
            "WHERE status = 'running' AND spec_hash != ? ORDER BY run_id DESC",
            (spec_hash,),
        ).fetchall()
        here = socket.gethostname()
        for name, other_hash, host, pid, started in rows:
            if host != here or process_alive(int(pid)):
                return {"name": name, "hash": other_hash, "host": host, "pid": pid, "at": started}
        return None

    def record_plan(
        self,
        run_id: int,
        cells: Iterable[tuple[str, str, str | None, int, int]],
        tasks: Iterable[tuple[str, int, str, Any]],
    ) -> None:
        """Record the run's cells and tasks.

        Args:
          run_id: the run.
          cells: (cell id, kind, method entry name, seed, method position) per planned cell.
          tasks: (split, index, task id, plain params) per task.
        """
        with _transaction(self.conn):
            self.conn.executemany(
                "INSERT OR REPLACE INTO plan (run_id, cell_id, kind, method, seed, position) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [(run_id, *cell) for cell in cells],
            )
            self.conn.executemany(
                "INSERT OR REPLACE INTO tasks (run_id, split, idx, task_id, params) "
                "VALUES (?, ?, ?, ?, ?)",
                [
                    (run_id, split, idx, task_id, json.dumps(params, sort_keys=True, default=str))
                    for split, idx, task_id, params in tasks
                ],
            )

    def finish_run(self, run_id: int, status: str, counts: dict[str, int]) -> None:
        """Mark the run finished with its cell counts (total, reused, computed, failed)."""
        self.conn.execute(
            "UPDATE runs SET finished = ?, status = ?, cells_total = ?, cells_reused = ?, "
            "cells_computed = ?, cells_failed = ? WHERE run_id = ?",
            (
                time.time(),
                status,
                counts.get("total"),
                counts.get("reused"),
                counts.get("computed"),
                counts.get("failed"),
                run_id,
            ),
        )

    def last_run(self) -> tuple[str, str | None] | None:
        """(spec hash, git commit) of the latest run recorded here, or None before the first."""
        row = self.conn.execute(
            "SELECT spec_hash, git_commit FROM runs ORDER BY run_id DESC LIMIT 1"
        ).fetchone()
        return None if row is None else (row[0], row[1])

    # -- cells -----------------------------------------------------------------------------------
    def check_done(self, cell_ids: Iterable[str]) -> tuple[set[str], dict[str, str]]:
        """Split the cells recorded done among ``cell_ids`` into verified and rejected.

        Returns:
          (cells that are complete: row done, files and episode rows matching their digests;
          cell id -> why a cell recorded done fails verification, so that it is recomputed).
        """
        wanted = set(cell_ids)
        rows = self.conn.execute(
            "SELECT c.cell_id, v.files, v.episodes FROM cells c LEFT JOIN verification v "
            "USING (cell_id) WHERE c.status = 'done'"
        ).fetchall()
        done, rejected = set(), {}
        for cell_id, files, episodes in rows:
            if cell_id not in wanted:
                continue
            problem = self._problem(cell_id, files, episodes)
            if problem is None:
                done.add(cell_id)
            else:
                rejected[cell_id] = problem
        return done, rejected

    def _problem(self, cell_id: str, files: str | None, episodes: str | None) -> str | None:
        if files is None or episodes is None:
            return "it has no recorded digests"
        try:
            expected = json.loads(files)
        except ValueError:
            return "its recorded digests are unreadable"
        problem = folder_problem(cell_dir(self.directory, cell_id), expected)
        if problem is not None:
            return problem
        rows = self.conn.execute(
            "SELECT task, episode, ret, steps, frames FROM episodes WHERE cell_id = ?", (cell_id,)
        ).fetchall()
        try:
            actual = episodes_checksum(rows)
        except (TypeError, ValueError, OverflowError):
            actual = ""
        if actual != episodes:
            return "its episode rows do not match their checksum"
        return None

    def done_cells(self, cell_ids: Iterable[str]) -> set[str]:
        """Those of ``cell_ids`` that are complete and pass verification (:meth:`check_done`)."""
        return self.check_done(cell_ids)[0]

    def is_done(self, cell_id: str) -> bool:
        """Whether ``cell_id`` is complete (another runner may have finished it meanwhile).

        One cell's row, not :meth:`check_done`'s scan of every done cell: the scheduler asks
        before each cell it starts, and a scan per cell made a 50,000-cell run quadratic (its
        scheduler, not its cells, took most of the time).
        """
        row = self.conn.execute(
            "SELECT v.files, v.episodes FROM cells c LEFT JOIN verification v USING (cell_id) "
            "WHERE c.status = 'done' AND c.cell_id = ?",
            (cell_id,),
        ).fetchone()
        return row is not None and self._problem(cell_id, row[0], row[1]) is None

    def commit_cell(self, record: CellRecord) -> None:
        """Store a completed cell: folder first (atomic rename), then one transaction of rows."""
        meta = {
            "cell_id": record.cell_id,
            "kind": record.kind,
            "method": record.method,
            "seed": record.seed,
            "inputs": record.inputs,
            "info": record.info,
            "wall_s": record.wall_s,
            "host": record.host,
        }
        digests = write_cell_dir(self.directory, record.cell_id, meta, dict(record.files))
        episodes = [
            (int(task), e, float(r), int(s), int(f))
            for task, returns, steps, frames in record.episodes
            for e, (r, s, f) in enumerate(zip(returns, steps, frames, strict=True))
        ]
        with _transaction(self.conn):
            for table in ("episodes", "curves", "option_sets", "verification"):
                self.conn.execute(f"DELETE FROM {table} WHERE cell_id = ?", (record.cell_id,))
            self.conn.executemany(
                "INSERT INTO episodes (cell_id, method, seed, task, episode, ret, steps, frames) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(record.cell_id, record.method, record.seed, *row) for row in episodes],
            )
            self.conn.execute(
                "INSERT INTO verification (cell_id, files, episodes) VALUES (?, ?, ?)",
                (record.cell_id, json.dumps(digests, sort_keys=True), episodes_checksum(episodes)),
            )
            self.conn.executemany(
                "INSERT INTO curves (cell_id, method, seed, name, step, value) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (record.cell_id, record.method, record.seed, name, i, _finite_or_none(v))
                    for name, values in record.curves.items()
                    for i, v in enumerate(np.asarray(values, dtype=np.float64).ravel())
                ],
            )
            if record.num_options is not None:
                self.conn.execute(
                    "INSERT INTO option_sets (cell_id, method, seed, path, num_options) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (
                        record.cell_id,
                        record.method,
                        record.seed,
                        f"cells/{record.cell_id}/{OPTIONS_FILE}",
                        record.num_options,
                    ),
                )
            self._upsert_cell(record, status="done", error=None)

    def record_failure(self, record: CellRecord, error: str) -> None:
        """Record that a cell failed (it stays not done, so the next run retries it)."""
        with _transaction(self.conn):
            self._upsert_cell(record, status="failed", error=error)

    def _upsert_cell(self, record: CellRecord, *, status: str, error: str | None) -> None:
        self.conn.execute(
            "INSERT INTO cells (cell_id, kind, method, seed, status, error, attempts, started, "
            "finished, wall_s, host, inputs, info) VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (cell_id) DO UPDATE SET status = excluded.status, "
            "error = excluded.error, attempts = cells.attempts + 1, started = excluded.started, "
            "finished = excluded.finished, wall_s = excluded.wall_s, host = excluded.host, "
            "inputs = excluded.inputs, info = excluded.info",
            (
                record.cell_id,
                record.kind,
                record.method,
                record.seed,
                status,
                error,
                record.started,
                record.finished,
                record.wall_s,
                record.host,
                json.dumps(record.inputs, sort_keys=True, default=str),
                json.dumps(record.info, sort_keys=True, default=str),
            ),
        )


class _transaction:
    """``BEGIN IMMEDIATE`` … ``COMMIT`` (rollback on error): one cell is all or nothing."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def __enter__(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.conn.execute("COMMIT")
        else:
            self.conn.execute("ROLLBACK")


def _finite_or_none(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None
