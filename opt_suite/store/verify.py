"""Digests that let the store notice altered results instead of reporting them.

Every completed cell records, in the ``verification`` table and in the same transaction as its
``done`` row, the SHA-256 of each file of its folder and a checksum of its episode rows. The runner
treats a done cell whose files or rows no longer match as not done, and recomputes it (a truncated
``options.npz`` no longer fails its dependants forever; a swapped file no longer changes a result
silently); ``opt-suite report`` and ``compare`` refuse such a store, naming the cell, instead of
reporting numbers that were never computed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from pathlib import Path

from opt_suite.export_folder import file_digest

__all__ = [
    "curves_checksum",
    "episodes_checksum",
    "file_digest",
    "folder_digests",
    "folder_problem",
]


def folder_digests(folder: Path) -> dict[str, str]:
    """File name -> SHA-256 of every regular file directly in ``folder``."""
    return {p.name: file_digest(p) for p in sorted(folder.iterdir()) if p.is_file()}


def folder_problem(folder: Path, expected: Mapping[str, str]) -> str | None:
    """What is wrong with a cell folder against its recorded digests, or None when it matches."""
    if not folder.is_dir():
        return f"its folder {folder} is missing"
    for name, digest in sorted(expected.items()):
        path = folder / name
        if not path.is_file():
            return f"its file {path} is missing"
        try:
            actual = file_digest(path)
        except OSError as exc:
            return f"its file {path} cannot be read ({exc.strerror or exc})"
        if actual != digest:
            return f"its file {path} was altered or truncated (its SHA-256 differs)"
    return None


def episodes_checksum(rows: Iterable[tuple[int, int, float, int, int]]) -> str:
    """SHA-256 of a cell's episode rows ``(task, episode, return, steps, frames)``, in any order.

    Returns are hashed by their exact binary value (``float.hex``), so any change to a stored
    number -- a flipped bit in the SQLite file, an edited row -- changes the checksum.
    """
    text = "\n".join(
        f"{int(t)} {int(e)} {float(r).hex()} {int(s)} {int(f)}" for t, e, r, s, f in sorted(rows)
    )
    return hashlib.sha256(text.encode()).hexdigest()


def curves_checksum(rows: Iterable[tuple[str, int, float | None]]) -> str:
    """SHA-256 of a cell's curve rows ``(name, step, value)`` (None: NaN), in any order.

    Not recorded with a cell (its curves are not reported as numbers to gate on); merging shard
    stores compares it to tell a conflicting copy of a cell from an identical one.
    """
    text = "\n".join(
        f"{name} {int(step)} {'nan' if value is None else float(value).hex()}"
        for name, step, value in sorted(rows, key=lambda r: (r[0], r[1]))
    )
    return hashlib.sha256(text.encode()).hexdigest()
