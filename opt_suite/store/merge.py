"""Merging the stores of independent shards of one spec into one run directory.

Each shard (``opt-suite run SPEC --shard i/N --out DIR_i``, e.g. one Slurm array task) writes a
store of its own, so no two jobs ever share an SQLite file or a lock. :func:`merge_stores` then
copies every shard's runs and completed cells (rows and folders) into one store, and records one
more run, of the union of the shards' plans, which the reports read as they read a normal run.

It refuses, before writing anything (:class:`MergeRefused`, one line naming the stores):

- shards of different specs (spec hashes), or a target that holds another spec;
- shards whose cells were computed by different code: the ``code`` every cell id hashes
  (runner/versions.py: package versions and source digests) differs for one stage and method;
- conflicting cells: one cell id with different results (files other than ``cell.json``,
  episode rows, curves) in two stores;
- a shard cell that fails its own verification (altered or truncated since it was computed).

Merging is idempotent: a run is recognised by (spec hash, host, pid, start time) and a cell by its
id, so a shard merged twice adds no row; and it reads each row once (linear in the rows).
"""

from __future__ import annotations

import dataclasses
import json
import socket
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from opt_suite.store.contents import (
    DoneCell,
    StoreContents,
    db_path,
    has_runs,
    read_contents,
    run_key,
)
from opt_suite.store.files import cell_dir, copy_cell_dir
from opt_suite.store.schema import RUN_FAMILY_KEY, StoreError, connect
from opt_suite.store.verify import episodes_checksum, folder_problem
from opt_suite.store.writer import StoreWriter, _transaction

__all__ = ["MergeRefused", "MergeSummary", "merge_stores"]

#: ``runs.backend`` of the run a merge records (its cells were computed by the shards' runs).
MERGE_BACKEND = "merge"


class MergeRefused(StoreError):
    """The stores cannot be merged (other spec or code, a conflicting cell); nothing is written."""


@dataclasses.dataclass(frozen=True)
class MergeSummary:
    """What a merge did.

    Attributes:
      spec_name, spec_hash: the merged spec.
      runs_added: shard runs copied (0 when every one was merged before).
      cells_added: completed cells copied.
      cells_present: completed cells the target already held, identical.
      planned, done: the merged plan's cells, and how many of them are complete.
      seeds: the seed indices the merged run covers.
      recorded: whether a merged run was recorded (not when the merge added nothing).
      missing_shards: shards (``i/N``) of the runs' ``--shard N`` that no merged store holds.
      notes: what a user should know (e.g. shards run with other package versions).
    """

    spec_name: str
    spec_hash: str
    runs_added: int
    cells_added: int
    cells_present: int
    planned: int
    done: int
    seeds: tuple[int, ...]
    recorded: bool
    missing_shards: tuple[str, ...]
    notes: tuple[str, ...]

    @property
    def complete(self) -> bool:
        """Every planned cell is done and every shard of the runs' ``--shard i/N`` is merged."""
        return self.done == self.planned and not self.missing_shards


def _label(cell: tuple[Any, ...]) -> str:
    method = "" if cell[2] is None else f" of {cell[2]!r}"
    return f"{cell[1]}{method}, seed {cell[3]}"


def _check_same_spec(first: StoreContents, other: StoreContents, what: str) -> None:
    if other.spec_hash != first.spec_hash:
        raise MergeRefused(
            f"{db_path(other.directory)}: {what} holds spec {other.spec_name!r} (hash "
            f"{other.spec_hash[:12]}), not {first.spec_name!r} ({first.spec_hash[:12]}) as "
            f"{db_path(first.directory)} does; only shards of one spec merge"
        )


def _check_same_code(stores: Sequence[StoreContents]) -> None:
    """Refuse stores whose cells of one stage and method were computed by different code."""
    first: dict[tuple[str, str | None], tuple[str, StoreContents]] = {}
    for store in stores:
        for key, codes in sorted(store.code.items(), key=str):
            for code in sorted(codes):
                seen = first.setdefault(key, (code, store))
                if seen[0] == code:
                    continue
                kind, method = key
                who = kind + ("" if method is None else f" of {method!r}")
                raise MergeRefused(
                    f"{db_path(store.directory)}: its {who} cells were computed by other code "
                    f"than those of {db_path(seen[1].directory)} ({code} vs {seen[0]}; git "
                    f"{store.git_commit} vs {seen[1].git_commit}); rerun the shards with one"
                    " install of opt-suite and its plugins"
                )


def _verify_shard_cell(shard: StoreContents, cell_id: str, cell: DoneCell) -> None:
    problem = folder_problem(cell_dir(shard.directory, cell_id), json.loads(cell.files))
    if problem is None:
        rows = [(r[3], r[4], r[5], r[6], r[7]) for r in cell.episodes]
        if episodes_checksum(rows) != cell.episodes_sum:
            problem = "its episode rows do not match their checksum"
    if problem is not None:
        raise MergeRefused(
            f"{db_path(shard.directory)}: cell {cell_id} ({_label(cell.row)}) fails verification: "
            f"{problem}; rerun that shard's `opt-suite run` (it recomputes such cells), then merge"
        )


