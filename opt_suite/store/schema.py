"""The SQLite schema of the results store, and how to open it safely from several processes.

WAL mode lets readers (a report being written) and one writer work at once; ``busy_timeout`` makes
a second runner on the same directory wait for a short transaction instead of failing. Only the
runner's parent process writes — workers (local processes or Ray) return their results to it.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Self

from opt_suite.files_guard import InputError, regular_file

__all__ = [
    "DB_NAME",
    "SCHEMA_VERSION",
    "StoreDatabaseError",
    "StoreError",
    "connect",
    "CELL_STATUSES",
    "RUN_FAMILY_KEY",
]

DB_NAME = "results.sqlite"
SCHEMA_VERSION = 3  # 2: episodes.frames; 3: the verification table (digests, checksums)
CELL_STATUSES = ("done", "failed")
#: ``meta`` key prefix, + run id: JSON of the family's facts that run recorded (its name and frame
#: unit, ``TaskFamily.frame_unit``); runs recorded before it have none.
RUN_FAMILY_KEY = "run_family:"

# One statement per table; `IF NOT EXISTS` so that concurrent runners may both create it.
_TABLES = (
    # Provenance of each `opt-suite run` invocation on this directory.
    """CREATE TABLE IF NOT EXISTS runs (
        run_id INTEGER PRIMARY KEY AUTOINCREMENT,
        spec_name TEXT NOT NULL,
        spec_hash TEXT NOT NULL,
        spec_yaml TEXT NOT NULL,
        git_commit TEXT,
        versions TEXT NOT NULL,          -- JSON {package: version}
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        argv TEXT NOT NULL,              -- JSON list
        backend TEXT NOT NULL,
        workers INTEGER NOT NULL,
        seeds TEXT NOT NULL,             -- JSON list of seed indices
        started REAL NOT NULL,           -- unix time
        finished REAL,
        status TEXT NOT NULL,            -- running | done | failed | interrupted
        cells_total INTEGER,
        cells_reused INTEGER,
        cells_computed INTEGER,
        cells_failed INTEGER
    )""",
    # The cells a run planned (its view of the directory); method is the entry name.
    """CREATE TABLE IF NOT EXISTS plan (
        run_id INTEGER NOT NULL,
        cell_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        method TEXT,
        seed INTEGER NOT NULL,
        position INTEGER NOT NULL,       -- method's position in the spec (ordering)
        PRIMARY KEY (run_id, cell_id)
    )""",
    # The reader's view of the latest run (ResultsStore._plan) takes, for every plan row, the
    # MAX(run_id) of its (kind, method, seed): without this index that is a scan of the whole plan
    # per row, quadratic in the plan (a 40-seed store of 9,000 planned cells took over 3 minutes
    # to load for a report, 16 s with it).
    "CREATE INDEX IF NOT EXISTS plan_groups ON plan (kind, method, seed, run_id)",
    """CREATE TABLE IF NOT EXISTS tasks (
        run_id INTEGER NOT NULL,
        split TEXT NOT NULL,
        idx INTEGER NOT NULL,
        task_id TEXT NOT NULL,
        params TEXT NOT NULL,            -- JSON of the TaskParams
        PRIMARY KEY (run_id, split, idx)
    )""",
    # One row per cell ever attempted; status 'done' is the source of truth for completion.
    """CREATE TABLE IF NOT EXISTS cells (
        cell_id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,              -- demonstrations | discovery | evaluation
        method TEXT,
        seed INTEGER NOT NULL,
        status TEXT NOT NULL,            -- done | failed
        error TEXT,
        attempts INTEGER NOT NULL DEFAULT 1,
        started REAL,
        finished REAL,
        wall_s REAL,
        host TEXT,
        inputs TEXT NOT NULL,            -- JSON of the hashed inputs (spec slices, seed, deps)
        info TEXT                        -- JSON of the method's Discovery.info etc.
    )""",
    """CREATE TABLE IF NOT EXISTS episodes (
        cell_id TEXT NOT NULL,
        method TEXT NOT NULL,
        seed INTEGER NOT NULL,
        task INTEGER NOT NULL,           -- test task index
        episode INTEGER NOT NULL,
        ret REAL NOT NULL,
        steps INTEGER NOT NULL,
        frames INTEGER NOT NULL,         -- emulator frames used from the run's start to this end
        PRIMARY KEY (cell_id, task, episode)
    )""",
    """CREATE TABLE IF NOT EXISTS curves (
        cell_id TEXT NOT NULL,
        method TEXT NOT NULL,
        seed INTEGER NOT NULL,
        name TEXT NOT NULL,
        step INTEGER NOT NULL,
        value REAL,                      -- NULL where the curve held NaN
        PRIMARY KEY (cell_id, name, step)
    )""",
    """CREATE TABLE IF NOT EXISTS option_sets (
        cell_id TEXT PRIMARY KEY,
        method TEXT NOT NULL,
        seed INTEGER NOT NULL,
        path TEXT NOT NULL,              -- relative to the run directory
        num_options INTEGER NOT NULL
    )""",
    # Written with a cell's done row: what its files and episode rows must still hash to.
    """CREATE TABLE IF NOT EXISTS verification (
        cell_id TEXT PRIMARY KEY,
        files TEXT NOT NULL,             -- JSON {file name: SHA-256} of the cell folder
        episodes TEXT NOT NULL           -- opt_suite.store.verify.episodes_checksum of its rows
    )""",
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
)


class StoreError(RuntimeError, InputError):
    """The directory holds no usable results store (missing, unreadable, or a newer schema).

    An :class:`~opt_suite.files_guard.InputError`: any command that meets one exits 2 with its
    message, whichever layer raised it.
    """


class StoreDatabaseError(StoreError):
    """SQLite failed on an open store: damaged pages, a full disk, a lock held too long.

    Every statement of the store's connections raises this instead of ``sqlite3.Error``
    (:func:`connect`), so that no layer above ``store/`` needs to know that SQLite is underneath.
    """


_MOVE_ASIDE = (
    ": run into a fresh --out directory, or move {name} aside (`mv {path} {path}.damaged`) and"
    " rerun the same command to recompute every cell there"
)


class _StoreConnection(sqlite3.Connection):
    """A connection whose cursors turn ``sqlite3.Error`` into :class:`StoreDatabaseError`.

    ``store_path`` is set once :func:`connect` has checked the store; until then SQLite's own
    errors pass through, for ``connect`` to word them.
    """

    store_path: Path | None = None

    # Connection.execute creates its cursor in C, without calling cursor(): both are routed here.
    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:  # noqa: D102
        return self.cursor().execute(sql, parameters)

    def executemany(self, sql: str, seq_of_parameters: Iterable[Any], /) -> sqlite3.Cursor:  # noqa: D102
        return self.cursor().executemany(sql, seq_of_parameters)

    # typeshed overloads cursor() by factory type; this one only changes the default factory.
    def cursor(self, factory: Any = None) -> sqlite3.Cursor:  # type: ignore[override]  # noqa: D102
        return super().cursor(factory or _StoreCursor)


def _translated(cursor: sqlite3.Cursor, exc: sqlite3.Error) -> Exception:
    path = getattr(cursor.connection, "store_path", None)
    if path is None:
        return exc
    if isinstance(exc, sqlite3.OperationalError) and not _read_only(exc):
        # Locked too long, disk full or I/O: the store is not damaged, the operation failed.
        return StoreDatabaseError(f"{path}: the results store could not be read or written ({exc})")
    return StoreDatabaseError(
        f"{path}: the results store is damaged or read-only ({exc})"
        f"{_MOVE_ASIDE.format(path=path, name=path.name)}"
    )


class _StoreCursor(sqlite3.Cursor):
    """A cursor whose every SQLite error is a :class:`StoreDatabaseError` (see the connection)."""

    def execute(self, sql: str, parameters: Any = (), /) -> Self:  # noqa: D102
        try:
            return super().execute(sql, parameters)
        except sqlite3.Error as exc:
            raise _translated(self, exc) from exc

    def executemany(self, sql: str, seq_of_parameters: Iterable[Any], /) -> Self:  # noqa: D102
        try:
            return super().executemany(sql, seq_of_parameters)
        except sqlite3.Error as exc:
            raise _translated(self, exc) from exc

    def fetchone(self) -> Any:  # noqa: D102
        try:
            return super().fetchone()
        except sqlite3.Error as exc:
            raise _translated(self, exc) from exc

    def fetchall(self) -> list[Any]:  # noqa: D102
        try:
            return super().fetchall()
        except sqlite3.Error as exc:
            raise _translated(self, exc) from exc

    def __next__(self) -> Any:  # noqa: D105
        try:
            return super().__next__()
        except sqlite3.Error as exc:
            raise _translated(self, exc) from exc


def connect(path: str | Path, *, create: bool) -> sqlite3.Connection:
    """Open (and with ``create``, initialise) the store database at ``path``.

    Raises:
      StoreError: the database does not exist (and ``create`` is false), or has another schema
        version, or is not an SQLite file.
    """
    path = Path(path)
    if not create and not path.exists():
        raise StoreError(f"no results store at {path} (run `opt-suite run SPEC --out DIR` first)")
    for part in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        if part.is_symlink():
            # A link to another run's store would append this run there; SQLite writes its
            # -wal and -shm files through links too: none is ever followed.
            aside = _MOVE_ASIDE.format(path=part, name=part.name)
            raise StoreError(
                f"{part}: the results store is a symlink (to {os.readlink(part)}); a store is "
                f"never read or written through a link{aside}"
            )
    if path.exists():
        # SQLite would block on a FIFO, and report a directory or device as a disk I/O error.
        try:
            regular_file(path, "results store")
        except InputError as exc:
            raise StoreError(f"{exc}{_MOVE_ASIDE.format(path=path, name=path.name)}") from None
    try:
        # isolation_level=None: we issue BEGIN/COMMIT ourselves so one cell is one transaction.
        conn = sqlite3.connect(
            str(path), timeout=60.0, isolation_level=None, factory=_StoreConnection
        )
    except sqlite3.Error as exc:
        raise StoreError(
            f"{path}: cannot open the results store ({exc})"
            f"{_MOVE_ASIDE.format(path=path, name=path.name)}"
        ) from None
    try:
        conn.execute("PRAGMA busy_timeout = 60000")
        if create:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")  # WAL + NORMAL: durable at checkpoint
            conn.execute("BEGIN IMMEDIATE")
            for statement in _TABLES:
                conn.execute(statement)
            conn.execute(
                "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)",
                (str(SCHEMA_VERSION),),
            )
            conn.execute("COMMIT")
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.DatabaseError as exc:
        conn.close()
        if _read_only(exc):  # a store the user may read but not write is not damaged
            raise StoreError(
                f"{path}: cannot write the results store ({exc}): it, or its folder, is "
                "read-only for you; run into a fresh --out directory, or make it writable"
            ) from None
        raise StoreError(
            f"{path} is not a readable opt-suite results store ({exc})"
            f"{_MOVE_ASIDE.format(path=path, name=path.name)}"
        ) from exc
    conn.store_path = path  # from here on, SQLite's errors are StoreDatabaseError
    if row is None or int(row[0]) != SCHEMA_VERSION:
        conn.close()
        found = row[0] if row else "none"
        raise StoreError(
            f"{path} has results store schema version {found}; this opt-suite reads "
            f"version {SCHEMA_VERSION} (use a fresh --out directory)"
        )
    return conn


def _read_only(exc: sqlite3.DatabaseError) -> bool:
    """Whether SQLite refused a write because the database or its folder is read-only."""
    code = getattr(exc, "sqlite_errorcode", None)  # extended codes keep SQLITE_READONLY low
    return (code is not None and code & 0xFF == sqlite3.SQLITE_READONLY) or "readonly" in str(exc)
