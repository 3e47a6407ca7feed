"""Importing TensorFlow without its C++ start-up chatter.

TensorFlow 2.21 prints absl INFO/ERROR lines (oneDNN notice, "could not find cuda drivers",
"failed call to cuInit") straight to file descriptor 2 on import and on first device use, ignoring
``TF_CPP_MIN_LOG_LEVEL``. On a CPU machine they are noise in the middle of a progress bar, so the
first import happens with fd 2 captured; if the import fails, what was captured is replayed so that
nothing useful is lost.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from types import ModuleType

import opt_suite  # noqa: F401  (sets TF_USE_LEGACY_KERAS before TensorFlow is imported)

__all__ = ["quiet_stderr", "tensorflow"]


def tensorflow() -> ModuleType:
    """The ``tensorflow`` module, imported quietly the first time."""
    if "tensorflow" in sys.modules:
        return sys.modules["tensorflow"]
    with quiet_stderr():
        import tensorflow as tf

        tf.constant(0.0) + 1.0  # initialises the devices: the cuInit line comes here
    return tf


@contextlib.contextmanager
def quiet_stderr() -> Iterator[None]:
    """File descriptor 2 captured for the block; replayed if the block raises.

    For C++ libraries that print to fd 2 directly (TensorFlow's start-up lines, TFLite's "Created
    TensorFlow Lite XNNPACK delegate" for every interpreter), which ``sys.stderr`` never sees.
    """
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        try:
            yield
        except BaseException:
            os.dup2(saved, 2)
            captured.seek(0)
            sys.stderr.write(captured.read().decode(errors="replace"))
            raise
        finally:
            os.dup2(saved, 2)
            os.close(saved)
