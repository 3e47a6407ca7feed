"""One fix to tf-agents 0.18 under NumPy 2, applied when :mod:`opt_suite.agents` loads tf-agents.

``tensor_spec.sample_bounded_spec`` samples a uint8 spec as int32 but adds 1 to the spec's *uint8*
maximum first; under NumPy 2's promotion rules 255 + 1 wraps to 0 and TensorFlow refuses the range
("Need minval < maxval, got 0 >= 0"). Networks sample their input spec to build their variables,
so every network on 84x84 uint8 frames hit it. The fix samples such specs with int32 bounds and
casts back — what tf-agents means to do.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from opt_suite._tf import tensorflow

tf = tensorflow()

from tf_agents.specs import tensor_spec  # noqa: E402

__all__ = ["apply"]

_original = tensor_spec.sample_bounded_spec


def _sample_bounded_spec(spec: Any, seed: Any = None, outer_dims: Any = None) -> Any:
    if tf.as_dtype(spec.dtype) != tf.uint8:
        return _original(spec, seed=seed, outer_dims=outer_dims)
    wide = tensor_spec.BoundedTensorSpec(
        spec.shape,
        tf.int32,
        np.asarray(spec.minimum, dtype=np.int32),
        np.asarray(spec.maximum, dtype=np.int32),
    )
    return tf.cast(_original(wide, seed=seed, outer_dims=outer_dims), tf.uint8)


def apply() -> None:
    """Install the fix (idempotent)."""
    tensor_spec.sample_bounded_spec = _sample_bounded_spec