def merge_stores(
    out: str | Path,
    shards: Sequence[str | Path],
    argv: Sequence[str],
    spec_hash: str | None = None,
) -> MergeSummary:
    """Merge the stores of ``shards`` (run directories) into ``out``'s (created if missing).

    Args:
      out: the run directory to merge into (may already hold a merge, or be one of the shards).
      shards: the shards' run directories; each one's latest spec is merged.
      argv: the command line, recorded as the merged run's.
      spec_hash: merge this spec of every shard instead of its latest: one variant of a sweep
        (whose shards hold every variant's runs). ``out`` may then hold other specs — the sweep's
        other variants, which the caller has checked (``cli/merge_stores.py``).

    Raises:
      MergeRefused: other specs, other code, a conflicting or unverifiable cell (nothing written).
      StoreError: a shard holds no store or no run.
      DirectoryInUse: a run of another spec is running in ``out``.
    """
    out = Path(out)
    read = [read_contents(Path(s), spec_hash) for s in shards]
    if not read:
        raise MergeRefused("no shard directories to merge")
    first = read[0]
    for i, shard in enumerate(read[1:], start=2):
        _check_same_spec(first, shard, f"shard {i}")
    target = None
    if has_runs(out) and spec_hash is None:
        _check_same_spec(first, read_contents(out), "the merge target")
        target = read_contents(out, first.spec_hash)
    elif has_runs(out):
        try:  # a variant merged before, or not yet (the target holds the other variants)
            target = read_contents(out, spec_hash)
        except StoreError:
            target = None
    _check_same_code(([target] if target else []) + read)

    # Every result once: cells the target holds, then each shard's new ones (conflicts refused).
    have = {} if target is None else dict(target.done)
    known = set(have)
    sources: dict[str, tuple[StoreContents, DoneCell]] = {}
    for shard in read:
        for cell_id, cell in shard.done.items():
            seen = have.get(cell_id)
            if seen is None:
                _verify_shard_cell(shard, cell_id, cell)
                have[cell_id] = cell
                sources[cell_id] = (shard, cell)
            elif seen.fingerprint() != cell.fingerprint():
                where = (
                    db_path(sources[cell_id][0].directory) if cell_id in sources else db_path(out)
                )
                raise MergeRefused(
                    f"{db_path(shard.directory)}: cell {cell_id} ({_label(cell.row)}) has other "
                    f"results than in {where}; one cell id must give one result, so these stores"
                    " are not merged (rerun that cell: move one copy's folder aside)"
                )
    present = len(known & {c for s in read for c in s.done})

    existing = set() if target is None else {run_key(r) for r in target.runs}
    new_runs = []
    for shard in read:
        for run in shard.runs:
            if run_key(run) not in existing:
                existing.add(run_key(run))
                new_runs.append((shard, run))
    failed = {
        cell_id: row
        for shard in read
        for cell_id, row in shard.failed.items()
        if cell_id not in have and (target is None or cell_id not in target.failed)
    }

    plan = {row[0]: row for view in ([target] if target else []) + read for row in view.plan}
    tasks = {(t[0], t[1]): t for view in ([target] if target else []) + read for t in view.tasks}
    done = sum(1 for cell_id in plan if cell_id in have)
    runs = ([] if target is None else target.runs) + [run for _, run in new_runs]
    missing = _missing_shards(runs)
    seeds = tuple(sorted({row[3] for row in plan.values()}))
    notes = tuple(_version_notes(read))
    same_plan = target is not None and set(plan) == {r[0] for r in target.plan}
    # A merge that adds nothing records nothing (a shard merged twice adds no row at all).
    recorded = bool(new_runs or sources or failed) or not (
        same_plan and target is not None and _latest_is_merge(target)
    )

    writer = StoreWriter(out)
    try:
        for cell_id, (shard, _) in sources.items():
            copy_cell_dir(cell_dir(shard.directory, cell_id), out, cell_id)
        with _transaction(writer.conn):
            for shard, run in new_runs:
                _copy_run(writer.conn, shard, run)
            for _, cell in sources.values():
                _insert_cell(writer.conn, cell)
            for row in failed.values():
                writer.conn.execute(
                    f"INSERT OR IGNORE INTO cells VALUES ({', '.join('?' * len(row))})", row
                )
        if recorded:
            run_id = writer.begin_run(
                spec_name=first.spec_name,
                spec_hash=first.spec_hash,
                spec_yaml=first.spec_yaml,
                provenance={
                    "git_commit": first.git_commit,
                    "versions": first.versions,
                    "host": socket.gethostname(),
                    **_family_of(first),
                },
                backend=MERGE_BACKEND,
                workers=0,
                seeds=seeds,
                argv=argv,
            )
            writer.record_plan(run_id, plan.values(), tasks.values())
            counts = {
                "total": len(plan),
                "reused": present,
                "computed": len(sources),
                "failed": len(plan) - done,
            }
            complete = done == len(plan) and not missing
            writer.finish_run(run_id, "done" if complete else "failed", counts)
    finally:
        writer.close()
    return MergeSummary(
        spec_name=first.spec_name,
        spec_hash=first.spec_hash,
        runs_added=len(new_runs),
        cells_added=len(sources),
        cells_present=present,
        planned=len(plan),
        done=done,
        seeds=seeds,
        recorded=recorded,
        missing_shards=tuple(missing),
        notes=notes,
    )


