"""``njit``: numba's compiler (cached on disk) when numba is installed, else the identity.

Only the training modules (``updates``, ``loop``) import this; the registered method module does
not, so ``opt-suite list`` never pays for importing numba.
"""

from __future__ import annotations

__all__ = ["njit", "COMPILED"]

try:
    import numba

    COMPILED = True
except ImportError:  # pragma: no cover - numba is a declared dependency
    COMPILED = False


def njit(function):
    """Compile ``function`` in nopython mode (on-disk cache); the function itself without numba."""
    return numba.njit(cache=True, nogil=True)(function) if COMPILED else function
