"""Reading a run directory's results: the API reports, statistics and comparisons build on.

See the package docstring (``opt_suite.store``) for the directory layout and a summary of the API.
Every query is restricted to the cells planned by the runs of the latest run's spec.

Length (over the 400 lines the tree aims for): the store's read API: one ResultsStore class
over one schema (its row types beside it); splitting the class would split one connection's queries.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from opt_suite.stages import Stage
from opt_suite.store.records import StageRecord, record_from_info
from opt_suite.store.schema import DB_NAME, RUN_FAMILY_KEY, StoreError, connect
from opt_suite.store.verify import episodes_checksum, folder_problem

__all__ = [
    "select_spec",
    "ResultsStore",
    "RunInfo",
    "CellInfo",
    "TaskInfo",
    "EpisodeRow",
    "EpisodeArrays",
    "CurveRow",
]


@dataclasses.dataclass(frozen=True)
class RunInfo:
    """Provenance of one ``opt-suite run`` (``finished`` is None while it runs or if killed)."""

    run_id: int
    spec_name: str
    spec_hash: str
    git_commit: str | None
    versions: dict[str, str]
    host: str
    pid: int
    argv: list[str]
    backend: str
    workers: int
    seeds: list[int]
    started: float
    finished: float | None
    status: str
    cells_total: int | None
    cells_reused: int | None
    cells_computed: int | None
    cells_failed: int | None


@dataclasses.dataclass(frozen=True)
class CellInfo:
    """One planned cell: ``status`` is ``done``, ``failed`` or ``missing`` (never finished)."""

    cell_id: str
    kind: str
    method: str | None
    seed: int
    status: str
    error: str | None
    attempts: int
    wall_s: float | None
    started: float | None
    finished: float | None
    host: str | None
    info: dict[str, Any]

    @property
    def record(self) -> StageRecord:
        """The facts of its stage's record (:mod:`opt_suite.store.records`), from ``info``."""
        return record_from_info(self.kind, self.info)


def split_name(seed: int | None) -> str:
    """The split of a test task: ``test``, or ``test/seed<i>`` for seed i's own (drawn per seed)."""
    return "test" if seed is None else f"test/seed{seed}"


@dataclasses.dataclass(frozen=True)
class TaskInfo:
    """One task of the latest run: ``task_id`` like ``fourrooms-13x13/test/3``, params as JSON.

    ``split`` is ``train``, or a test split (:func:`split_name`).
    """

    split: str
    index: int
    task_id: str
    params: Any


@dataclasses.dataclass(frozen=True)
class EpisodeRow:
    """One test-time episode: its return, primitive steps, and frames used up to its end."""

    method: str
    seed: int
    task: int
    episode: int
    ret: float
    steps: int
    frames: int


@dataclasses.dataclass(frozen=True)
class CurveRow:
    """One point of a method's training curve (``value`` is NaN where the method recorded NaN)."""

    method: str
    seed: int
    name: str
    step: int
    value: float


@dataclasses.dataclass(frozen=True, eq=False)
class EpisodeArrays:
    """One method's test-time results as dense arrays over the seeds with a completed evaluation.

    Attributes:
      returns: float64 [len(seeds), len(tasks), episodes].
      steps: int64 [len(seeds), len(tasks), episodes].
      frames: int64 [len(seeds), len(tasks), episodes], emulator frames used up to each episode's
        end (cumulative).
      seeds: seed indices, ascending (one row each).
      tasks: test task indices, ascending.
    """

    returns: np.ndarray
    steps: np.ndarray
    frames: np.ndarray
    seeds: tuple[int, ...]
    tasks: tuple[int, ...]


