"""Folders an export writes whole, and may later replace only when it can prove it wrote them.

An export (``export-tensorboard``, ``export-demos``) is built in a temporary sibling and renamed
into place, so its folder never holds a partial export. Its last file is a manifest: the SHA-256
of every other file it wrote. A later export replaces the folder only when it is absent, empty, or
holds exactly what its manifest lists, unchanged: a file a user put there, a changed file, a
symlink, or a folder without a manifest is never deleted, whatever its name (the caller refuses,
naming the file). Only the standard library and the file guard are imported: every layer may use
this.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from opt_suite.files_guard import InputError, read_json

__all__ = ["MAX_MANIFEST_BYTES", "file_digest", "replace_problem", "swap_in", "write_manifest"]

MAX_MANIFEST_BYTES = 64 << 20  # a manifest lists a digest per file: ~100 bytes each
_CHUNK = 1 << 20


def file_digest(path: Path) -> str:
    """SHA-256 of a file's bytes, hex."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def replace_problem(out: Path, marker: str, fmt: str) -> str | None:
    """Why ``out`` must not be replaced by a new export (one line), or None when it may be.

    It may when it does not exist, is an empty folder, or holds exactly the files its manifest
    ``marker`` (of format ``fmt``) lists with the digests it records: an earlier export,
    unchanged. A folder a user put files in (or changed a file of) is never replaced.
    """
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        return f"{out} exists and is not a folder: give another --out"
    if not out.exists() or not any(out.iterdir()):
        return None
    refuse = f"{out} exists and is not an earlier export"
    if (out / marker).is_symlink():
        return f"{refuse}: {out / marker} is a symlink: give another --out"
    try:
        manifest = read_json(out / marker, MAX_MANIFEST_BYTES, "export manifest")
    except InputError:
        return f"{refuse} (no readable {marker}): give another --out, or empty it"
    listed = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(listed, dict) or manifest.get("format") != fmt:
        return f"{refuse} (its {marker} is not this export's manifest): give another --out"
    found = {p.relative_to(out).as_posix(): p for p in sorted(out.rglob("*")) if p.name != marker}
    for name, path in found.items():
        if path.is_symlink() or not (path.is_dir() or path.is_file()):
            return f"{refuse}: {path} is not a regular file: give another --out"
        if path.is_file() and (name not in listed or file_digest(path) != listed[name]):
            what = "is not in its manifest" if name not in listed else "changed since the export"
            return f"{refuse}: {path} {what}: give another --out"
    absent = sorted(set(listed) - {n for n, p in found.items() if p.is_file()})
    if absent:
        return f"{refuse}: {out / absent[0]} of its manifest is missing: give another --out"
    return None


def write_manifest(folder: Path, marker: str, fmt: str, extra: Mapping[str, Any]) -> None:
    """Write ``folder/marker``: ``fmt``, ``extra`` and the SHA-256 of every file in ``folder``."""
    files = {
        p.relative_to(folder).as_posix(): file_digest(p)
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != marker
    }
    manifest = {**extra, "format": fmt, "files": files}
    (folder / marker).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")


def swap_in(staging: Path, out: Path) -> None:
    """Put folder ``staging`` in the place of ``out`` (which :func:`replace_problem` allowed).

    The old folder is renamed aside before the new one is renamed in, then deleted: ``out`` is
    never missing its export for longer than between two renames.
    """
    if out.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old.", dir=out.parent))
        os.replace(out, old / out.name)
        os.replace(staging, out)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(staging, out)
