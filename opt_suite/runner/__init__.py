"""Running a spec's protocol: cells, seeds, backends, the scheduler and progress.

* :mod:`~opt_suite.runner.plan` -- the cells and the content hashes that name them;
* :mod:`~opt_suite.runner.seeding` -- one ``SeedSequence`` per (seed index, purpose);
* :mod:`~opt_suite.runner.cells` -- computing one cell in a worker;
* :mod:`~opt_suite.runner.backends` -- in-process, local process pool, Ray;
* :mod:`~opt_suite.runner.claims` -- file locks that let two runners share one directory;
* :mod:`~opt_suite.runner.scheduler` -- the loop: dependencies, failures, storing;
* :mod:`~opt_suite.runner.progress` -- the live progress line;
* :mod:`~opt_suite.runner.protocol` -- all of it for one spec (what ``opt-suite run`` calls).
"""

from opt_suite.runner.backends import BackendError, ClusterLost
from opt_suite.runner.protocol import RunResult, resolve_components, run_protocol
from opt_suite.runner.scheduler import Summary

__all__ = [
    "BackendError",
    "ClusterLost",
    "RunResult",
    "Summary",
    "resolve_components",
    "run_protocol",
]
