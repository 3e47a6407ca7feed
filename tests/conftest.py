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
from ray_files import is_ray_file as _is_ray_file  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def _one_ray_at_a_time_on_this_host(request):
    """Tests marked ``ray`` start Ray clusters; two starting at once on one host race for its
    auth token (``~/.ray/auth_token``) and its latest-cluster file, and a GCS then fails to
    start. xdist runs test files side by side, so a module with a ``ray`` test holds a host-wide
    lock while it runs (module scope: its cluster fixtures are module-scoped too)."""
    if not _module_has_marker(request.session.items, request.module, "ray"):
        yield
        return
    with open(Path(tempfile.gettempdir()) / "opt-suite-tests-ray.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _module_has_marker(items, module, marker: str) -> bool:
    return any(
        item.get_closest_marker(marker) for item in items if getattr(item, "module", None) is module
    )


# Scheduling under xdist (--dist loadfile: a test file is one unit of work, so a module fixture is
# built once). Two rules keep the two CI cores busy to the end instead of one idling:
# - every Ray test file is ONE unit: the host-wide lock above serialises them anyway, and as
#   separate units the second worker would sit blocked on the lock while the first holds it;
# - long units start first (the files with a ``slow`` or ``ray`` test, in collection order), so
#   the many short files fill the gaps at the end rather than a long one starting last.
RAY_UNIT = "ray-cluster-tests"


def pytest_collection_modifyitems(session, config, items):
    modules = {getattr(item, "module", None) for item in items}
    long_first = {m for m in modules - {None} if _module_has_marker(items, m, "slow")}
    long_first |= {m for m in modules - {None} if _is_ray_file(m.__file__)}
    items.sort(key=lambda item: getattr(item, "module", None) not in long_first)


def pytest_xdist_make_scheduler(config, log):
    from xdist.scheduler import LoadFileScheduling

    class RayTestsTogether(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return RAY_UNIT if _is_ray_file(nodeid) else super()._split_scope(nodeid)

    if config.getoption("dist") != "loadfile":
        return None
    # xdist otherwise orders the units by their number of tests, which starts the files of many
    # quick tests first and leaves a long file of few tests (the Atari smoke run) for the end.
    config.option.loadscopereorder = False
    return RayTestsTogether(config, log)
