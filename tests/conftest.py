"""Imported before every test module: opt_suite first, so that its CPU-kernel pins
(opt_suite/_numerics.py) are in the environment before anything imports NumPy or TensorFlow, and
numbers computed in the test process are those of the worker processes and of every machine."""

import opt_suite  # noqa: F401
