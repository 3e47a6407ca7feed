"""Theorems 1 and 2 of Garcia, Nota & Thomas (2020): the exact per-trajectory terms of Ĵ.

Pure TensorFlow maths over option tables; networks produce the tables, this module never sees them.

## The generative process (the one the paper's *proofs* use)
At s_0 the policy over options picks O_0 ~ π(s_0, ·) and the option acts, a_0 ~ μ_{O_0}(s_0, ·).
At every t ≥ 1 the running option O_{t−1} terminates on reaching s_t with probability
β_{O_{t−1}}(s_t) (T_t = 1); then O_t ~ π(s_t, ·), otherwise O_t = O_{t−1}; then
a_t ~ μ_{O_t}(s_t, ·). Primitive actions are options with β ≡ 1 and a one-hot μ. (The displayed
statement of f in Theorem 2 shifts β's time index relative to its proof, and Theorem 1's displayed
recursion drops a normaliser; the code follows the process, and
``tests/test_objective_brute_force.py`` checks it against an enumeration of every option path.)

## The recursion
With d_0(s_0) and the transition factors P(s_t, a_t, s_{t+1}) left out (they do not depend on π or
the options), the forward vector α_t(o) = Pr(O_t = o, a_0..a_t | s_0..s_t) obeys (Theorem 2)

    α_0 = π_0 ⊙ μ_0,    α_t = α_{t−1} M_t,
    M_t[o, o'] = ((1 − β_t(o)) δ_{oo'} + β_t(o) π_t(o')) μ_t(o')

and Pr(h) = Σ_o α_{T−1}(o). M_t is diagonal plus rank one, so a row vector costs O(n) to advance:
x M_t = x ⊙ c_t + (x · β_t) r_t, with "continue" weights c_t = (1 − β_t) ⊙ μ_t and "restart"
weights r_t = π_t ⊙ μ_t. The recursion is *scaled*: with p_{t−1} = α_{t−1} / Σα_{t−1},

    Pr(T_t = 1 | h_t) = p_{t−1} · β_t                                   (Theorem 1, the filter)
    Pr(a_t | h_t, a_{<t}) = Σ_o (p_{t−1} M_t)(o) =: z_t,   p_t = p_{t−1} M_t / z_t,

so log Pr(h) = log Σα_0 + Σ_t log z_t never underflows (T = 10,000 in float32 is fine). The
whole-trajectory posterior Pr(T_t = 1 | h) adds the backward vector b_t = M_{t+1} ⋯ M_{T−1} 1
(kept max-normalised: every ratio below is scale-free).

## How it is computed
Time is cut into chunks of K steps: a ``tf.while_loop`` over chunks whose body unrolls K steps.
Under XLA (``jit_compile=True``) a chunk becomes a few fused kernels, so a step costs a few hundred
nanoseconds on a CPU instead of ~10 op dispatches; that, not parallelism, is what makes Ĵ cheap.
Time-parallel alternatives were measured on the reference workload (B = 64, T = 200, n = 8, 2-core
CPU) and rejected: a Hillis–Steele scan of the n×n matrices M_t (O(n³) work per step) took twice as
long as a plain ``tf.scan`` in graph mode, and a chunked scan (transfer matrices per chunk, O(n²)
per step) under XLA took ~8× as long as this loop. Ĵ's gradient uses the hand-written reverse pass
of :mod:`opt_suite.objective.adjoint` (half the time of autodiff through the loop without XLA).

Steps past a trajectory's end become the identity (c = 1, β = 0, r = 0) *before* any arithmetic, so
padding garbage never reaches a value or a gradient.
"""

from __future__ import annotations

from typing import NamedTuple

import tensorflow as tf

from opt_suite.objective.adjoint import recursion_with_adjoint
from opt_suite.objective.forward import StepMatrices, scaled_forward, smallest_normal
from opt_suite.objective.xla import xla_with_gradient

__all__ = [
    "DEFAULT_CHUNK",
    "TrajectoryTerms",
    "checked_tables",
    "forward_terms",
    "forward_terms_body",
    "scaled_backward",
    "step_matrices",
    "trajectory_terms",
]

#: Steps unrolled per loop iteration (static). Larger chunks compile slower and run no faster.
DEFAULT_CHUNK = 2


