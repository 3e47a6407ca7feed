"""Ĵ, eq. 2 of Garcia, Nota & Thomas (2020), on top of the exact trajectory terms.

    Ĵ(π, O, H) = 1/|H| Σ_{h∈H} ( λ2 Pr(H = h | π, O)                       "prob_term"
                                 − Σ_{t=1..|h|} E[T_t | H_t = h_t] / |h|    "termination_term"
                                 + λ1 g(h, O_O) )                            "kl_term"

Pr(h) excludes d_0 and the transition factors P (constants with respect to π and the options, see
:mod:`opt_suite.objective.recursions`). Because Pr(h) underflows for long trajectories,
``likelihood="log_prob_per_step"`` uses log Pr(h) / |h| (the mean log-likelihood of an action) in
its place; with it λ2 weighs a quantity of order 1 per step, as the termination term is.

g is the diversity regulariser of Section 3.1: the KL divergence between the action distributions of
the *learned* options (never the primitives), summed over the states s_0..s_{|h|−1} of h and
averaged over the m(m−1) ordered pairs of distinct options — equivalently, over unordered pairs of
the symmetrised KL. The paper writes 2/(m(m−1)) Σ_{o,o'}, which leaves the order of KL's arguments
open; the ordered-pair mean is the order-free reading. g = 0 with fewer than two learned options.

Example (the option learner's loss; everything per batch, tables from networks)::

    parts = jhat(pi, mu, beta, lengths, option_action_probs=mu_all, lambda1=1e-3, lambda2=100.0)
    loss = -parts.total
    # parts.prob_term / parts.termination_term: the two curves of the paper's Figure 1a.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Literal, NamedTuple

import tensorflow as tf

from opt_suite.objective.recursions import (
    DEFAULT_CHUNK,
    check_chunk,
    checked_tables,
    forward_terms_body,
    smallest_normal,
)
from opt_suite.objective.xla import xla_with_gradient

__all__ = [
    "JhatConfig",
    "JhatParts",
    "jhat",
    "jhat_and_gradients",
    "jhat_body",
    "option_diversity",
    "weighted_total",
    "LIKELIHOODS",
]

LIKELIHOODS = ("prob", "log_prob_per_step")


@dataclasses.dataclass(frozen=True)
class JhatConfig:
    """Hyper-parameters of Ĵ.

    Attributes:
      lambda1: weight of the diversity (KL) term (paper: 0.001 on four rooms, 0–0.1 on Atari).
      lambda2: weight of the likelihood term (paper: 100 on four rooms, 5000 on Atari).
      likelihood: ``"prob"`` (Pr(h), eq. 2 as written) or ``"log_prob_per_step"`` (log Pr(h) / |h|,
        for long trajectories where Pr(h) underflows to 0 and its gradient vanishes).
      chunk: steps unrolled per iteration of the recursion's loop (speed only).
      jit_compile: run the recursion as an XLA cluster: an order of magnitude faster on CPU, at the
        price of one compilation (seconds) per new batch shape — pad to few shapes.
    """

    lambda1: float = 0.0
    lambda2: float = 1.0
    likelihood: Literal["prob", "log_prob_per_step"] = "prob"
    chunk: int = DEFAULT_CHUNK
    jit_compile: bool = True

    def __post_init__(self) -> None:
        if self.likelihood not in LIKELIHOODS:
            raise ValueError(
                f"JhatConfig.likelihood: expected one of {LIKELIHOODS}, got {self.likelihood!r}"
            )
        check_chunk(self.chunk)


class JhatParts(NamedTuple):
    """Ĵ and its parts. Scalars are means over the batch; per-trajectory values are [B].

    ``total = lambda2 * prob_term - termination_term + lambda1 * kl_term``.

    Attributes:
      total: Ĵ (scalar) — maximise it.
      prob_term: mean of Pr(h) (or of log Pr(h) / |h|), unweighted.
      termination_term: mean of Σ_t Pr(T_t = 1 | h_t) / |h| (Theorem 1), unweighted.
      kl_term: mean of g(h, O_O), unweighted (0 without option_action_probs or with m < 2).
      log_prob: [B] log Pr(h) (d_0 and P excluded).
      expected_terminations: [B] Σ_{t=1..|h|} Pr(T_t = 1 | h_t).
      diversity: [B] g(h, O_O).
    """

    total: tf.Tensor
    prob_term: tf.Tensor
    termination_term: tf.Tensor
    kl_term: tf.Tensor
    log_prob: tf.Tensor
    expected_terminations: tf.Tensor
    diversity: tf.Tensor


def weighted_total(prob_term, termination_term, kl_term, lambda1, lambda2):
    """Ĵ of eq. 2 from its unweighted parts: λ2·prob_term − termination_term + λ1·kl_term.

    The one place eq. 2's weights are applied, to numbers or tensors alike: :func:`jhat`, the
    trainer of ``offline_options`` (with tensor weights, so that one trace serves every λ1, λ2),
    and :mod:`.scoring`'s π fit and option-set scores.
    """
    return lambda2 * prob_term - termination_term + lambda1 * kl_term


def option_diversity(option_action_probs, lengths) -> tf.Tensor:
    """g(h, O_O): ordered-pair mean KL between learned options, summed over s_0..s_{T−1}.

    Args:
      option_action_probs: [B, L, m, A], the m learned options' action distributions at each state.
      lengths: [B] ints, T_b.

    Returns:
      [B] tensor; zeros when m < 2.
    """
    probs = tf.convert_to_tensor(option_action_probs)
    if probs.shape.rank is not None and probs.shape.rank != 4:
        raise ValueError(
            f"option_action_probs: expected a [B, L, m, A] tensor, got shape {probs.shape}"
        )
    num = tf.cast(tf.shape(probs)[2], probs.dtype)
    log_probs = tf.math.log(tf.maximum(probs, smallest_normal(probs.dtype)))
    # Σ_{o≠o'} KL(p_o || p_o') = m Σ_o Σ_a p_o log p_o − Σ_a (Σ_o p_o)(Σ_o' log p_o'):
    # O(mA) work, not O(m²A).
    self_term = num * tf.reduce_sum(probs * log_probs, axis=[2, 3])
    cross_term = tf.reduce_sum(
        tf.reduce_sum(probs, axis=2) * tf.reduce_sum(log_probs, axis=2), axis=-1
    )
    acts = tf.range(tf.shape(probs)[1])[None, :] < tf.cast(lengths, tf.int32)[:, None]
    per_state = tf.where(acts, self_term - cross_term, tf.zeros_like(self_term))
    pairs = num * (num - 1.0)
    return tf.where(pairs > 0, tf.reduce_sum(per_state, axis=1) / tf.maximum(pairs, 1.0), 0.0 * num)


def jhat(
    pi,
    mu,
    beta,
    lengths,
    option_action_probs=None,
    lambda1: float = 0.0,
    lambda2: float = 1.0,
    likelihood: Literal["prob", "log_prob_per_step"] = "prob",
    chunk: int = DEFAULT_CHUNK,
    jit_compile: bool = True,
) -> JhatParts:
    """Ĵ of eq. 2 over a padded batch of trajectories, with its parts.

    Args:
      pi: [B, L, n] π(s_t, o) over all n options, primitives included (the layout of
        :func:`opt_suite.objective.trajectory_terms`).
      mu: [B, L, n] μ_o(s_t, a_t).
      beta: [B, L, n] β_o(s_t).
      lengths: [B] ints, the number of actions of each trajectory.
      option_action_probs: optional [B, L, m, A] action distributions of the m learned options at
        each state, for the KL term; None means no KL term.
      lambda1: weight of the KL term (see :class:`JhatConfig`).
      lambda2: weight of the likelihood term.
      likelihood: ``"prob"`` or ``"log_prob_per_step"``.
      chunk: steps unrolled per loop iteration (speed only).
      jit_compile: run Ĵ as XLA clusters (value and gradient).

    Returns:
      :class:`JhatParts`. Differentiable with respect to every table.
    """
    config = JhatConfig(float(lambda1), float(lambda2), likelihood, chunk, bool(jit_compile))
    tensors, static = _inputs(pi, mu, beta, lengths, option_action_probs, config)
    if config.jit_compile:
        return xla_with_gradient(jhat_body, **static)(*tensors)
    return jhat_body(*tensors, **static)


def jhat_and_gradients(
    pi, mu, beta, lengths, option_action_probs=None, config: JhatConfig | None = None
) -> tuple[JhatParts, list[tf.Tensor | None]]:
    """Ĵ and dĴ/d(pi, mu, beta, option_action_probs) in one pass (one XLA cluster).

    For a training step, where the gradient is certainly wanted: one XLA launch instead of two, and
    the forward recursion is not run twice. Chain the table gradients into the networks with
    ``tape.gradient(tables, variables, output_gradients=...)``.

    Args:
      pi: [B, L, n] π(s_t, o); see :func:`jhat` for the layout of every argument.
      mu: [B, L, n] μ_o(s_t, a_t).
      beta: [B, L, n] β_o(s_t).
      lengths: [B] ints.
      option_action_probs: optional [B, L, m, A], for the KL term.
      config: Ĵ's hyper-parameters.

    Returns:
      (parts, [dĴ/dpi, dĴ/dmu, dĴ/dbeta, dĴ/doption_action_probs or None]). The tables are not
      watched by any tape here: the returned parts carry no gradient.
    """
    config = config or JhatConfig()
    tensors, static = _inputs(pi, mu, beta, lengths, option_action_probs, config)
    tensors = [tf.stop_gradient(x) for x in tensors]
    if config.jit_compile:
        parts, grads = _compiled_value_and_gradients(**static)(*tensors)
    else:
        parts, grads = _jhat_and_gradients(*tensors, **static)
    return parts, [*grads[:3], None if option_action_probs is None else grads[3]]


@functools.cache
def _compiled_value_and_gradients(**static):
    return tf.function(
        functools.partial(_jhat_and_gradients, **static),
        jit_compile=True,
        reduce_retracing=True,
        autograph=False,
    )


def _jhat_and_gradients(*tensors, **static):
    floats = [x for x in tensors if x.dtype.is_floating]
    with tf.GradientTape() as tape:
        tape.watch(floats)
        parts = jhat_body(*tensors, **static)
    return parts, tape.gradient(parts.total, floats)


def _inputs(pi, mu, beta, lengths, option_action_probs, config: JhatConfig):
    """Checked tensors and the static arguments of :func:`jhat_body`."""
    pi, mu, beta, lengths = checked_tables(pi, mu, beta, lengths)
    if option_action_probs is None:
        # No KL term: m = 0 learned options. Always passing a tensor keeps one signature (and one
        # trace) for the compiled functions whether or not the caller has a KL term.
        probs = tf.zeros(tf.concat([tf.shape(pi)[:2], [0, 1]], axis=0), dtype=pi.dtype)
    else:
        probs = tf.convert_to_tensor(option_action_probs, dtype=pi.dtype)
        if probs.shape.rank is not None and probs.shape.rank != 4:
            raise ValueError(
                f"option_action_probs: expected a [B, L, m, A] tensor, got shape {probs.shape}"
            )
    tensors = [pi, mu, beta, lengths, probs]
    static = dataclasses.asdict(config)
    del static["jit_compile"]
    return tensors, static


def jhat_body(pi, mu, beta, lengths, probs, *, lambda1, lambda2, likelihood, chunk) -> JhatParts:
    """Ĵ from checked tensors (a pure function: the XLA cluster's body)."""
    log_prob, expected = forward_terms_body(pi, mu, beta, lengths, chunk=chunk)
    steps = tf.cast(tf.maximum(lengths, 1), pi.dtype)
    like = tf.exp(log_prob) if likelihood == "prob" else log_prob / steps
    diversity = option_diversity(probs, lengths)
    prob_term = tf.reduce_mean(like)
    termination_term = tf.reduce_mean(expected / steps)
    kl_term = tf.reduce_mean(diversity)
    total = weighted_total(prob_term, termination_term, kl_term, lambda1, lambda2)
    return JhatParts(total, prob_term, termination_term, kl_term, log_prob, expected, diversity)
