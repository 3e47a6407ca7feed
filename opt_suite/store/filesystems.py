"""Which file system a run directory is on, to warn where its locks are not to be trusted.

A store relies on SQLite's WAL locks and shared-memory index and on ``flock`` cell claims
(runner/claims.py). Network and cluster file systems do not promise either (docs/scaling.md,
"Shared file systems"): one runner per directory is fine there, two are not. The type is read
from ``/proc/self/mountinfo`` (Linux only; elsewhere nothing is said); :func:`flock_enforced`
also tries the claims' lock itself, which catches a file system that drops ``flock`` even on one
machine (not one whose locks are merely local to each client: no probe on one node sees that).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import uuid
from pathlib import Path

__all__ = [
    "NETWORK_FILESYSTEMS",
    "filesystem_type",
    "flock_enforced",
    "lost_locks_warning",
    "shared_filesystem_note",
]

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


def flock_enforced(directory: Path) -> bool | None:
    """Whether an exclusive ``flock`` in ``directory`` keeps out a second one on the same file.

    Two descriptors of one file opened separately hold separate locks, so on a file system that
    honours ``flock`` the second attempt fails even in this process — as a second runner's claim
    of the same cell must (runner/claims.py). Probed in ``directory``, or its nearest existing
    parent when it does not exist yet, with a hidden file that is removed. None: no probe could
    be made there (no permission, a read-only parent).
    """
    folder = Path(directory)
    while not folder.is_dir() and folder != folder.parent:
        folder = folder.parent
    probe = folder / f".opt-suite-flock-probe-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        first = os.open(probe, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError:
        return None
    try:
        second = os.open(probe, os.O_RDWR | os.O_NOFOLLOW)
        try:
            fcntl.flock(first, fcntl.LOCK_EX | fcntl.LOCK_NB)
            try:
                fcntl.flock(second, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            return False
        except OSError:  # flock not supported at all (ENOLCK, EINVAL): no lock to rely on
            return False
        finally:
            os.close(second)
    finally:
        os.close(first)
        with contextlib.suppress(OSError):
            probe.unlink()


def lost_locks_warning(directory: Path) -> str | None:
    """One line to print when ``directory``'s file system does not enforce ``flock``, else None."""
    if flock_enforced(directory) is not False:
        return None
    return (
        f"warning: --out {directory}: this file system does not enforce flock locks (a probe"
        " locked one file twice), so the cell claims that keep two runners of one directory"
        " apart do nothing here: run one runner per directory (or shards, docs/scaling.md)"
    )
