"""Theorems 1 and 2 of Garcia, Nota & Thomas (2020): the exact per-trajectory terms of Ĵ.

Pure TensorFlow maths over option tables; networks produce the tables, this module never sees them.

## The generative process (the one the paper's *proofs* use)
At s_0 the policy over options picks O_0 ~ π(s_0, ·) and the option acts, a_0 ~ μ_{O_0}(s_0, ·). At every
t ≥ 1 the running option O_{t−1} terminates on reaching s_t with probability β_{O_{t−1}}(s_t) (T_t = 1);
then O_t ~ π(s_t, ·), otherwise O_t = O_{t−1}; then a_t ~ μ_{O_t}(s_t, ·). Primitive actions are options
with β ≡ 1 and a one-hot μ. (The displayed statement of f in Theorem 2 shifts the time index of β
relative to its proof, and Theorem 1's displayed recursion drops a normaliser; the code follows the
process, and ``tests/test_objective_brute_force.py`` checks it against enumeration of every option path.)

## The recursion
With the transition factors P(s_t, a_t, s_{t+1}) and d_0(s_0) left out (they do not depend on π or
the options), the forward vector α_t(o) = Pr(O_t = o, a_0..a_t | s_0..s_t) obeys

    α_0 = π_0 ⊙ μ_0,        α_t = α_{t−1} M_t,
    M_t[o, o'] = ((1 − β_t(o)) δ_{oo'} + β_t(o) π_t(o')) μ_t(o')            (Theorem 2, by rows)

so Pr(h) = Σ_o α_{T−1}(o). Theorem 1's filtering probability is Pr(T_t = 1 | h_t) = p_{t−1} · β_t with
p_t = α_t / Σ α_t. Applying M_t to a row vector costs O(n): x M_t = x ⊙ c_t + (x · β_t) r_t with the
"continue" weights c_t = (1 − β_t) ⊙ μ_t and the "restart" weights r_t = π_t ⊙ μ_t.

## How it is computed (fast and stable)
A plain scan over t has depth T, and on a CPU each of its ~10 tiny ops per step costs more in
dispatch than in arithmetic. Here time is cut into C chunks of K steps (K static, C dynamic):

1. all chunks at once, K unrolled steps: each chunk's transfer matrix Q_c = M_{cK+1} ⋯ M_{cK+K},
   built row-vector-wise in O(n²) per step from the identity;
2. across chunks, a Hillis–Steele prefix product (log₂ C levels of batched n×n matmuls) gives the
   direction of α at every chunk start;
3. all chunks at once again, K unrolled steps of the ordinary scaled forward recursion from those
   starts: the per-step normalisers give log Pr(h) = log Σα_0 + Σ_t log Σ(p_{t−1} M_t), and the
   normalised p_t give Theorem 1's terms.

Depth is 2K + log₂ C instead of T. Every intermediate is max- or sum-normalised (the scale of a product
of M's is arbitrary for what is computed from it, so normalisers carry no gradient), hence no underflow
for T = 10,000 in float32. The backward pass for the whole-trajectory posterior mirrors 2–3 in reverse.

Steps past a trajectory's end are replaced by the identity (c = 1, β = 0, r = 0) *before* any
arithmetic, so padding garbage never reaches a value or a gradient.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import tensorflow as tf

__all__ = ["TrajectoryTerms", "trajectory_terms", "forward_terms", "DEFAULT_CHUNK"]

#: Steps per chunk (static): 16 balances unrolled graph size against the cross-chunk scan's depth.
DEFAULT_CHUNK = 16


class TrajectoryTerms(NamedTuple):
    """Per-trajectory exact terms, each a [B] tensor.

    Attributes:
      log_prob: log Pr(a_0..a_{T−1} | s_0..s_T, π, O) (d_0 and P factors excluded), Theorem 2.
      expected_terminations: Σ_{t=1..T} Pr(T_t = 1 | H_t = h_t), Theorem 1 (filtering; includes t = T).
      posterior_terminations: Σ_{t=1..T} Pr(T_t = 1 | H = h) (forward–backward smoothing); this is
        what a Monte Carlo estimate conditioned on reproducing h measures.
    """

    log_prob: tf.Tensor
    expected_terminations: tf.Tensor
    posterior_terminations: tf.Tensor


class _Steps(NamedTuple):
    """The O(n) form of M_t for t = 1..C·K (identity past the end), each [B, C, K, n]."""

    cont: tf.Tensor  # c_t = (1 − β_t) μ_t
    beta: tf.Tensor  # β_t
    restart: tf.Tensor  # r_t = π_t μ_t


def _as_tables(pi, mu, beta, lengths):
    """Converts and checks the inputs; returns (pi, mu, beta, lengths int32)."""
    pi = tf.convert_to_tensor(pi)
    if not pi.dtype.is_floating:
        pi = tf.cast(pi, tf.float32)
    mu = tf.convert_to_tensor(mu, dtype=pi.dtype)
    beta = tf.convert_to_tensor(beta, dtype=pi.dtype)
    for name, x in (("pi", pi), ("mu", mu), ("beta", beta)):
        if x.shape.rank is not None and x.shape.rank != 3:
            raise ValueError(f"{name}: expected a [B, L, n] tensor, got shape {x.shape}")
    if not (pi.shape.is_compatible_with(mu.shape) and pi.shape.is_compatible_with(beta.shape)):
        raise ValueError(
            f"pi, mu, beta: expected equal [B, L, n] shapes, got {pi.shape}, {mu.shape}, {beta.shape}"
        )
    lengths = tf.cast(tf.convert_to_tensor(lengths), tf.int32)
    if lengths.shape.rank is not None and lengths.shape.rank != 1:
        raise ValueError(
            f"lengths: expected a [B] vector of trajectory lengths, got {lengths.shape}"
        )
    return pi, mu, beta, lengths


def _steps(pi, mu, beta, lengths, chunk: int):
    """Builds the masked per-step weights, padded to C·K steps, and α_0.

    Returns:
      (steps, alpha0): a :class:`_Steps` and α_0 [B, n] (a one-hot for empty trajectories, whose
      probability is 1).
    """
    dtype = pi.dtype
    batch, length, n = tf.shape(pi)[0], tf.shape(pi)[1], tf.shape(pi)[2]
    t = tf.range(length)[None, :]
    acts = t < lengths[:, None]  # [B, L]: an action is taken at s_t
    # M_t exists for 1 <= t <= T-1; everything else becomes the identity step.
    live = (acts & (t >= 1))[..., None]
    zeros = tf.zeros_like(pi)
    cont = tf.where(live, (1.0 - beta) * mu, tf.ones_like(pi))[:, 1:]
    stop = tf.where(live, beta, zeros)[:, 1:]
    restart = tf.where(live, pi * mu, zeros)[:, 1:]

    num_steps = length - 1
    num_chunks = tf.maximum((num_steps + chunk - 1) // chunk, 1)
    pad = num_chunks * chunk - num_steps
    paddings = [[0, 0], [0, pad], [0, 0]]
    shape = tf.stack([batch, num_chunks, chunk, n])
    steps = _Steps(
        tf.reshape(tf.pad(cont, paddings, constant_values=1.0), shape),
        tf.reshape(tf.pad(stop, paddings), shape),
        tf.reshape(tf.pad(restart, paddings), shape),
    )
    has_action = (lengths > 0)[:, None]
    alpha0 = tf.where(has_action, pi[:, 0] * mu[:, 0], tf.one_hot(0, n, dtype=dtype)[None, :])
    return steps, alpha0


def _normalise(x: tf.Tensor, axis) -> tf.Tensor:
    """x divided by its maximum over ``axis``; the scale carries no gradient (it cancels exactly)."""
    scale = tf.reduce_max(x, axis=axis, keepdims=True)
    return x / tf.stop_gradient(tf.maximum(scale, _tiny(x.dtype)))


def _tiny(dtype: tf.DType) -> float:
    """The smallest normal number of ``dtype``: guards divisions for impossible trajectories."""
    return float(np.finfo(dtype.as_numpy_dtype).tiny)


def _chunk_matrices(steps: _Steps, chunk: int) -> tf.Tensor:
    """Q_c = M_{cK+1} ⋯ M_{cK+K} for every chunk, max-normalised: [B, C, n, n]."""
    cont, stop, restart = (tf.unstack(x, axis=2) for x in steps)
    # First step from the identity: I·M = diag(c) + β rᵀ.
    q = tf.linalg.diag(cont[0]) + stop[0][..., :, None] * restart[0][..., None, :]
    q = _normalise(q, [-2, -1])
    for k in range(1, chunk):
        # Rows are row vectors x: x M = x ⊙ c + (x · β) r.
        through = tf.linalg.matvec(q, stop[k])[..., :, None]
        q = _normalise(q * cont[k][..., None, :] + through * restart[k][..., None, :], [-2, -1])
    return q


def _prefix_products(x: tf.Tensor) -> tf.Tensor:
    """Y_k = X_0 X_1 ⋯ X_k along axis 1 (Hillis–Steele, log₂ C levels), max-normalised each level."""
    size = tf.shape(x)[1]
    eye = tf.eye(tf.shape(x)[-1], batch_shape=tf.shape(x)[:2], dtype=x.dtype)

    def level(d, y):
        earlier = tf.concat([eye[:, :d], y[:, : size - d]], axis=1)
        return d * 2, _normalise(tf.linalg.matmul(earlier, y), [-2, -1])

    _, y = tf.while_loop(lambda d, y: d < size, level, (tf.constant(1), x))
    return y


def _chunk_starts(alpha0: tf.Tensor, q: tf.Tensor) -> tf.Tensor:
    """The direction of α at each chunk's start, α_0 Q_0 ⋯ Q_{c−1}: [B, C, n], summing to 1."""
    first = tf.ones_like(q[:, :1]) * alpha0[:, None, None, :]  # rank one: every row is α_0
    prefix = _prefix_products(tf.concat([first, q[:, :-1]], axis=1))
    rows = prefix[..., 0, :]
    return rows / tf.reduce_sum(rows, axis=-1, keepdims=True)


