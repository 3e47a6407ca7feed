"""LOVE's objective on a latent-skill sequence model of the demonstrations, in TensorFlow.

The model (the option model of DDO, Fox et al. 2017, which LOVE's and VTA's segmentations share):
K skills, each an option network with a policy pi_k(a | s) and a termination beta_k(s), and a
skill prior eta(k | s). A demonstration starts a skill z_0 ~ eta(. | s_0) (boundary m_0 = 1); on
reaching s_t the running skill ends with probability beta_{z_{t-1}}(s_t) (m_t = 1) and a new one
is drawn from eta(. | s_t), else z_t = z_{t-1}; every action is a_t ~ pi_{z_t}(. | s_t).

The posterior q(m, z | s, a) over boundaries and skills is computed exactly by the
forward-backward recursions (log space, T steps of K), instead of LOVE's amortised variational
posterior (a Gumbel-softmax encoder): exact on tabular and small image demonstrations, and
identical in the terms of the objective (Jiang et al. 2022, Sec. 4; the authors' ``hssm_rl.py``):

- reconstruction  R = E_q[-sum_t log pi_{z_t}(a_t | s_t)]            (``rec_coeff``);
- KL              K = E_q[log q(m, z) - log p(m, z | s)] = -log p(a | s) - R   (``kl_coeff``);
- description length  L = H(p_bar) * E_q[number of boundaries] (``coding_len_coeff``), where
  p_bar(k) is the marginal probability of skill k at a boundary over the demonstrations: the
  expected number of bits to write the skill sequence with an entropy code, the authors'
  ``encoding_cost`` (entropy of the skill marginal times the number of reads).

R and K are summed over a demonstration's steps and averaged over demonstrations. With
``kl_coeff = 1`` and no description length, R + K = -log p(a | s): DDO's maximum likelihood
(Fox et al. fit it by EM; its gradient is EM's). VTA weighs K by 0.05; LOVE drops it and pays for
the skills written instead (0.005, the README's).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import tensorflow as tf

from baselines.love.params import LoveParams
from baselines.segmentation import Segmentation, SegmentInputs
from baselines.skill_networks import (
    demo_tensors,
    fit,
    init_skills,
    skill_outputs,
    unstack_skills,
)
from baselines.xla import xla_pays
from opt_suite.option_networks.networks import forward, init_policy

__all__ = ["CURVES", "love_loss", "love_terms", "read_segments", "train_love"]

EPS = 1e-12


def _logaddexp(a: tf.Tensor, b: tf.Tensor) -> tf.Tensor:
    return tf.reduce_logsumexp(tf.stack([a, b]), axis=0)


def love_terms(weights: Any, batch: dict[str, tf.Tensor]) -> dict[str, tf.Tensor]:
    """The objective's terms and the posterior, by forward-backward over the K skills.

    Args:
      weights: ``skills`` (stacked option networks) and ``prior`` (eta, a ``pi`` head over K).
      batch: ``states`` int32 [U], ``coords`` (their inputs, optional), ``positions`` int32
        [B, T+1], ``actions`` int32 [B, T], ``lengths`` int32 [B].

    Returns:
      Per demonstration [B]: ``reconstruction``, ``kl``, ``log_likelihood``; the posterior
      time-major: ``gamma`` [T, B, K] (q(z_t = k)), ``boundary`` [T, B, K] (q(m_t = 1, z_t = k)).
    """
    coords = batch.get("coords")
    mu_logits, beta_logits = skill_outputs(weights["skills"], batch["states"], coords)
    log_eta_u = tf.nn.log_softmax(forward(weights["prior"], batch["states"], coords)["pi"])
    here = tf.transpose(batch["positions"][:, :-1])  # [T, B] position of s_t
    actions = tf.transpose(batch["actions"])  # [T, B]
    steps = tf.shape(actions)[0]
    valid = tf.range(steps)[:, None] < batch["lengths"][None, :]  # [T, B]
    log_pi = tf.nn.log_softmax(tf.gather(mu_logits, here), axis=-1)  # [T, B, K, A]
    num_actions = tf.shape(log_pi)[-1]
    emit = tf.reduce_sum(log_pi * tf.one_hot(actions, num_actions)[:, :, None, :], axis=-1)
    emit = tf.where(valid[..., None], emit, 0.0)  # padding emits with probability 1
    beta = tf.gather(beta_logits, here)  # [T, B, K]
    log_end, log_stay = tf.math.log_sigmoid(beta), tf.math.log_sigmoid(-beta)
    log_eta = tf.gather(log_eta_u, here)
    # Forward: alpha_t(k) = p(a_0..a_t, z_t = k); padding steps carry alpha unchanged.
    alpha_0 = log_eta[0] + emit[0]

    def forward_step(alpha: tf.Tensor, x: Any) -> tf.Tensor:
        e, end, stay, eta, ok = x
        switch = tf.reduce_logsumexp(alpha + end, axis=-1, keepdims=True)
        return tf.where(ok[:, None], e + _logaddexp(alpha + stay, switch + eta), alpha)

    later = (emit[1:], log_end[1:], log_stay[1:], log_eta[1:], valid[1:])
    alpha = tf.concat([alpha_0[None], tf.scan(forward_step, later, initializer=alpha_0)], 0)
    log_z = tf.reduce_logsumexp(alpha[-1], axis=-1)  # [B] log p(a | s)

    # Backward: b_t(k) = p(a_{t+1}.. | z_t = k); b_{T-1} = 1.
    def backward_step(b_next: tf.Tensor, x: Any) -> tf.Tensor:
        e, end, stay, eta, ok = x
        switch = end + tf.reduce_logsumexp(eta + e + b_next, axis=-1, keepdims=True)
        return tf.where(ok[:, None], _logaddexp(stay + e + b_next, switch), b_next)

    last = tf.zeros_like(alpha_0)
    back = tf.concat([tf.scan(backward_step, later, initializer=last, reverse=True), [last]], 0)
    gamma = tf.exp(alpha + back - log_z[None, :, None]) * tf.cast(valid, tf.float32)[..., None]
    switch_mass = tf.reduce_logsumexp(alpha[:-1] + log_end[1:], axis=-1, keepdims=True)
    log_boundary = switch_mass + log_eta[1:] + emit[1:] + back[1:] - log_z[None, :, None]
    boundary = tf.concat(
        [gamma[:1], tf.exp(log_boundary) * tf.cast(valid[1:], tf.float32)[..., None]], 0
    )
    reconstruction = -tf.reduce_sum(gamma * emit, axis=[0, 2])
    return {
        "reconstruction": reconstruction,
        "kl": -log_z - reconstruction,
        "log_likelihood": log_z,
        "gamma": gamma,
        "boundary": boundary,
    }


def description_length(boundary: tf.Tensor) -> tf.Tensor:
    """H(p_bar) * E[boundaries per demonstration] from q(m_t = 1, z_t = k) [T, B, K] (nats)."""
    per_skill = tf.reduce_sum(boundary, axis=[0, 1])
    p_bar = per_skill / (tf.reduce_sum(per_skill) + EPS)
    entropy = -tf.reduce_sum(p_bar * tf.math.log(p_bar + EPS))
    return entropy * tf.reduce_sum(per_skill) / tf.cast(tf.shape(boundary)[1], tf.float32)


#: The loss parts recorded per Adam step (the method's curves).
CURVES = ("loss", "reconstruction", "kl", "description_length", "nll", "boundaries")


def love_loss(weights: Any, batch: dict[str, tf.Tensor], _noise: Any = ()) -> dict[str, tf.Tensor]:
    """LOVE's loss and its parts (:data:`CURVES`); the weights ride in ``batch["coefficients"]``.

    The coefficients (rec, kl, coding) are a tensor, not Python floats, so that every variant
    shares one trace of the fit (:func:`baselines.skill_networks.fit`).
    """
    rec_coeff, kl_coeff, coding_coeff = tf.unstack(batch["coefficients"])
    terms = love_terms(weights, batch)
    reconstruction = tf.reduce_mean(terms["reconstruction"])
    kl = tf.reduce_mean(terms["kl"])
    length = description_length(terms["boundary"])
    return {
        "loss": rec_coeff * reconstruction + kl_coeff * kl + coding_coeff * length,
        "reconstruction": reconstruction,
        "kl": kl,
        "description_length": length,
        "nll": -tf.reduce_mean(terms["log_likelihood"]),
        "boundaries": tf.reduce_mean(tf.reduce_sum(terms["boundary"], axis=[0, 2])),
    }


@tf.function
def _posterior(weights: Any, batch: dict[str, tf.Tensor]) -> tuple[tf.Tensor, tf.Tensor]:
    terms = love_terms(weights, batch)
    return terms["gamma"], terms["boundary"]


def train_love(
    inputs: SegmentInputs, params: LoveParams, seed: np.random.SeedSequence
) -> Segmentation:
    """Fit the skills by full-batch Adam on the variant's objective; read the segments.

    Boundaries are the steps t >= 1 where the posterior's q(m_t = 1) > 1/2; a segment's skill is
    the one of largest total q(z_t = k) over its steps (:func:`read_segments`).

    Raises:
      FloatingPointError: the loss or a gradient turns non-finite (naming the iteration).
    """
    skill_seed, prior_seed = seed.spawn(2)
    initial = {
        "skills": init_skills(
            inputs.features, params.hidden_sizes, inputs.num_actions, params.num_skills, skill_seed
        ),
        "prior": init_policy(inputs.features, params.hidden_sizes, params.num_skills, prior_seed),
    }
    coding, kl = params.coefficients
    batch = {
        **_at_least_two_steps(demo_tensors(inputs)),
        "coefficients": tf.constant([params.rec_coeff, kl, coding], tf.float32),
    }
    weights, curves = fit(
        "love",
        initial,
        love_loss,
        CURVES,
        batch,
        params.iterations,
        params.learning_rate,
        global_clipnorm=params.grad_clip,
        jit_compile=xla_pays(inputs.frames),
    )
    gamma, boundary = (t.numpy() for t in _posterior(weights, batch))
    boundaries, sequences = read_segments(gamma, boundary, inputs.demos.lengths)
    used = sorted({k for seq in sequences for k in seq})
    skills = unstack_skills(weights["skills"], range(params.num_skills))
    return Segmentation(skills, used, boundaries, sequences, curves)


def _at_least_two_steps(batch: dict[str, tf.Tensor]) -> dict[str, tf.Tensor]:
    """The batch padded to T >= 2 steps (a padding step carries alpha and b unchanged).

    Why: with T = 1 (every demonstration one action) the scans run zero steps, which XLA cannot
    compile (it slices a first element from the empty sequence while compiling the loop body).
    """
    pad = 2 - int(batch["actions"].shape[1])
    if pad <= 0:
        return batch
    return {
        **batch,
        "positions": tf.pad(batch["positions"], [[0, 0], [0, pad]]),
        "actions": tf.pad(batch["actions"], [[0, 0], [0, pad]]),
    }


def read_segments(
    gamma: np.ndarray, boundary: np.ndarray, lengths: np.ndarray
) -> tuple[list[list[int]], list[list[int]]]:
    """(boundaries, skill per segment) per demonstration from the posterior [T, B, K] arrays.

    A boundary at t >= 1 where q(m_t = 1) > 1/2; a segment's skill is the one of largest total
    q(z_t = k) over its steps.
    """
    boundaries, sequences = [], []
    for d, length in enumerate(np.asarray(lengths, int)):
        cuts = [t for t in range(1, length) if boundary[t, d].sum() > 0.5]
        edges = [0, *cuts, length]
        spans = zip(edges[:-1], edges[1:], strict=True)
        sequences.append([int(np.argmax(gamma[a:b, d].sum(axis=0))) for a, b in spans])
        boundaries.append(cuts)
    return boundaries, sequences