def select_spec(directory: str | Path, selector: str) -> str:
    """The full hash of the spec whose runs ``selector`` names in ``directory``'s store.

    ``selector`` is a spec's name (``fourrooms-quick``) or a prefix of its hash (``395dea5a``, as
    ``opt-suite validate`` and the run summary print it), so that one spec's results can be chosen
    in a directory shared by several specs.

    Raises:
      StoreError: no spec, or more than one, matches (the message lists what is recorded, or the
        candidates with their names, hashes and latest runs).
    """
    path = Path(directory) / DB_NAME
    conn = connect(path, create=False)
    try:  # SQLite's errors come as StoreDatabaseError (schema.connect)
        rows = conn.execute(
            "SELECT spec_hash, spec_name, MAX(run_id) FROM runs GROUP BY spec_hash, spec_name"
            " ORDER BY MAX(run_id)"
        ).fetchall()
    finally:
        conn.close()
    wanted = selector.strip().lower()
    by_hash = [r for r in rows if wanted and str(r[0]).startswith(wanted)]
    by_name = [r for r in rows if str(r[1]) == selector.strip()]
    found = {str(r[0]): r for r in by_name or by_hash}

    def label(row: Any) -> str:
        return f"{row[1]} (hash {str(row[0])[:12]}, latest run {row[2]})"

    if len(found) == 1:
        return next(iter(found))
    if not found:
        recorded = "; ".join(label(r) for r in rows) or "no runs"
        raise StoreError(f"{path}: no spec named or hashed {selector!r} (recorded: {recorded})")
    candidates = "; ".join(label(r) for r in found.values())
    raise StoreError(
        f"{path}: {selector!r} matches {len(found)} specs: {candidates} — give more of the hash"
    )