class TrajectoryTerms(NamedTuple):
    """Per-trajectory exact terms, each a [B] tensor.

    Attributes:
      log_prob: log Pr(a_0..a_{T−1} | s_0..s_T, π, O), d_0 and P excluded (Theorem 2).
      expected_terminations: Σ_{t=1..T} Pr(T_t = 1 | H_t = h_t) (Theorem 1, filtering; t = T too).
      posterior_terminations: Σ_{t=1..T} Pr(T_t = 1 | H = h) (forward–backward smoothing): what a
        Monte Carlo estimate conditioned on reproducing h measures.
    """

    log_prob: tf.Tensor
    expected_terminations: tf.Tensor
    posterior_terminations: tf.Tensor


def checked_tables(pi, mu, beta, lengths):
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
            f"pi, mu, beta: expected equal [B, L, n] shapes, got {pi.shape}, {mu.shape}, "
            f"{beta.shape}"
        )
    lengths = tf.cast(tf.convert_to_tensor(lengths), tf.int32)
    if lengths.shape.rank is not None and lengths.shape.rank != 1:
        raise ValueError(
            f"lengths: expected a [B] vector of trajectory lengths, got {lengths.shape}"
        )
    if tf.executing_eagerly():  # values known: check them (inside a graph the caller pads right)
        values, states = lengths.numpy(), int(pi.shape[1])
        bad = values.size and (values.min() < 0 or values.max() >= states)
        if len(values) != pi.shape[0] or bad:
            raise ValueError(
                f"lengths: expected {pi.shape[0]} values in [0, {states - 1}] (T_b + 1 <= L = "
                f"{states} states), got {values.tolist()}"
            )
    return pi, mu, beta, lengths