def _chunk_ends(q: tf.Tensor) -> tf.Tensor:
    """The direction of b at each chunk's end, Q_{c+1} ⋯ Q_{C−1} 1: [B, C, n], max 1."""
    ones = tf.ones_like(q[:, :1])
    reversed_t = tf.reverse(tf.linalg.matrix_transpose(q[:, 1:]), axis=[1])
    prefix = _prefix_products(tf.concat([ones, reversed_t], axis=1))
    return tf.reverse(prefix[..., 0, :], axis=[1])


def _filter(steps: _Steps, starts: tf.Tensor, chunk: int):
    """The scaled forward recursion inside every chunk at once.

    Returns:
      (log_norm [B], filtered [B, C, K], p_before [B, C, K, n], p_end [B, n]): the sum of the log
      normalisers, Pr(T_t = 1 | h_t) for each step, the filtering distribution p_{t−1} each step is
      applied to, and the final p (that is p_{T−1}, identity steps keeping it).
    """
    cont, stop, restart = (tf.unstack(x, axis=2) for x in steps)
    tiny = _tiny(starts.dtype)
    x = starts
    log_norm, filtered, before = [], [], []
    for k in range(chunk):
        before.append(x)
        terminate = tf.reduce_sum(x * stop[k], axis=-1)  # Pr(T_t = 1 | h_t), Theorem 1
        x = x * cont[k] + terminate[..., None] * restart[k]
        norm = tf.maximum(tf.reduce_sum(x, axis=-1), tiny)  # Pr(a_t | h_t, a_0..a_{t−1})
        x = x / norm[..., None]
        log_norm.append(norm)
        filtered.append(terminate)
    log_norm = tf.reduce_sum(tf.math.log(tf.stack(log_norm, axis=-1)), axis=[1, 2])
    return log_norm, tf.stack(filtered, axis=-1), tf.stack(before, axis=2), x[:, -1]


