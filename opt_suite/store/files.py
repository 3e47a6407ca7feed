"""The files of one cell folder (``DIR/cells/<cell id>/``) and how they are written atomically."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

__all__ = [
    "DEMOS_FILE",
    "OPTIONS_FILE",
    "CELL_FILE",
    "USAGE_FILE",
    "REFERENCES_DIR",
    "EXPERTS_FOLDER",
    "cell_dir",
    "references_file",
    "write_cell_dir",
    "copy_cell_dir",
    "copy_missing_files",
    "load_demonstrations",
    "load_options",
    "write_bytes_atomic",
    "write_text_atomic",
    "process_alive",
    "remove_stale_temporaries",
]

DEMOS_FILE = "demonstrations.npz"
OPTIONS_FILE = "options.npz"
CELL_FILE = "cell.json"
USAGE_FILE = "option_usage.npz"  # evaluation cells of a learner that counts its option choices


#: Reference returns of the normalised scores (opt_suite.runner.references): one file per
#: (seed, test task), named by its content hash, and one per spec, ``spec-<spec hash>.json``.
REFERENCES_DIR = "references"

#: The run's trained experts (``ppo_expert``'s checkpoints), named by what trained them; only the
#: runner writes here (runner.cells.DemonstrationsJob), so every node's experts land in one place.
EXPERTS_FOLDER = "experts"


def references_file(directory: Path, spec_hash: str) -> Path:
    """The reference returns of one spec's run, as the runner writes them and reports read them."""
    return Path(directory) / REFERENCES_DIR / f"spec-{spec_hash}.json"


def cell_dir(directory: Path, cell_id: str) -> Path:
    """Where a cell's files live once it is complete."""
    return directory / "cells" / cell_id


def write_cell_dir(
    directory: Path, cell_id: str, meta: dict[str, Any], writers: dict[str, Callable[[Path], None]]
) -> dict[str, str]:
    """Write a cell's files into a temporary folder, then rename it into place.

    Args:
      directory: the run directory.
      cell_id: the cell's id (its folder name).
      meta: JSON-serialisable facts written to ``cell.json``.
      writers: file name -> function writing that file at the given path.

    Returns:
      File name -> SHA-256 of every file written (recorded with the cell, see
      :mod:`opt_suite.store.verify`). A folder left there by an interrupted attempt is replaced;
      the claim the runner holds on the cell guarantees no other writer is using it.
    """
    from opt_suite.store.verify import folder_digests

    with _renamed_into_place(directory, cell_id) as tmp:
        tmp.mkdir()
        for name, write in writers.items():
            write(tmp / name)
        (tmp / CELL_FILE).write_text(json.dumps(meta, indent=1, sort_keys=True, default=str))
        digests = folder_digests(tmp)
    return digests


def copy_cell_dir(source: Path, directory: Path, cell_id: str) -> None:
    """Copy another run directory's cell folder ``source`` into ``directory``, atomically.

    As :func:`write_cell_dir`: into a temporary folder first, then renamed into place, replacing
    a folder left there by an interrupted attempt (its row was never committed).
    """
    with _renamed_into_place(directory, cell_id) as tmp:
        shutil.copytree(source, tmp, symlinks=False)


@contextlib.contextmanager
def _renamed_into_place(directory: Path, cell_id: str) -> Iterator[Path]:
    """A temporary folder path (not created) that becomes the cell's folder when the block ends.

    A folder already there is replaced (the claim on the cell, or the merge's checks, guarantee
    no other writer uses it); on any error the temporary folder is removed instead.
    """
    final = cell_dir(directory, cell_id)
    tmp = directory / "cells" / f".tmp-{cell_id}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    tmp.parent.mkdir(parents=True, exist_ok=True)
    try:
        yield tmp
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def copy_missing_files(
    source: Path, target: Path, wanted: Callable[[Path], bool] = lambda path: True
) -> list[Path]:
    """Copy the ``wanted`` files under ``source`` that ``target`` lacks (by relative path).

    For the content-named caches of a run directory (``references/<hash>.json``, ``experts/``)
    when shard directories are merged: a file present in both is the same content by its name,
    and the target's is kept. Each file lands through a temporary name and a rename.
    """
    copied: list[Path] = []
    if not source.is_dir():
        return copied
    for path in sorted(source.rglob("*")):
        if not path.is_file() or path.is_symlink() or path.name.startswith(".") or not wanted(path):
            continue
        destination = target / path.relative_to(source)
        if destination.exists():
            continue
        destination.parent.mkdir(parents=True, exist_ok=True)
        tmp = destination.with_name(f".{destination.name}.{os.getpid()}.tmp")
        shutil.copy2(path, tmp)
        os.replace(tmp, destination)
        copied.append(destination)
    return copied


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename (never half-written)."""
    write_bytes_atomic(path, text.encode())


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename (never half-written)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def load_demonstrations(folder: Path) -> list[Any]:
    """The demonstrations stored in a demonstrations cell's folder."""
    from opt_suite.demonstrations import load_demonstrations as load

    return list(load(folder / DEMOS_FILE))


def load_options(folder: Path) -> Any:
    """The option set (any kind, see :mod:`opt_suite.options`) of a discovery cell's folder."""
    from opt_suite.options import load_option_set

    return load_option_set(folder / OPTIONS_FILE)


def remove_stale_temporaries(directory: Path) -> list[Path]:
    """Delete temporary cell folders left by killed runners (on this host) and return them."""
    root = directory / "cells"
    if not root.is_dir():
        return []
    removed = []
    for tmp in root.glob(".tmp-*"):
        pid = tmp.name.rsplit("-", 2)[-2]
        if pid.isdigit() and not process_alive(int(pid)):
            shutil.rmtree(tmp, ignore_errors=True)
            removed.append(tmp)
    return removed


def process_alive(pid: int) -> bool:
    """Whether a process of this id runs on this host (one we may not signal counts as running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
