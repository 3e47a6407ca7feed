"""Running a constructor the user's input sizes under a cap on the memory it may take.

A gymnasium env's keyword arguments may size its memory (MiniGrid ``size: 20000`` builds a grid
of 400 million cells: 3.2 GB) and ``validate`` builds the env to check them. No bound written in
this suite can know every env's kwargs, so the construction itself is capped: the process's
address space (``RLIMIT_AS``) is lowered, for the duration of the block, to what it uses now plus
the allowance, so that an allocation beyond it fails with ``MemoryError`` instead of exhausting
the machine. What the block allocated through Python and NumPy is measured too (``tracemalloc``),
for the work estimate. Imports nothing from the suite, so every layer may use it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import tracemalloc
from collections.abc import Iterator

__all__ = ["Allocated", "capped"]

try:
    import resource
except ImportError:  # not POSIX: nothing can be capped, the block is only measured
    resource = None  # type: ignore[assignment]


@dataclasses.dataclass
class Allocated:
    """Filled in when the block ends: the most bytes it had allocated at once."""

    peak: int = 0


def _address_space() -> int | None:
    """This process's virtual memory size in bytes (Linux), or None."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


@contextlib.contextmanager
def capped(allowance: int) -> Iterator[Allocated]:
    """Run the block with at most ``allowance`` more bytes of address space, and measure it.

    Raises:
      MemoryError: (from the block) an allocation would exceed the allowance.
    """
    allocated = Allocated()
    tracing = tracemalloc.is_tracing()
    if not tracing:
        tracemalloc.start()
    before, _ = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    previous = None
    current = _address_space()
    if resource is not None and current is not None:
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = current + allowance
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        if soft == resource.RLIM_INFINITY or limit < soft:
            previous = (soft, hard)
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield allocated
    finally:
        if previous is not None:
            resource.setrlimit(resource.RLIMIT_AS, previous)
        _, peak = tracemalloc.get_traced_memory()
        allocated.peak = max(0, peak - before)
        if not tracing:
            tracemalloc.stop()