def step_matrices(pi, mu, beta, lengths, chunk: int):
    """Masked per-step weights, padded to C·K steps, and p_0 with log Σα_0.

    Returns:
      (steps, p0 [B, n], log_alpha0 [B]); an empty trajectory gets p_0 one-hot and probability 1.
    """
    batch, length, n = tf.shape(pi)[0], tf.shape(pi)[1], tf.shape(pi)[2]
    t = tf.range(length)[None, :]
    acts = t < lengths[:, None]  # an action is taken at s_t
    live = (acts & (t >= 1))[..., None]  # M_t exists for 1 <= t <= T−1
    zeros = tf.zeros_like(pi)
    weights = (
        tf.where(live, (1.0 - beta) * mu, tf.ones_like(pi)),
        tf.where(live, beta, zeros),
        tf.where(live, pi * mu, zeros),
    )
    num_steps = length - 1
    num_chunks = tf.maximum((num_steps + chunk - 1) // chunk, 1)
    pad = num_chunks * chunk - num_steps
    shape = tf.stack([batch, num_chunks, chunk, n])

    def time_major(x, fill):
        x = tf.pad(x[:, 1:], [[0, 0], [0, pad], [0, 0]], constant_values=fill)
        return tf.transpose(tf.reshape(x, shape), [1, 2, 0, 3])

    fills = (1.0, 0.0, 0.0)
    steps = StepMatrices(*(time_major(x, fill) for x, fill in zip(weights, fills, strict=True)))
    has_action = (lengths > 0)[:, None]
    alpha0 = tf.where(has_action, pi[:, 0] * mu[:, 0], tf.one_hot(0, n, dtype=pi.dtype)[None, :])
    norm0 = tf.reduce_sum(alpha0, axis=-1)
    p0 = alpha0 / tf.maximum(norm0, smallest_normal(pi.dtype))[:, None]
    return steps, p0, tf.math.log(norm0)


def scaled_backward(steps: StepMatrices, chunk: int) -> tf.Tensor:
    """b_t after each step (max-normalised) [C, K, B, n]: b_{t−1} = M_t b_t, b_{T−1} = 1."""
    num_chunks = tf.shape(steps.cont)[0]
    after = tf.TensorArray(steps.cont.dtype, size=num_chunks)
    tiny = smallest_normal(steps.cont.dtype)

    def body(i, b, after):
        j = num_chunks - 1 - i
        cont, stop, restart = steps.cont[j], steps.stop[j], steps.restart[j]
        kept = [None] * chunk
        for k in reversed(range(chunk)):
            kept[k] = b
            b = b * cont[k] + stop[k] * tf.reduce_sum(restart[k] * b, axis=-1, keepdims=True)
            b = b / tf.maximum(tf.reduce_max(b, axis=-1, keepdims=True), tiny)
        return i + 1, b, after.write(j, tf.stack(kept))

    ones = tf.ones_like(steps.cont[0, 0])
    _, _, after = tf.while_loop(
        lambda i, *_: i < num_chunks,
        body,
        (tf.constant(0), ones, after),
        maximum_iterations=num_chunks,
    )
    return after.stack()


def _last_termination(beta, lengths, p_end):
    """Pr(T_T = 1 | h): the option running at s_{T−1} may terminate at the last state s_T."""
    beta_last = tf.gather(beta, lengths, axis=1, batch_dims=1)
    value = tf.reduce_sum(p_end * beta_last, axis=-1)
    return tf.where(lengths > 0, value, tf.zeros_like(value))


def forward_terms_body(pi, mu, beta, lengths, chunk):
    """:func:`forward_terms` on checked tensors (a pure function: the body of an XLA cluster)."""
    steps, p0, log_alpha0 = step_matrices(pi, mu, beta, lengths, chunk)
    # Ĵ's hot path: the same forward loop, with the hand-written reverse pass of adjoint.py.
    log_norm, filtered, p_end = recursion_with_adjoint(chunk)(*steps, p0)
    return log_alpha0 + log_norm, filtered + _last_termination(beta, lengths, p_end)


def _trajectory_terms(pi, mu, beta, lengths, chunk):
    steps, p0, log_alpha0 = step_matrices(pi, mu, beta, lengths, chunk)
    log_norm, filtered, p_end, before = scaled_forward(steps, p0, chunk, keep=True)
    last = _last_termination(beta, lengths, p_end)
    after = scaled_backward(steps, chunk)
    # Pr(T_t = 1 | h) for 1 <= t <= T−1: the paths that terminate and restart at step t, over all
    # paths through step t, from the filtered p_{t−1} and the backward b_t (both scales cancel).
    terminate = tf.reduce_sum(before * steps.stop, -1) * tf.reduce_sum(steps.restart * after, -1)
    carry_on = tf.reduce_sum(before * steps.cont * after, -1)
    ratio = terminate / tf.maximum(terminate + carry_on, smallest_normal(pi.dtype))
    posterior = tf.reduce_sum(ratio, axis=[0, 1]) + last
    return TrajectoryTerms(log_alpha0 + log_norm, filtered + last, posterior)


def _run(fn, pi, mu, beta, lengths, chunk: int, jit_compile: bool):
    pi, mu, beta, lengths = checked_tables(pi, mu, beta, lengths)
    check_chunk(chunk)
    if jit_compile:
        return xla_with_gradient(fn, chunk=chunk)(pi, mu, beta, lengths)
    return fn(pi, mu, beta, lengths, chunk=chunk)


def check_chunk(chunk) -> None:
    """Raises ValueError unless ``chunk`` is an int >= 1."""
    if not (isinstance(chunk, int) and chunk >= 1):
        raise ValueError(f"chunk: expected an int >= 1, got {chunk!r}")


def forward_terms(pi, mu, beta, lengths, chunk: int = DEFAULT_CHUNK, jit_compile: bool = False):
    """Theorems 1 and 2 without the posterior: (log_prob [B], expected_terminations [B]).

    This is all Ĵ needs; see :func:`trajectory_terms` for the arguments.
    """
    return _run(forward_terms_body, pi, mu, beta, lengths, chunk, jit_compile)


def trajectory_terms(
    pi, mu, beta, lengths, chunk: int = DEFAULT_CHUNK, jit_compile: bool = False
) -> TrajectoryTerms:
    """Exact log-likelihood, filtering and posterior expected terminations of each trajectory.

    Args:
      pi: [B, L, n], pi[b, t, o] = π(s_t, o) (ignored at and after the last state).
      mu: [B, L, n], mu[b, t, o] = μ_o(s_t, a_t), the probability that option o takes the
        demonstrated action (ignored at and after the last state).
      beta: [B, L, n], beta[b, t, o] = β_o(s_t) (ignored at t = 0 and after the last state).
      lengths: [B] ints, T_b = number of actions of trajectory b (T_b + 1 <= L states).
      chunk: steps unrolled per loop iteration (speed only; every value gives the same numbers).
      jit_compile: run the recursion as an XLA cluster (much faster; compiles once per shape).

    Returns:
      :class:`TrajectoryTerms` of [B] tensors in the dtype of ``pi`` (float32 or float64).
    """
    return _run(_trajectory_terms, pi, mu, beta, lengths, chunk, jit_compile)
