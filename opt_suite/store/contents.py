"""What one run directory's store holds for one spec, read once: the input of a merge.

:func:`read_contents` reads a store's runs, the plan and tasks of its view (the latest run's spec,
as :class:`~opt_suite.store.reader.ResultsStore` sees it), the code that computed its cells, and
its completed and failed cells with every row, so that :mod:`opt_suite.store.merge` can check
and copy them without another query.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from opt_suite.store.files import CELL_FILE
from opt_suite.store.reader import ResultsStore
from opt_suite.store.schema import DB_NAME, connect
from opt_suite.store.verify import curves_checksum

__all__ = ["DoneCell", "StoreContents", "db_path", "has_runs", "read_contents", "run_key"]


@dataclasses.dataclass(frozen=True)
class DoneCell:
    """One completed cell of a shard: its rows, and what identifies its results."""

    row: tuple[Any, ...]  # the `cells` row
    files: str  # verification.files (JSON)
    episodes_sum: str  # verification.episodes
    episodes: list[tuple[Any, ...]]
    curves: list[tuple[Any, ...]]
    option_set: tuple[Any, ...] | None

    def fingerprint(self) -> tuple[str, ...]:
        """What two copies of the cell must share: file digests, episode and curve checksums.

        ``cell.json`` is left out: it records when and where the cell ran, which differs
        between identical results.
        """
        files = {k: v for k, v in json.loads(self.files).items() if k != CELL_FILE}
        curves = curves_checksum([(r[3], r[4], r[5]) for r in self.curves])
        return json.dumps(files, sort_keys=True), self.episodes_sum, curves


@dataclasses.dataclass
class StoreContents:
    """What one store contributes: the spec, its runs, its view's plan and cells."""

    directory: Path
    spec_name: str
    spec_hash: str
    spec_yaml: str
    git_commit: str | None
    versions: dict[str, str]
    runs: list[tuple[Any, ...]]
    plan: list[tuple[str, str, str | None, int, int]]
    tasks: list[tuple[str, int, str, Any]]
    code: dict[tuple[str, str | None], set[str]]
    done: dict[str, DoneCell]
    failed: dict[str, tuple[Any, ...]]
    all_done: bool


def db_path(directory: Path) -> Path:
    """The store's database file in a run directory (named in every message)."""
    return directory / DB_NAME


def read_contents(directory: Path, spec_hash: str | None = None) -> StoreContents:
    """Everything the merge needs from one store, read once."""
    with ResultsStore(directory, spec_hash) as store:
        run = store.run()
        plan = store.planned()
        tasks = [(t.split, t.index, t.task_id, t.params) for t in store.tasks()]
        spec_yaml = store.spec_yaml()
        status = {c.cell_id: c.status for c in store.cells()}
    conn = connect(db_path(directory), create=False)
    try:
        runs = conn.execute(
            "SELECT * FROM runs WHERE spec_hash = ? ORDER BY run_id", (run.spec_hash,)
        ).fetchall()
        planned = {row[0] for row in plan}
        cells = {
            r[0]: tuple(r)
            for r in conn.execute("SELECT * FROM cells").fetchall()
            if r[0] in planned
        }
        verification = {
            r[0]: (r[1], r[2])
            for r in conn.execute("SELECT cell_id, files, episodes FROM verification").fetchall()
        }
        episodes: dict[str, list[tuple[Any, ...]]] = {}
        for r in conn.execute("SELECT * FROM episodes").fetchall():
            episodes.setdefault(r[0], []).append(tuple(r))
        curves: dict[str, list[tuple[Any, ...]]] = {}
        for r in conn.execute("SELECT * FROM curves").fetchall():
            curves.setdefault(r[0], []).append(tuple(r))
        option_sets = {r[0]: tuple(r) for r in conn.execute("SELECT * FROM option_sets")}
    finally:
        conn.close()
    done: dict[str, DoneCell] = {}
    failed: dict[str, tuple[Any, ...]] = {}
    code: dict[tuple[str, str | None], set[str]] = {}
    for cell_id, row in cells.items():
        kind, method, inputs = row[1], row[2], json.loads(row[11])
        code.setdefault((kind, method), set()).add(json.dumps(inputs.get("code"), sort_keys=True))
        if status.get(cell_id) != "done" or cell_id not in verification:
            if row[4] == "failed":
                failed[cell_id] = row
            continue
        files, episodes_sum = verification[cell_id]
        done[cell_id] = DoneCell(
            row,
            files,
            episodes_sum,
            episodes.get(cell_id, []),
            curves.get(cell_id, []),
            option_sets.get(cell_id),
        )
    return StoreContents(
        directory=directory,
        spec_name=run.spec_name,
        spec_hash=run.spec_hash,
        spec_yaml=spec_yaml,
        git_commit=run.git_commit,
        versions=run.versions,
        runs=[tuple(r) for r in runs],
        plan=plan,
        tasks=tasks,
        code=code,
        done=done,
        failed=failed,
        all_done=all(status.get(row[0]) == "done" for row in plan),
    )


def has_runs(directory: Path) -> bool:
    """Whether ``directory`` holds a store with at least one run."""
    if not db_path(directory).exists():
        return False
    conn = connect(db_path(directory), create=False)
    try:
        return conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] > 0
    finally:
        conn.close()


def run_key(run: tuple[Any, ...]) -> tuple[Any, ...]:
    """What identifies a ``runs`` row in any store: (spec hash, host, pid, start time)."""
    # runs columns: run_id, spec_name, spec_hash, ..., host (6), pid (7), ..., started (12)
    return run[2], run[6], run[7], run[12]
