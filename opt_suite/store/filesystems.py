"""Which file system a run directory is on, to warn where its locks are not to be trusted.

A store relies on SQLite's WAL locks and shared-memory index and on ``flock`` cell claims
(runner/claims.py). Network and cluster file systems do not promise either (docs/scaling.md,
"Shared file systems"): one runner per directory is fine there, two are not. Linux only (it reads
``/proc/self/mountinfo``); elsewhere nothing is said.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["NETWORK_FILESYSTEMS", "filesystem_type", "shared_filesystem_note"]

#: File system types whose locking is remote, emulated or per-client.
NETWORK_FILESYSTEMS = frozenset(
    {
        "nfs",
        "nfs4",
        "lustre",
        "gpfs",
        "cifs",
        "smb3",
        "smbfs",
        "ceph",
        "fuse.sshfs",
        "fuse.glusterfs",
        "glusterfs",
        "beegfs",
        "afs",
        "9p",
    }
)

MOUNTINFO = Path("/proc/self/mountinfo")
_OCTAL = re.compile(r"\\([0-7]{3})")


def filesystem_type(path: Path, mountinfo: str) -> str | None:
    """The type of the file system holding ``path`` (absolute), from ``/proc/self/mountinfo`` text.

    The mount whose mount point is the longest prefix of ``path`` wins; None when none matches.
    """
    best: tuple[int, str] | None = None
    parts = path.parts
    for line in mountinfo.splitlines():
        fields, _, rest = line.partition(" - ")
        columns = fields.split()
        if len(columns) < 5 or not rest:
            continue
        # Mount points escape space, tab, newline and backslash as octal (\040 ...).
        point = Path(_OCTAL.sub(lambda m: chr(int(m.group(1), 8)), columns[4]))
        if parts[: len(point.parts)] == point.parts and (
            best is None or len(point.parts) >= best[0]
        ):
            best = (len(point.parts), rest.split()[0])
    return None if best is None else best[1]


def shared_filesystem_note(directory: Path) -> str | None:
    """One line to print when ``directory`` is on a network file system, else None."""
    try:
        text = MOUNTINFO.read_text()
    except OSError:
        return None
    kind = filesystem_type(Path(os.path.realpath(directory)), text)
    if kind not in NETWORK_FILESYSTEMS:
        return None
    return (
        f"note: {directory} is on {kind}, where SQLite's and flock's locks are not reliable: run"
        " one runner per directory there (a shard per job: docs/scaling.md, 'Shared file"
        " systems'), never two on the same --out"
    )
