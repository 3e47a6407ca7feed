"""Cell claims: how two runners on one directory share the work instead of corrupting it.

A runner computes a cell only while it holds an exclusive ``flock`` on
``DIR/claims/<cell id>.lock``. The operating system drops the lock when the process dies
(``kill -9`` included), so a claim is never left stale; a second runner simply skips cells claimed
by the first and picks up their results from the store once they are done.

A step that every runner must do itself, one at a time, waits for the claim instead
(:meth:`Claims.held`): e.g. writing a spec's reference returns, which must cover the seeds every
runner stored.

Neither ``claims/`` nor a lock file is ever a symlink followed: a link would put the runner's
files (or open another's) outside the run folder; it is refused, naming it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from opt_suite.files_guard import unlinked_folder

__all__ = ["Claims"]


class Claims:
    """The claims this process holds in ``directory``."""

    def __init__(self, directory: Path) -> None:
        """Raises InputError: ``claims/`` is a symlink or not a folder."""
        self.root = unlinked_folder(Path(directory) / "claims", "the cell claims folder")
        self.root.mkdir(parents=True, exist_ok=True)
        self._held: dict[str, int] = {}

    def try_claim(self, cell_id: str) -> bool:
        """Take the claim on ``cell_id`` if no other runner holds it (never blocks)."""
        if cell_id in self._held:
            return True
        fd = self._open_lock(cell_id)
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
        fd = self._open_lock(name)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing drops the lock

    def _open_lock(self, name: str) -> int:
        """The lock file of ``name``, opened (created if missing), never through a symlink.

        Raises:
          OSError: it cannot be opened; a symlink there is named (a cell then fails, naming it).
        """
        path = self.root / f"{name}.lock"
        try:
            return os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise OSError(exc.errno, f"{path} is a symlink (never followed)") from None
            raise

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