class ResultsStore:
    """Read-only view of the results in a run directory (written by ``opt-suite run``).

    Args:
      directory: the ``--out`` directory of a run.
      spec_hash: view the latest run of this spec (default: the latest run of any spec). The
        runner reports its own spec this way, whatever else ran in the directory meanwhile.

    Raises:
      StoreError: the directory holds no results store, or no run (of ``spec_hash``) has been
        recorded in it.
    """

    def __init__(self, directory: str | Path, spec_hash: str | None = None) -> None:
        self.directory = Path(directory)
        self.db_path = self.directory / DB_NAME
        self._conn = connect(self.db_path, create=False)
        self._conn.row_factory = sqlite3.Row
        query = "SELECT run_id, spec_hash FROM runs"
        args: tuple[Any, ...] = ()
        if spec_hash is not None:
            query += " WHERE spec_hash = ?"
            args = (spec_hash,)
        latest = self._conn.execute(query + " ORDER BY run_id DESC LIMIT 1", args).fetchone()
        if latest is None:
            self._conn.close()
            which = "" if spec_hash is None else f" of spec {spec_hash[:12]}"
            raise StoreError(f"{self.db_path} records no run{which} yet")
        self.run_id = int(latest[0])
        # The view: every run of the latest run's spec (e.g. `--seeds 5-9` after `--seeds 0-4`).
        same = self._conn.execute("SELECT run_id FROM runs WHERE spec_hash = ?", (latest[1],))
        self._runs = "IN (" + ", ".join(str(int(r[0])) for r in same) + ")"
        # The plan of the view: each (kind, method, seed) as its latest run planned it. A rerun of
        # the same spec by other code (a reinstalled plugin: new cell ids) supersedes the older
        # run's cells instead of adding them a second time to every table and metric.
        self._plan = (
            f"(SELECT * FROM plan p WHERE p.run_id {self._runs} AND p.run_id = "
            f"(SELECT MAX(q.run_id) FROM plan q WHERE q.run_id {self._runs} "
            "AND q.kind = p.kind AND q.method IS p.method AND q.seed = p.seed))"
        )

    def close(self) -> None:
        """Close the database connection."""
        self._conn.close()

    def __enter__(self) -> ResultsStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the spec and provenance -------------------------------------------------------------
    def spec_yaml(self) -> str:
        """The resolved spec of the latest run, as canonical YAML."""
        row = self._conn.execute(
            "SELECT spec_yaml FROM runs WHERE run_id = ?", (self.run_id,)
        ).fetchone()
        return str(row[0])

    def spec(self) -> Any:
        """The viewed spec's latest run's spec as a typed ``opt_suite.spec.Spec`` (needs plugins).

        Parsed from the run's row, not from ``DIR/spec.yaml``: that file is the latest run's, which
        in a directory shared by several specs may be another spec than the one viewed.
        """
        from opt_suite.spec import parse_spec  # imported lazily: reading rows needs no registry

        return parse_spec(self.spec_yaml(), f"{self.directory / DB_NAME} (run {self.run_id})")

    def run_family(self) -> dict[str, Any] | None:
        """The family's facts the latest run recorded (``{"name", "frame_unit"}``), or None.

        None for a run recorded before the runner wrote them: the reader falls back to the
        stored spec's family name.
        """
        row = self._conn.execute(
            "SELECT value FROM meta WHERE key = ?", (f"{RUN_FAMILY_KEY}{self.run_id}",)
        ).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def runs(self) -> list[RunInfo]:
        """Every run recorded in this directory, oldest first."""
        rows = self._conn.execute("SELECT * FROM runs ORDER BY run_id").fetchall()
        return [_run_info(row) for row in rows]

    def run(self) -> RunInfo:
        """The latest run (of the viewed spec)."""
        return next(r for r in self.runs() if r.run_id == self.run_id)

    def methods(self) -> list[str]:
        """Method entry names of the latest run, in spec order."""
        rows = self._conn.execute(
            f"SELECT DISTINCT method, position FROM plan WHERE run_id {self._runs} "
            "AND method IS NOT NULL ORDER BY position",
        ).fetchall()
        return [str(r["method"]) for r in rows]

    def seeds(self) -> list[int]:
        """Seed indices run with the latest run's spec, ascending."""
        rows = self._conn.execute(f"SELECT seeds FROM runs WHERE run_id {self._runs}")
        return sorted({seed for row in rows for seed in json.loads(row[0])})

    def tasks(self, split: str | None = None) -> list[TaskInfo]:
        """Tasks of the latest run (``split`` = ``"train"`` or ``"test"``, or both when None)."""
        query = "SELECT * FROM tasks WHERE run_id = ?"
        args: tuple[Any, ...] = (self.run_id,)
        if split is not None:
            query += " AND split = ?"
            args += (split,)
        rows = self._conn.execute(query + " ORDER BY split DESC, idx", args).fetchall()
        return [
            TaskInfo(r["split"], int(r["idx"]), r["task_id"], json.loads(r["params"])) for r in rows
        ]

    # -- cells -----------------------------------------------------------------------------------
    def cells(self) -> list[CellInfo]:
        """The cells the latest run planned, with their status (``missing`` = never finished)."""
        rows = self._conn.execute(
            "SELECT DISTINCT p.cell_id, p.kind, p.method, p.seed, p.position, c.status, c.error, "
            f"c.attempts, c.wall_s, c.started, c.finished, c.host, c.info FROM {self._plan} p "
            f"LEFT JOIN cells c USING (cell_id) ORDER BY p.seed, p.position, p.kind",
        ).fetchall()
        return [
            CellInfo(
                cell_id=r["cell_id"],
                kind=r["kind"],
                method=r["method"],
                seed=int(r["seed"]),
                status=r["status"] or "missing",
                error=r["error"],
                attempts=int(r["attempts"] or 0),
                wall_s=r["wall_s"],
                started=r["started"],
                finished=r["finished"],
                host=r["host"],
                info=json.loads(r["info"]) if r["info"] else {},
            )
            for r in rows
        ]

    def planned(self) -> list[tuple[str, str, str | None, int, int]]:
        """(cell id, kind, method, seed, method position) of every cell the viewed spec plans.

        The rows ``StoreWriter.record_plan`` takes: merging shard stores plans the union of theirs.
        """
        rows = self._conn.execute(
            f"SELECT DISTINCT cell_id, kind, method, seed, position FROM {self._plan} p "
            "ORDER BY seed, position, kind, cell_id"
        ).fetchall()
        return [(r[0], r[1], r[2], int(r[3]), int(r[4])) for r in rows]

    # -- results ---------------------------------------------------------------------------------
    def _done_cells(self, stage: Stage) -> str:
        # Only rows of cells that the latest run planned and that completed.
        return (
            "SELECT DISTINCT p.cell_id, p.method AS entry, p.seed AS seed, p.position "
            f"FROM {self._plan} p JOIN cells c USING (cell_id) WHERE p.kind = '{stage.value}' "
            "AND c.status = 'done'"
        )

    def episodes(self, method: str | None = None) -> list[EpisodeRow]:
        """Per-episode test-time returns, steps and frames of completed evaluation cells.

        Raises:
          StoreError: a cell's rows do not match the checksum recorded with them (the message
            names the cell and says how to recompute it).
        """
        query = (
            f"SELECT d.entry, e.seed, e.task, e.episode, e.ret, e.steps, e.frames, d.cell_id "
            f"FROM episodes e JOIN ({self._done_cells(Stage.EVALUATION)}) d USING (cell_id)"
        )
        args: tuple[Any, ...] = ()
        if method is not None:
            query += " WHERE d.entry = ?"
            args += (method,)
        query += " ORDER BY d.position, e.seed, e.task, e.episode"
        with self._snapshot():  # rows and checksums from one state of the store
            rows = self._conn.execute(query, args).fetchall()
            self._verify_episodes(method, rows)
        return [
            EpisodeRow(r[0], int(r[1]), int(r[2]), int(r[3]), float(r[4]), int(r[5]), int(r[6]))
            for r in rows
        ]

    @contextlib.contextmanager
    def _snapshot(self) -> Iterator[None]:
        """One read transaction: the queries inside see the store as it was at their first read.

        The connection is in autocommit mode, where each query reads its own snapshot. A run
        still writing to the store (``opt-suite report`` while ``opt-suite run`` goes on) could
        then finish a cell between two queries, and rows read before it would be checked
        against the checksum list read after it: a false "corrupted" error.
        """
        if self._conn.in_transaction:
            yield
            return
        self._conn.execute("BEGIN")
        try:
            yield
        finally:
            self._conn.execute("COMMIT")

    def _verify_episodes(self, method: str | None, rows: list[Any]) -> None:
        """Check every completed evaluation cell's rows against its recorded checksum."""
        per_cell: dict[str, list[Any]] = {}
        for r in rows:
            per_cell.setdefault(r[7], []).append((r[2], r[3], r[4], r[5], r[6]))
        query = (
            "SELECT d.cell_id, d.entry, d.seed, v.episodes FROM "
            f"({self._done_cells(Stage.EVALUATION)}) d LEFT JOIN verification v USING (cell_id)"
        )
        for cell_id, entry, seed, expected in self._conn.execute(query).fetchall():
            if method is not None and entry != method:
                continue
            try:
                actual = episodes_checksum(per_cell.get(cell_id, []))
            except (TypeError, ValueError, OverflowError):
                actual = None
            if actual is None or actual != expected:
                raise StoreError(
                    f"{self.db_path}: cell {cell_id} (evaluation of {entry!r}, seed {seed}):"
                    " its episode rows do not match the checksum recorded with them; the store"
                    " was altered or corrupted, so its numbers are not reported. Rerun the same"
                    f" `opt-suite run SPEC --out {self.directory}`: it recomputes every cell that"
                    " fails verification"
                )

    def recorded_file(self, cell_id: str, name: str) -> Path | None:
        """Done cell ``cell_id``'s file ``name``, digest checked; None if it recorded no such file.

        Raises:
          StoreError: the file does not match the digest recorded with it.
        """
        row = self._conn.execute(
            "SELECT v.files, c.kind FROM verification v JOIN cells c USING (cell_id) "
            "WHERE cell_id = ? AND c.status = 'done'",
            (cell_id,),
        ).fetchone()
        try:
            recorded = json.loads(row[0]) if row is not None else None
        except ValueError:
            recorded = None
        if not isinstance(recorded, dict) or name not in recorded:
            return None
        return self._verified_file(cell_id, str(row[1]), name)

    def _verified_file(self, cell_id: str, kind: str, name: str) -> Path:
        """A done cell's file, after checking it against its recorded digest."""
        folder = self.directory / "cells" / cell_id
        row = self._conn.execute(
            "SELECT files FROM verification WHERE cell_id = ?", (cell_id,)
        ).fetchone()
        try:
            expected = json.loads(row[0]) if row is not None else None
        except ValueError:
            expected = None
        problem = (
            "it has no recorded digests"
            if not isinstance(expected, dict) or name not in expected
            else folder_problem(folder, {name: expected[name]})
        )
        if problem is not None:
            raise StoreError(
                f"cell {cell_id} ({kind}): {problem}. Rerun the same `opt-suite run SPEC --out"
                f" {self.directory}`: it recomputes every cell that fails verification"
            )
        return folder / name

    def episode_arrays(self, method: str) -> EpisodeArrays:
        """``method``'s returns, steps and frames as [seeds, tasks, episodes] arrays."""
        rows = self.episodes(method)
        seeds = tuple(sorted({r.seed for r in rows}))
        tasks = tuple(sorted({r.task for r in rows}))
        episodes = 1 + max((r.episode for r in rows), default=-1)
        returns = np.full((len(seeds), len(tasks), episodes), np.nan)
        steps = np.zeros((len(seeds), len(tasks), episodes), dtype=np.int64)
        frames = np.zeros((len(seeds), len(tasks), episodes), dtype=np.int64)
        seed_pos = {s: i for i, s in enumerate(seeds)}
        task_pos = {t: i for i, t in enumerate(tasks)}
        for r in rows:
            returns[seed_pos[r.seed], task_pos[r.task], r.episode] = r.ret
            steps[seed_pos[r.seed], task_pos[r.task], r.episode] = r.steps
            frames[seed_pos[r.seed], task_pos[r.task], r.episode] = r.frames
        return EpisodeArrays(returns, steps, frames, seeds, tasks)

    def curves(self, method: str | None = None, name: str | None = None) -> list[CurveRow]:
        """Training curves recorded by completed discovery cells."""
        query = (
            f"SELECT d.entry, k.seed, k.name, k.step, k.value FROM curves k "
            f"JOIN ({self._done_cells(Stage.DISCOVERY)}) d USING (cell_id) WHERE 1 = 1"
        )
        args: tuple[Any, ...] = ()
        if method is not None:
            query += " AND d.entry = ?"
            args += (method,)
        if name is not None:
            query += " AND k.name = ?"
            args += (name,)
        query += " ORDER BY d.position, k.seed, k.name, k.step"
        return [
            CurveRow(
                r[0], int(r[1]), r[2], int(r[3]), float("nan") if r[4] is None else float(r[4])
            )
            for r in self._conn.execute(query, args)
        ]

    def option_set(self, method: str, seed: int) -> Any:
        """The option set (any kind) that ``method`` discovered for ``seed``, or None."""
        from opt_suite.options import load_option_set

        path = self.option_set_file(method, seed)
        return None if path is None else load_option_set(path)

    def option_set_file(self, method: str, seed: int) -> Path | None:
        """The option-set file ``method`` discovered for ``seed``, digest checked, or None.

        Raises:
          StoreError: the file does not match the digest recorded with it.
        """
        from opt_suite.store.files import OPTIONS_FILE

        row = self._conn.execute(
            f"SELECT o.cell_id FROM option_sets o JOIN ({self._done_cells(Stage.DISCOVERY)}) d "
            "USING (cell_id) WHERE d.entry = ? AND o.seed = ?",
            (method, seed),
        ).fetchone()
        if row is None:
            return None
        return self._verified_file(row[0], Stage.DISCOVERY, OPTIONS_FILE)

    def demonstrations(self, seed: int) -> list[Any] | None:
        """The demonstrations (list of ``Trajectory``) of ``seed``, or None if not collected yet."""
        from opt_suite.store.files import DEMOS_FILE, load_demonstrations

        row = self._conn.execute(
            f"SELECT d.cell_id FROM ({self._done_cells(Stage.DEMONSTRATIONS)}) d WHERE d.seed = ?",
            (seed,),
        ).fetchone()
        if row is None:
            return None
        path = self._verified_file(row[0], Stage.DEMONSTRATIONS, DEMOS_FILE)
        return load_demonstrations(path.parent)


def _run_info(row: sqlite3.Row) -> RunInfo:
    return RunInfo(
        run_id=int(row["run_id"]),
        spec_name=row["spec_name"],
        spec_hash=row["spec_hash"],
        git_commit=row["git_commit"],
        versions=json.loads(row["versions"]),
        host=row["host"],
        pid=int(row["pid"]),
        argv=json.loads(row["argv"]),
        backend=row["backend"],
        workers=int(row["workers"]),
        seeds=json.loads(row["seeds"]),
        started=float(row["started"]),
        finished=row["finished"],
        status=row["status"],
        cells_total=row["cells_total"],
        cells_reused=row["cells_reused"],
        cells_computed=row["cells_computed"],
        cells_failed=row["cells_failed"],
    )
