"""Which option explains which step of a demonstration: per-step posteriors of the hidden process.

Ĵ (eq. 2) and its exact terms (:mod:`opt_suite.objective.recursions`) are sums over time. To see
*why* an option set scores what it scores we want them per step: given the whole demonstration h,

    Pr(O_t = o | h)     the option executing at s_t             (t = 0..T−1)
    Pr(T_t = 1 | h)     the running option terminates at s_t    (t = 1..T)

Both come from the same forward–backward pass that gives ``posterior_terminations`` (Theorem 2's
recursion, then the backward vector b_t = M_{t+1} ⋯ M_{T−1} 1): with the filtered p_t ∝ α_t,

    Pr(O_t = o | h) = p_t(o) b_t(o) / Σ_o' p_t(o') b_t(o'),

and Pr(T_t = 1 | h) is the per-step ratio whose sum over t is ``posterior_terminations`` (so the
two agree by construction; ``tests/test_objective_posterior.py`` checks both against enumerating
every option path). Pure TensorFlow over the (π, μ, β) tables; this module only adds the per-step
read-out to the recursions' own loops (``scaled_forward`` with its history, ``scaled_backward``).
"""

from __future__ import annotations

from typing import NamedTuple

import tensorflow as tf

from opt_suite.objective.forward import scaled_forward, smallest_normal
from opt_suite.objective.recursions import (
    DEFAULT_CHUNK,
    check_chunk,
    checked_tables,
    scaled_backward,
    step_matrices,
)

__all__ = ["StepPosteriors", "step_posteriors"]


class StepPosteriors(NamedTuple):
    """Per-step posteriors given the whole trajectory.

    Attributes:
      option: [B, L, n], option[b, t, o] = Pr(O_t = o | h) for t < T_b; rows at t >= T_b are 0.
      termination: [B, L], termination[b, t] = Pr(T_t = 1 | h) for 1 <= t <= T_b; 0 elsewhere
        (t = 0 has no running option to terminate). Its row sums are ``posterior_terminations``.
    """

    option: tf.Tensor
    termination: tf.Tensor


def _time_major_to_batch(x: tf.Tensor, length: tf.Tensor) -> tf.Tensor:
    """[C, K, B, n] (step j = c·K + k) -> [B, length, n], steps past ``length`` dropped."""
    shape = tf.shape(x)
    flat = tf.reshape(x, tf.concat([[shape[0] * shape[1]], shape[2:]], axis=0))
    return tf.transpose(flat[:length], [1, 0, 2])


def _step_posteriors(pi, mu, beta, lengths, chunk):
    steps, p0, _ = step_matrices(pi, mu, beta, lengths, chunk)
    tiny = smallest_normal(pi.dtype)
    num_steps = tf.shape(pi)[1] - 1
    _, _, p_end, before = scaled_forward(steps, p0, chunk, keep=True)
    after = scaled_backward(steps, chunk)
    # before[j] = p_j (the filtered vector step j+1 starts from); after[j] = b_{j+1}.
    filtered = _time_major_to_batch(before, num_steps)  # p_0 .. p_{L−2}
    backward_next = _time_major_to_batch(after, num_steps)  # b_1 .. b_{L−1}
    cont, stop, restart = (_time_major_to_batch(x, num_steps) for x in steps)  # step 1 .. L−1
    # b_0 = M_1 b_1 (only its direction matters): the backward loop does not keep it.
    b1 = backward_next[:, 0]
    b0 = b1 * cont[:, 0] + stop[:, 0] * tf.reduce_sum(restart[:, 0] * b1, -1, keepdims=True)
    backward = tf.concat([b0[:, None], backward_next[:, :-1]], axis=1)  # b_0 .. b_{L−2}
    joint = filtered * backward
    option = joint / tf.maximum(tf.reduce_sum(joint, -1, keepdims=True), tiny)
    # Pr(T_t = 1 | h), 1 <= t <= L−1: as in recursions._trajectory_terms, step by step.
    terminate = tf.reduce_sum(filtered * stop, -1) * tf.reduce_sum(restart * backward_next, -1)
    carry_on = tf.reduce_sum(filtered * cont * backward_next, -1)
    ratio = terminate / tf.maximum(terminate + carry_on, tiny)
    t = tf.range(tf.shape(pi)[1])[None, :]
    # The last state s_T: nothing follows, so the filtered p_{T−1} is already the posterior.
    beta_last = tf.gather(beta, lengths, axis=1, batch_dims=1)
    last = tf.where(lengths > 0, tf.reduce_sum(p_end * beta_last, -1), 0.0)
    ratio = tf.concat([tf.zeros_like(ratio[:, :1]), ratio], axis=1)  # index = t
    termination = tf.where(
        t == lengths[:, None], last[:, None], tf.where(t < lengths[:, None], ratio, 0.0)
    )
    # The history holds p_0 .. p_{L−2}; T − 1 <= L − 2, so one zero row pads it to L.
    acts = (t < lengths[:, None])[..., None]
    option = tf.where(acts, tf.pad(option, [[0, 0], [0, 1], [0, 0]]), 0.0)
    return StepPosteriors(option, termination)


def step_posteriors(
    pi, mu, beta, lengths, chunk: int = DEFAULT_CHUNK, jit_compile: bool = False
) -> StepPosteriors:
    """Pr(O_t = o | h) and Pr(T_t = 1 | h) at every step of every trajectory.

    Args:
      pi: [B, L, n] π(s_t, o) (the layout of :func:`opt_suite.objective.trajectory_terms`).
      mu: [B, L, n] μ_o(s_t, a_t).
      beta: [B, L, n] β_o(s_t).
      lengths: [B] ints, T_b actions (T_b + 1 <= L).
      chunk: steps unrolled per loop iteration (speed only).
      jit_compile: run as one XLA cluster (compiles once per shape).

    Returns:
      :class:`StepPosteriors` in the dtype of ``pi``.
    """
    pi, mu, beta, lengths = checked_tables(pi, mu, beta, lengths)
    check_chunk(chunk)
    if pi.shape[1] is not None and pi.shape[1] < 2:
        raise ValueError(f"pi: expected L >= 2 states per trajectory, got shape {pi.shape}")
    if jit_compile:
        return _compiled(chunk)(pi, mu, beta, lengths)
    return _step_posteriors(pi, mu, beta, lengths, chunk)


_CACHE: dict[int, object] = {}


def _compiled(chunk: int):
    if chunk not in _CACHE:
        _CACHE[chunk] = tf.function(
            lambda pi, mu, beta, lengths: _step_posteriors(pi, mu, beta, lengths, chunk),
            jit_compile=True,
            reduce_retracing=True,
            autograph=False,
        )
    return _CACHE[chunk]