def _backward(steps: _Steps, ends: tf.Tensor, chunk: int) -> tf.Tensor:
    """b_t (direction) after each step inside every chunk: [B, C, K, n], b_{t} = M_{t+1} b_{t+1}."""
    cont, stop, restart = (tf.unstack(x, axis=2) for x in steps)
    y = ends
    after = [None] * chunk
    for k in reversed(range(chunk)):
        after[k] = y
        y = _normalise(y * cont[k] + stop[k] * tf.reduce_sum(restart[k] * y, -1, keepdims=True), -1)
    return tf.stack(after, axis=2)


def forward_terms(pi, mu, beta, lengths, chunk: int = DEFAULT_CHUNK):
    """log Pr(h) and Theorem 1's Σ_t Pr(T_t = 1 | h_t): the two terms Ĵ needs, without the posterior.

    Args:
      pi, mu, beta, lengths: as in :func:`trajectory_terms`.
      chunk: steps per chunk (static).

    Returns:
      (log_prob [B], expected_terminations [B]).
    """
    pi, mu, beta, lengths = _as_tables(pi, mu, beta, lengths)
    log_prob, expected, _, _, _ = _forward(pi, mu, beta, lengths, chunk)
    return log_prob, expected


def _forward(pi, mu, beta, lengths, chunk):
    steps, alpha0 = _steps(pi, mu, beta, lengths, chunk)
    q = _chunk_matrices(steps, chunk)
    alpha0_sum = tf.reduce_sum(alpha0, axis=-1)
    tiny = _tiny(pi.dtype)
    starts = _chunk_starts(alpha0 / tf.maximum(alpha0_sum, tiny)[:, None], q)
    log_norm, filtered, before, p_end = _filter(steps, starts, chunk)
    log_prob = tf.math.log(alpha0_sum) + log_norm
    # t = T: the option running at s_{T−1} may terminate at the last state s_T.
    beta_last = tf.gather(beta, lengths, axis=1, batch_dims=1)
    last = tf.where(lengths > 0, tf.reduce_sum(p_end * beta_last, axis=-1), tf.zeros_like(log_prob))
    expected = tf.reduce_sum(filtered, axis=[1, 2]) + last
    return log_prob, expected, (steps, q), before, last


