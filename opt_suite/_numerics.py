"""The same numbers on every x86-64 machine: CPU-dependent kernels pinned to one instruction set.

Some libraries pick their float kernels at run time from the CPU they find; a kernel for another
instruction set sums in another order, so the last bits differ — enough to change an option set and
every return learned with it (docs/reliability-numbers.md has the measurements). Two of them
matter to the bundled specs:

- oneDNN, which runs TensorFlow's matrix products on x86 (also with ``TF_ENABLE_ONEDNN_OPTS=0``:
  TensorFlow's own contractions call its sgemm): AVX-512, AVX2, AVX and SSE4.1 kernels give four
  different results. ``ONEDNN_MAX_CPU_ISA`` caps it.
- NumPy's SIMD dispatch (elementwise functions such as ``exp`` have AVX-512 versions).
  ``NPY_DISABLE_CPU_FEATURES`` turns those off.

Both are capped at AVX2 (with FMA), which every x86-64 server since 2013 (Intel Haswell, AMD Zen)
has: a machine with AVX-512 runs the AVX2 kernels, and so gives the numbers of one without. Both
are caps, safe on an older CPU (which then runs its own, lower kernels: other numbers). OpenBLAS
(NumPy's ``@``) also picks kernels by CPU; forcing them (``OPENBLAS_CORETYPE``) did not change the
quick spec's option bytes when measured, and would crash a CPU without them, so it is left alone.
Each is read once, when its library loads, so :func:`pin` must run before NumPy or TensorFlow is
imported — ``import opt_suite`` does it first thing — and worker processes inherit the environment.
A variable the user set is left alone (``setdefault``): they get the numbers they asked for.
"""

from __future__ import annotations

import os
import sys

__all__ = ["PINNED", "pin", "unpinned"]

#: The environment that pins every CPU-dependent kernel to AVX2. NumPy's list is the AVX-512
#: targets its 2.x wheels dispatch to (a name it does not know only earns an ImportWarning).
PINNED = {
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "NPY_DISABLE_CPU_FEATURES": (
        "AVX512F AVX512CD AVX512_KNL AVX512_KNM AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL"
    ),
}


def pin() -> None:
    """Write :data:`PINNED` into the environment (values already set are kept)."""
    for key, value in PINNED.items():
        os.environ.setdefault(key, value)


def unpinned() -> str | None:
    """Why this process's numbers may not be the pinned ones, or None when they are.

    NumPy imported before :func:`pin` ran (e.g. by a script that imported it before opt_suite)
    keeps its AVX-512 kernels; TensorFlow imported before keeps oneDNN's.
    """
    numpy_core = sys.modules.get("numpy._core._multiarray_umath")
    if numpy_core is not None and getattr(numpy_core, "__cpu_features__", {}).get("AVX512F"):
        disabled = os.environ.get("NPY_DISABLE_CPU_FEATURES", "")
        return (
            "NumPy uses its AVX-512 kernels in this process (it was imported before opt_suite, "
            f"or NPY_DISABLE_CPU_FEATURES={disabled!r} does not disable them)"
        )
    return None
