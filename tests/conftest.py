"""Imported before every test module: opt_suite first, so that its CPU-kernel pins
(opt_suite/_numerics.py) are in the environment before anything imports NumPy or TensorFlow, and
numbers computed in the test process are those of the worker processes and of every machine.

For the same reason the test process runs TensorFlow as the runner's workers do: their inter-op
thread count and deterministic kernels, taken from ``runner.cells.worker_environment`` (the one
place that says how workers run; importing it loads no TensorFlow). With independent ops run
concurrently, two fits of one seed in one process could differ in their last bit (measured on
LOVE's same-seed contract: 1e-7 apart, 0 with one inter-op thread), while the runner's cells never
run that way. The BLAS and intra-op thread counts are left to the machine: the tests of the
workers' own environment check that the runner sets them.
"""

import os

import opt_suite  # noqa: F401
from opt_suite.runner.cells import worker_environment

for _key in ("TF_NUM_INTEROP_THREADS", "TF_DETERMINISTIC_OPS"):
    os.environ.setdefault(_key, worker_environment()[_key])


import fcntl  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def _one_ray_at_a_time_on_this_host(request):
    """Tests marked ``ray`` start Ray clusters; two starting at once on one host race for its
    auth token (``~/.ray/auth_token``) and its latest-cluster file, and a GCS then fails to
    start. xdist runs test files side by side, so a module with a ``ray`` test holds a host-wide
    lock while it runs (module scope: its cluster fixtures are module-scoped too)."""
    items = [i for i in request.session.items if getattr(i, "module", None) is request.module]
    if not any(item.get_closest_marker("ray") for item in items):
        yield
        return
    with open(Path(tempfile.gettempdir()) / "opt-suite-tests-ray.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
