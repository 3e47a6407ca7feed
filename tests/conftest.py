"""Imported before every test module: opt_suite first, so that its CPU-kernel pins
(opt_suite/_numerics.py) are in the environment before anything imports NumPy or TensorFlow, and
numbers computed in the test process are those of the worker processes and of every machine.

For the same reason the test process runs TensorFlow as the runner's workers do
(``runner.cells.worker_environment``): one inter-op thread and deterministic kernels. With
independent ops run concurrently, two fits of one seed in one process could differ in their last
bit (measured on LOVE's same-seed contract: 1e-7 apart, 0 with one inter-op thread), while the
runner's cells never run that way. The BLAS and intra-op thread counts are left to the machine:
the tests of the workers' own environment check that the runner sets them.
"""

import os

os.environ.setdefault("TF_NUM_INTEROP_THREADS", "1")
os.environ.setdefault("TF_DETERMINISTIC_OPS", "1")

import opt_suite  # noqa: E402,F401
