"""The scaled forward recursion of Theorems 1-2, shared by the objective and its adjoint.

Its own module so that :mod:`.recursions` (which builds the step weights) and :mod:`.adjoint`
(which differentiates this recursion by hand) both import it, and neither imports the other's
internals at call time.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import tensorflow as tf

__all__ = ["StepMatrices", "scaled_forward", "smallest_normal"]


class StepMatrices(NamedTuple):
    """M_t in O(n) form for t = 1..C·K (identity past the end), time-major [C, K, B, n]."""

    cont: tf.Tensor  # c_t = (1 − β_t) μ_t
    stop: tf.Tensor  # β_t
    restart: tf.Tensor  # r_t = π_t μ_t


def smallest_normal(dtype: tf.DType) -> float:
    """The smallest normal number of ``dtype``: guards divisions for impossible trajectories."""
    return float(np.finfo(dtype.as_numpy_dtype).tiny)


def scaled_forward(steps: StepMatrices, p0: tf.Tensor, chunk: int, keep: bool):
    """The scaled forward recursion, K unrolled steps per loop iteration.

    Returns:
      (log_norm [B], filtered [B], p_end [B, n], history): Σ_t log z_t, Σ_{t<T} Pr(T_t = 1 | h_t),
      p_{T−1}, and when ``keep`` the p_{t−1} each step started from, time-major [C, K, B, n].
    """
    tiny = smallest_normal(p0.dtype)
    num_chunks = tf.shape(steps.cont)[0]
    zero = tf.zeros_like(p0[:, 0])

    def body(i, p, log_norm, filtered, *history):
        cont, stop, restart = steps.cont[i], steps.stop[i], steps.restart[i]
        before, chunk_log = [], []
        for k in range(chunk):
            before.append(p)
            terminate = tf.reduce_sum(p * stop[k], axis=-1, keepdims=True)  # Theorem 1
            p = p * cont[k] + terminate * restart[k]
            z = tf.maximum(tf.reduce_sum(p, axis=-1, keepdims=True), tiny)
            p = p / z
            chunk_log.append(tf.math.log(z))
            filtered += terminate[:, 0]
        log_norm += tf.add_n(chunk_log)[:, 0]
        # The history is a loop variable only when kept (an unused one would break autodiff).
        history = tuple(h.write(i, tf.stack(before)) for h in history)
        return (i + 1, p, log_norm, filtered, *history)

    history = (tf.TensorArray(p0.dtype, size=num_chunks),) if keep else ()
    _, p, log_norm, filtered, *history = tf.while_loop(
        lambda i, *_: i < num_chunks,
        body,
        (tf.constant(0), p0, zero, zero, *history),
        maximum_iterations=num_chunks,
    )
    return log_norm, filtered, p, history[0].stack() if keep else None
