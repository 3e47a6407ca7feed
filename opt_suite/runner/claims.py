"""Cell claims: how two runners on one directory share the work instead of corrupting it.

A runner computes a cell only while it holds an exclusive ``flock`` on
``DIR/claims/<cell id>.lock``. The operating system drops the lock when the process dies
(``kill -9`` included), so a claim is never left stale; a second runner simply skips cells claimed
by the first and picks up their results from the store once they are done.

A step that every runner must do itself, one at a time, waits for the claim instead
(:meth:`Claims.held`): e.g. writing a spec's reference returns, which must cover the seeds every
runner stored.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

__all__ = ["Claims"]


class Claims:
    """The claims this process holds in ``directory``."""

    def __init__(self, directory: Path) -> None:
        self.root = Path(directory) / "claims"
        self.root.mkdir(parents=True, exist_ok=True)
        self._held: dict[str, int] = {}

    def try_claim(self, cell_id: str) -> bool:
        """Take the claim on ``cell_id`` if no other runner holds it (never blocks)."""
        if cell_id in self._held:
            return True
        fd = os.open(self.root / f"{cell_id}.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._held[cell_id] = fd
        return True

    @contextlib.contextmanager
    def held(self, name: str) -> Iterator[None]:
        """Hold the claim on ``name`` for the block, waiting while another runner holds it."""
        fd = os.open(self.root / f"{name}.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing drops the lock

    def release(self, cell_id: str) -> None:
        """Give the claim back (the lock file stays: deleting it would race with other runners)."""
        fd = self._held.pop(cell_id, None)
        if fd is not None:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def release_all(self) -> None:
        """Give every claim back."""
        for cell_id in list(self._held):
            self.release(cell_id)
