"""Pool workers run NumPy's OpenBLAS on one thread, as ``worker_environment`` asks.

OpenBLAS reads ``OPENBLAS_NUM_THREADS`` once, when NumPy loads it; a worker imports NumPy while
unpickling its initializer, before ``init_worker`` runs. Set only there, the variable came too
late: workers ran two BLAS threads whose spinning inflated NumPy-heavy cells' CPU by a third.
"""

from __future__ import annotations

import ctypes

from opt_suite.runner.backends import PoolBackend


def openblas_threads() -> int:
    """The thread count of the OpenBLAS this process loaded with NumPy."""
    import numpy as np

    np.ones((64, 64)) @ np.ones((64, 64))  # NumPy's BLAS is loaded and used
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if "openblas" in line.split()[-1]}
    assert paths, "no OpenBLAS library mapped into this process"
    for path in paths:
        library = ctypes.CDLL(path)
        for name in ("scipy_openblas_get_num_threads64_", "openblas_get_num_threads"):
            if hasattr(library, name):
                return int(getattr(library, name)())
    raise AssertionError(f"no get_num_threads in {sorted(paths)}")


def test_pool_workers_run_one_blas_thread():
    backend = PoolBackend(workers=1)
    try:
        threads = backend._pool.submit(openblas_threads).result(timeout=120)
    finally:
        backend.close()
    assert threads == 1
