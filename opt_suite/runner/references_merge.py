"""Joining the reference returns of a spec's shards (``opt-suite merge-stores``).

Each shard's run wrote its seeds' pairs (``references/<hash>.json``) and the spec's file
(``references/spec-<spec hash>.json``, :mod:`.references`); the merged folder gets every pair
and one spec's file with every seed, as one run of all the seeds writes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from opt_suite.runner.references import ReferenceError
from opt_suite.store.files import REFERENCES_DIR, copy_missing_files, references_file
from opt_suite.store.sealed import SealedFileError, read_sealed, write_sealed

__all__ = ["merge_references"]


def merge_references(out: str | Path, shards: Sequence[str | Path], spec_hash: str) -> Path | None:
    """Join the shards' reference returns of one spec into ``out``'s (``opt-suite merge-stores``).

    Copies the (seed, test task) files ``out`` lacks (sealed: a damaged one is remeasured by the
    next run, as any) and writes the spec's file, sealed, with every seed any of them measured,
    ascending (as one run of all the seeds writes it). A shard whose measurement failed passes its
    error on: the report then says why it has no normalised scores.

    Returns:
      The spec's file in ``out``, or None when no shard measured references.

    Raises:
      ReferenceError: a spec file cannot be trusted (damaged, edited), or two stores hold
        different reference returns for one seed.
    """
    out = Path(out)
    docs: list[tuple[Path, dict[str, Any]]] = []
    for directory in [out, *map(Path, shards)]:
        path = references_file(directory, spec_hash)
        if path.is_file():
            try:
                docs.append((path, read_sealed(path, "reference returns")))
            except SealedFileError as exc:
                raise ReferenceError(f"{exc}; rerun that shard to measure them again") from None
        if directory != out:
            copy_missing_files(
                directory / REFERENCES_DIR,
                out / REFERENCES_DIR,
                lambda p: not p.name.startswith("spec-"),
            )
    if not docs:
        return None
    target = references_file(out, spec_hash)
    failed = [doc for _, doc in docs if "error" in doc]
    if failed:
        write_sealed(target, failed[0])
        return target
    rows: dict[int, tuple[list[float], list[float], Path]] = {}
    for path, doc in docs:
        for seed, random, expert in zip(
            doc["seeds"], doc["random"], doc["expert_returns"], strict=True
        ):
            seen = rows.setdefault(int(seed), (random, expert, path))
            if seen[:2] != (random, expert):
                raise ReferenceError(
                    f"{path}: seed {seed}'s reference returns differ from those in {seen[2]}"
                )
    seeds = sorted(rows)
    doc = {
        **docs[0][1],
        "seeds": seeds,
        "random": [rows[s][0] for s in seeds],
        "expert_returns": [rows[s][1] for s in seeds],
    }
    write_sealed(target, doc)
    return target