def trajectory_terms(pi, mu, beta, lengths, chunk: int = DEFAULT_CHUNK) -> TrajectoryTerms:
    """Exact log-likelihood, filtering and posterior expected terminations of each trajectory.

    Args:
      pi: [B, L, n], pi[b, t, o] = π(s_t, o).
      mu: [B, L, n], mu[b, t, o] = μ_o(s_t, a_t), the probability option o takes the demonstrated
        action (ignored at and after the last state).
      beta: [B, L, n], beta[b, t, o] = β_o(s_t) (ignored at t = 0 and after the last state).
      lengths: [B] ints, T_b = number of actions of trajectory b (T_b + 1 <= L states).
      chunk: steps per chunk (static; any value gives the same numbers).

    Returns:
      :class:`TrajectoryTerms` of [B] tensors in the dtype of ``pi`` (float32 or float64).
    """
    pi, mu, beta, lengths = _as_tables(pi, mu, beta, lengths)
    log_prob, expected, (steps, q), before, last = _forward(pi, mu, beta, lengths, chunk)
    after = _backward(steps, _chunk_ends(q), chunk)
    # Pr(T_t = 1 | h) for 1 <= t <= T−1: paths through "terminate then restart" at step t over all
    # paths through step t, both from the filtered p_{t−1} and the backward b_t (scales cancel).
    terminate = tf.reduce_sum(before * steps.beta, axis=-1) * tf.reduce_sum(
        steps.restart * after, axis=-1
    )
    carry_on = tf.reduce_sum(before * steps.cont * after, axis=-1)
    total = tf.maximum(terminate + carry_on, _tiny(pi.dtype))
    posterior = tf.reduce_sum(terminate / total, axis=[1, 2]) + last
    return TrajectoryTerms(log_prob, expected, posterior)