def _missing_shards(runs: Sequence[tuple[Any, ...]]) -> list[str]:
    """``i/N`` of each ``--shard i/N`` count the runs used whose shard ``i`` none of them ran.

    The plan of a merge is the union of the shards' plans, so it cannot see a shard that was
    never merged; the shards' command lines (``runs.argv``) say how many there were.
    """
    ran: dict[int, set[int]] = {}
    for run in runs:
        argv = [str(a) for a in json.loads(run[8])]
        values = [v for a, v in zip(argv, argv[1:], strict=False) if a == "--shard"]
        values += [a.partition("=")[2] for a in argv if a.startswith("--shard=")]
        for value in values:
            index, _, count = value.strip().partition("/")
            if index.isdigit() and count.isdigit():
                ran.setdefault(int(count), set()).add(int(index))
    return [f"{i}/{n}" for n, seen in sorted(ran.items()) for i in range(1, n + 1) if i not in seen]


def _latest_is_merge(view: StoreContents) -> bool:
    return bool(view.runs) and view.runs[-1][9] == MERGE_BACKEND


def _version_notes(read: Sequence[StoreContents]) -> list[str]:
    first = read[0]
    notes = []
    for shard in read[1:]:
        differ = sorted(
            name
            for name in set(first.versions) | set(shard.versions)
            if first.versions.get(name) != shard.versions.get(name)
        )
        if differ:
            notes.append(
                f"{db_path(shard.directory)} ran with other package versions than "
                f"{db_path(first.directory)} ({', '.join(differ)}); cells hash only the code of "
                "their own components, so check these did not change the numbers"
            )
    return notes


def _family_of(shard: StoreContents) -> dict[str, Any]:
    """``{"family": ...}`` as the shard's latest run recorded it (empty: recorded before)."""
    source = connect(db_path(shard.directory), create=False)
    try:
        row = source.execute(
            "SELECT value FROM meta WHERE key = ?", (f"{RUN_FAMILY_KEY}{shard.runs[-1][0]}",)
        ).fetchone()
    finally:
        source.close()
    return {} if row is None else {"family": json.loads(row[0])}


def _copy_run(conn: Any, shard: StoreContents, run: tuple[Any, ...]) -> None:
    """Copy one shard run with its plan and tasks, under a new run id of the target."""
    cursor = conn.execute(
        f"INSERT INTO runs VALUES (NULL, {', '.join('?' * (len(run) - 1))})", run[1:]
    )
    new_id = cursor.lastrowid
    source = connect(db_path(shard.directory), create=False)
    try:
        plan = source.execute("SELECT * FROM plan WHERE run_id = ?", (run[0],)).fetchall()
        tasks = source.execute("SELECT * FROM tasks WHERE run_id = ?", (run[0],)).fetchall()
        family = source.execute(
            "SELECT value FROM meta WHERE key = ?", (f"{RUN_FAMILY_KEY}{run[0]}",)
        ).fetchall()
    finally:
        source.close()
    conn.executemany(  # the family's facts the run recorded, under its new id
        "INSERT OR REPLACE INTO meta VALUES (?, ?)",
        [(f"{RUN_FAMILY_KEY}{new_id}", value) for (value,) in family],
    )
    conn.executemany(
        "INSERT OR REPLACE INTO plan VALUES (?, ?, ?, ?, ?, ?)",
        [(new_id, *row[1:]) for row in plan],
    )
    conn.executemany(
        "INSERT OR REPLACE INTO tasks VALUES (?, ?, ?, ?, ?)", [(new_id, *row[1:]) for row in tasks]
    )


def _insert_cell(conn: Any, cell: DoneCell) -> None:
    """One completed cell's rows, replacing whatever the target held for its id."""
    cell_id = cell.row[0]
    for table in ("episodes", "curves", "option_sets", "verification", "cells"):
        conn.execute(f"DELETE FROM {table} WHERE cell_id = ?", (cell_id,))
    conn.execute(f"INSERT INTO cells VALUES ({', '.join('?' * len(cell.row))})", cell.row)
    conn.executemany("INSERT INTO episodes VALUES (?, ?, ?, ?, ?, ?, ?, ?)", cell.episodes)
    conn.executemany("INSERT INTO curves VALUES (?, ?, ?, ?, ?, ?)", cell.curves)
    if cell.option_set is not None:
        conn.execute("INSERT INTO option_sets VALUES (?, ?, ?, ?, ?)", cell.option_set)
    conn.execute(
        "INSERT INTO verification VALUES (?, ?, ?)", (cell_id, cell.files, cell.episodes_sum)
    )
