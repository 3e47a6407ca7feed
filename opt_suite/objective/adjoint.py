"""The reverse (adjoint) pass of the scaled forward recursion, written out by hand.

Ĵ is trained by gradient ascent, so its gradient is the hot path. Autodiff through a ``while_loop``
stacks every intermediate of every step and replays them; the recursion's adjoint needs only the
filtered p_{t−1} of each step (everything else is recomputed in a few fused operations), so writing
it out is both leaner and clearer. For one step (vectors over options, per trajectory):

    forward:  e = p·s,  u = p ⊙ c + e r,  z = Σu,  p' = u / z;   L += log z,  F += e
    reverse:  ū = (p̄' − (p̄'·p') + ḡ_L) / z,   ē = ū·r + ḡ_F,
              c̄ = ū ⊙ p,  r̄ = e ū,  s̄ = ē p,  p̄ = ū ⊙ c + ē s

with ḡ_L, ḡ_F the upstream gradients of L = Σ log z (log Pr(h)) and F = Σ e (Theorem 1's sum).
``tests/test_objective_gradients.py`` checks it against finite differences and against autodiff of
:func:`opt_suite.objective.trajectory_terms` (which does not use it).
"""

from __future__ import annotations

import functools

import tensorflow as tf

from opt_suite.objective.forward import StepMatrices, scaled_forward, smallest_normal

__all__ = ["recursion_with_adjoint"]


@functools.cache
def recursion_with_adjoint(chunk: int):
    """``(cont, stop, restart, p0) -> (log_norm, filtered, p_end)`` with the hand-written gradient.

    Args:
      chunk: K, steps unrolled per loop iteration (the steps tensors are [C, K, B, n]).

    Returns:
      A function of the step weights (time-major [C, K, B, n]) and p_0 [B, n]; see
      ``forward.scaled_forward`` for the outputs.
    """

    @tf.custom_gradient
    def recursion(cont, stop, restart, p0):
        steps = StepMatrices(cont, stop, restart)
        log_norm, filtered, p_end, before = scaled_forward(steps, p0, chunk, keep=True)

        def grad(g_log_norm, g_filtered, g_p_end):
            g_log_norm = _or_zeros(g_log_norm, log_norm)[:, None]
            g_filtered = _or_zeros(g_filtered, filtered)[:, None]
            g_p = _or_zeros(g_p_end, p_end)
            tiny = smallest_normal(p0.dtype)
            num_chunks = tf.shape(cont)[0]
            grads = tuple(tf.TensorArray(p0.dtype, size=num_chunks) for _ in range(3))

            def body(i, g_p, *grads):
                j = num_chunks - 1 - i
                c_j, s_j, r_j, p_j = cont[j], stop[j], restart[j], before[j]
                out = ([None] * chunk, [None] * chunk, [None] * chunk)
                for k in reversed(range(chunk)):
                    p, c, s, r = p_j[k], c_j[k], s_j[k], r_j[k]
                    e = tf.reduce_sum(p * s, axis=-1, keepdims=True)
                    u = p * c + e * r
                    z = tf.maximum(tf.reduce_sum(u, axis=-1, keepdims=True), tiny)
                    g_next = g_p - tf.reduce_sum(g_p * u, axis=-1, keepdims=True) / z
                    g_u = (g_next + g_log_norm) / z
                    g_e = tf.reduce_sum(g_u * r, axis=-1, keepdims=True) + g_filtered
                    out[0][k], out[1][k], out[2][k] = g_u * p, g_e * p, g_u * e
                    g_p = g_u * c + g_e * s
                grads = tuple(g.write(j, tf.stack(o)) for g, o in zip(grads, out, strict=True))
                return (i + 1, g_p, *grads)

            _, g_p0, *grads = tf.while_loop(
                lambda i, *_: i < num_chunks,
                body,
                (tf.constant(0), g_p, *grads),
                maximum_iterations=num_chunks,
            )
            return (*(g.stack() for g in grads), g_p0)

        return (log_norm, filtered, p_end), grad

    return recursion


def _or_zeros(upstream, like):
    return tf.zeros_like(like) if upstream is None else upstream
