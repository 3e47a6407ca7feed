"""CompILE's model and ELBO in TensorFlow (Kipf et al., ICML 2019, Sec. 3), on state-action inputs.

A demonstration (s_0, a_0, ..., s_{T-1}, a_{T-1}, s_T) is read as T+1 elements x_t = (s_t, a_t),
the last with an end-of-sequence action; each is embedded (the state through an option-network
trunk, the action by a lookup) and a masked LSTM encodes the sequence. Segments are inferred one
after another (Sec. 3.2):

1. boundary b_i: a categorical over positions 1..T (position 0 and padding masked out), sampled
   with Gumbel-softmax at temperature ``temp_b``; the last segment's boundary is the end (T);
2. latent z_i: read out from the encoding at position b_i - 1 (the segment's last element),
   a concrete (Gumbel-softmax) categorical over ``latent_dim`` values;
3. the LSTM is re-run with the mask of positions at or after b_i (the next segment's elements).

Segment i covers the positions between b_{i-1} and b_i (soft masks from cumulative sums of the
boundary samples). The loss is the negative ELBO of Eq. 4, as the authors' example computes it:
the segments' action negative log-likelihood, plus ``beta_z`` times KL(q(z_i) || uniform), plus
``beta_b`` times N times KL(q(b_1) || the Poisson(``prior_rate``) length prior).

The decoder of latent k is option network k (softmax ``mu`` head); a soft sample z decodes with the
z-weighted sum of the K decoders' logits (exactly decoder k for a one-hot z). Each option's ``beta``
head is fitted to the inferred boundaries (not in the paper, whose decoders have no termination):
on the states of a segment decoded by k, beta_k = 0 inside the segment and 1 at the state where it
ends; segmentation and latents enter this loss as constants.

Determinism: every Gumbel draw comes from a numpy generator seeded by the run's seed and is fed in
as a tensor; weights are drawn as the option networks draw theirs.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import tensorflow as tf

from baselines.compile.params import CompileParams
from baselines.segmentation import Segmentation, SegmentInputs
from baselines.skill_networks import (
    demo_tensors,
    fit,
    init_skills,
    padded,
    skill_outputs,
    unstack_skills,
)
from baselines.xla import xla_pays
from opt_suite.option_networks.networks import forward, glorot_uniform, init_weights

__all__ = ["train_compile", "poisson_log_prior"]

NEG_INF = -1e30
EPS = 1e-17


def poisson_log_prior(length: int, rate: float) -> np.ndarray:
    """Log p(position j), j = 0..length-1: Poisson(rate) at j + 1, normalised over the positions.

    The authors' ``poisson_categorical_log_prior``: the unnormalised log-pmf
    (j+1) log rate - rate - log((j+1)!), then a log-softmax over the positions.
    """
    from math import lgamma, log

    values = np.arange(1, length + 1, dtype=np.float64)
    unnormalised = values * log(rate) - rate - np.array([lgamma(v + 1.0) for v in values])
    return unnormalised - np.logaddexp.reduce(unnormalised)


def _dense(rng: np.random.Generator, fan_in: int, fan_out: int) -> tuple[np.ndarray, np.ndarray]:
    return glorot_uniform(rng, fan_in, fan_out), np.zeros(fan_out, np.float32)


def init_compile(
    inputs: SegmentInputs, params: CompileParams, seed: np.random.SeedSequence
) -> dict[str, dict[str, np.ndarray]]:
    """Initial weights: embedding, LSTM, boundary and latent heads, one option per latent."""
    embed_seed, core_seed, option_seed = seed.spawn(3)
    h = params.hidden_dim
    rng = np.random.default_rng(core_seed)
    core: dict[str, np.ndarray] = {
        "action_embed": glorot_uniform(rng, inputs.num_actions + 1, h),  # + end of sequence
        "lstm_w": glorot_uniform(rng, h, 4 * h),
        "lstm_u": glorot_uniform(rng, h, 4 * h),
        "lstm_b": np.zeros(4 * h, np.float32),
    }
    for name, out in (("head_b_1", h), ("head_b_2", 1), ("head_z_1", h)):
        core[f"{name}_w"], core[f"{name}_b"] = _dense(rng, h, out)
    core["head_z_2_w"], core["head_z_2_b"] = _dense(rng, h, params.latent_dim)
    embed = init_weights(inputs.features, params.hidden_sizes, {"embed": h}, embed_seed)
    options = init_skills(
        inputs.features, params.hidden_sizes, inputs.num_actions, params.latent_dim, option_seed
    )
    return {"core": core, "embed": embed, "options": options}


def _lstm(core: Any, x: tf.Tensor, mask: tf.Tensor) -> tf.Tensor:
    """The authors' masked LSTM: h, c multiplied by the mask after every step. x [T, B, H]."""
    batch, width = tf.shape(x)[1], core["lstm_u"].shape[0]
    zero = tf.zeros([batch, width])

    def step(carry: Any, inputs: Any) -> Any:
        h, c = carry
        x_t, m_t = inputs
        gates = tf.matmul(x_t, core["lstm_w"]) + tf.matmul(h, core["lstm_u"]) + core["lstm_b"]
        i, f, g, o = tf.split(gates, 4, axis=-1)
        c = tf.sigmoid(f) * c + tf.sigmoid(i) * tf.tanh(g)
        h = tf.sigmoid(o) * tf.tanh(c)
        return (h * m_t[:, None], c * m_t[:, None])

    hs, _ = tf.scan(step, (x, mask), initializer=(zero, zero))
    return hs  # [T, B, H]


def _gumbel_softmax(logits: tf.Tensor, noise: tf.Tensor, temp: float, hard: bool) -> tf.Tensor:
    if hard:
        return tf.one_hot(tf.argmax(logits, axis=-1), tf.shape(logits)[-1])
    return tf.nn.softmax((logits + noise) / temp, axis=-1)


def _log_cumsum(x: tf.Tensor) -> tf.Tensor:
    return tf.math.log(tf.cumsum(x, axis=1) + EPS)


def compile_loss(
    weights: Any,
    batch: dict[str, tf.Tensor],
    noise_b: tf.Tensor,
    noise_z: tf.Tensor,
    params: CompileParams,
    hard: bool,
) -> tuple[dict[str, tf.Tensor], dict[str, Any]]:
    """The negative ELBO and its parts, plus the segmentation (``hard``: argmax, no noise).

    Args:
      weights: from :func:`init_compile` (variables or arrays).
      batch: ``states`` int32 [U], ``coords`` (inputs of the U states, or absent), ``positions``
        int32 [B, T+1], ``actions`` int32 [B, T+1] (end of sequence at T and padding: A),
        ``lengths`` int32 [B] (T), ``log_prior`` float32 [T+1] (:func:`poisson_log_prior`).
      noise_b: Gumbel noise of the boundaries [N, B, T+1].
      noise_z: Gumbel noise of the latents [N, B, K].
      params: the method's params (segments, latents, temperatures, the loss weights).
      hard: argmax boundaries and latents (reading the segmentation) instead of samples.
    """
    core = weights["core"]
    positions, actions, lengths = batch["positions"], batch["actions"], batch["lengths"]
    width = tf.shape(positions)[1]  # T+1 of the longest demonstration
    coords = batch.get("coords")
    state_embed = forward(weights["embed"], batch["states"], coords)["embed"]  # [U, H]
    x = tf.nn.relu(
        tf.gather(state_embed, positions) + tf.gather(core["action_embed"], actions)
    )  # [B, T+1, H]
    x_time = tf.transpose(x, [1, 0, 2])
    index = tf.range(width)[None, :]
    inside = tf.cast(index <= lengths[:, None], tf.float32)  # positions 0..T
    acted = tf.cast(index < lengths[:, None], tf.float32)  # positions with an action
    # Every option's action logits and termination at every position: [B, T+1, K, A], [B, T+1, K].
    # The K networks share one structure: one mapped call traces ``forward`` once, not K times.
    mu_logits, beta_logits = skill_outputs(weights["options"], batch["states"], coords)
    logits_all = tf.gather(mu_logits, positions)
    beta_logit = tf.gather(beta_logits, positions)
    taken = tf.one_hot(tf.minimum(actions, tf.shape(logits_all)[-1] - 1), tf.shape(logits_all)[-1])
    first = tf.one_hot(tf.zeros_like(lengths), width)
    last = tf.one_hot(lengths, width)
    mask = inside
    nll = kl_z = term = 0.0
    samples_b: list[tf.Tensor] = []
    samples_z: list[tf.Tensor] = []
    log_cumsums: list[tf.Tensor] = []
    starts = first
    probs_b0 = None
    for i in range(params.num_segments):
        enc = tf.transpose(_lstm(core, x_time, tf.transpose(mask)), [1, 0, 2])  # [B, T+1, H]
        if i == params.num_segments - 1:
            sample_b = last  # the last boundary is the end of the demonstration
        else:
            hidden = tf.nn.relu(tf.matmul(enc, core["head_b_1_w"]) + core["head_b_1_b"])
            logits_b = tf.matmul(hidden, core["head_b_2_w"])[..., 0] + core["head_b_2_b"][0]
            allowed = inside * (1.0 - first)
            logits_b = logits_b * allowed + NEG_INF * (1.0 - allowed)
            if i == 0:
                probs_b0 = tf.nn.softmax(logits_b, axis=-1)
            sample_b = _gumbel_softmax(logits_b, noise_b[i], params.temp_b, hard)
        readout = tf.reduce_sum(enc[:, :-1] * sample_b[:, 1:, None], axis=1)  # enc at b - 1
        hidden = tf.nn.relu(tf.matmul(readout, core["head_z_1_w"]) + core["head_z_1_b"])
        logits_z = tf.matmul(hidden, core["head_z_2_w"]) + core["head_z_2_b"]
        sample_z = _gumbel_softmax(logits_z, noise_z[i], params.temp_z, hard)
        seg = 1.0 - tf.cumsum(sample_b, axis=1)
        if log_cumsums:
            seg = seg * tf.exp(tf.add_n(log_cumsums))
        # Decode: the z-weighted logits of the K option networks, log-likelihood of a_t.
        logits = tf.einsum("bk,btka->bta", sample_z, logits_all)
        log_p = tf.reduce_sum(tf.nn.log_softmax(logits, axis=-1) * taken, axis=-1)
        nll += tf.reduce_mean(tf.reduce_sum(-log_p * seg * acted, axis=1))
        q_z = tf.nn.softmax(logits_z, axis=-1)
        kl_z += tf.reduce_mean(
            tf.reduce_sum(q_z * tf.math.log(q_z + EPS), axis=-1)
            + tf.math.log(float(params.latent_dim))
        )
        # Termination of the decoding options: 0 inside the segment (after its start), 1 at its end.
        z_const, seg_const = tf.stop_gradient(sample_z), tf.stop_gradient(seg * acted)
        end_const, start_const = tf.stop_gradient(sample_b), tf.stop_gradient(starts)
        w_in = seg_const * (1.0 - start_const)
        bce_0 = tf.nn.sigmoid_cross_entropy_with_logits(tf.zeros_like(beta_logit), beta_logit)
        bce_1 = tf.nn.sigmoid_cross_entropy_with_logits(tf.ones_like(beta_logit), beta_logit)
        per_k = bce_0 * w_in[..., None] + bce_1 * end_const[..., None]  # [B, T+1, K]
        term += tf.reduce_mean(tf.reduce_sum(per_k * z_const[:, None, :], axis=[1, 2]))
        samples_b.append(sample_b)
        samples_z.append(sample_z)
        log_cumsums.append(_log_cumsum(sample_b))
        mask = tf.exp(tf.add_n(log_cumsums)) * inside
        starts = sample_b
    if probs_b0 is None:  # one segment: no boundary is inferred, the prior has nothing to weigh
        kl_b = tf.constant(0.0)
    else:
        log_prior = batch["log_prior"][None, 1:]
        p = probs_b0[:, 1:]
        kl = tf.reduce_sum(p * (tf.math.log(p + EPS) - log_prior), axis=-1)
        kl_b = params.num_segments * tf.reduce_mean(kl)
    loss = nll + params.beta_z * kl_z + params.beta_b * kl_b + params.termination_weight * term
    parts = {"loss": loss, "nll": nll, "kl_z": kl_z, "kl_b": kl_b, "termination": term}
    return parts, {"b": tf.stack(samples_b, 1), "z": tf.stack(samples_z, 1)}


def _batch(inputs: SegmentInputs, prior_rate: float) -> dict[str, tf.Tensor]:
    """The demonstrations with actions [B, T+1] (end of sequence and padding: A) and the prior.

    The prior is normalised over the demonstrations' own T+1 positions, as the authors' over
    their batch. Positions padded past them (:func:`demo_tensors`) carry the Poisson's finite
    tail values but a boundary probability of exactly 0, so they add 0 to the KL and its gradient.
    """
    demos = inputs.demos
    tensors = demo_tensors(inputs)
    width, steps = int(tensors["positions"].shape[1]), demos.actions.shape[1]
    actions = np.full((len(demos.lengths), width), inputs.num_actions, np.int32)
    acted = np.arange(steps)[None, :] < demos.lengths[:, None]
    actions[:, :steps] = np.where(acted, demos.actions, inputs.num_actions)
    log_prior = poisson_log_prior(width, prior_rate)
    log_prior -= np.logaddexp.reduce(log_prior[: steps + 1])
    return {
        **tensors,
        "actions": tf.constant(actions, tf.int32),
        "log_prior": tf.constant(log_prior, tf.float32),
    }


def train_compile(
    inputs: SegmentInputs, params: CompileParams, seed: np.random.SeedSequence
) -> Segmentation:
    """Full-batch Adam on the negative ELBO for ``params.iterations`` steps, then read the segments.

    The segments are read with argmax boundaries and latents (no noise); empty segments dropped.

    Raises:
      FloatingPointError: the loss or a gradient turns non-finite (naming the iteration).
    """
    n, b, count = params.num_segments, len(inputs.demos.lengths), params.latent_dim
    init_seed, noise_seed = seed.spawn(2)
    batch = _batch(inputs, params.prior_rate)
    # The noise is drawn for the demonstrations' own T+1 positions (the draws do not depend on the
    # padding) and is 0 on the padded ones, where no boundary can fall.
    width, drawn = int(batch["positions"].shape[1]), inputs.demos.positions.shape[1]
    rng = np.random.default_rng(noise_seed)

    def noise(_: int) -> tuple[np.ndarray, np.ndarray]:
        gumbel_b = padded(_gumbel(rng, (n, b, drawn)), width, axis=2)
        return gumbel_b, _gumbel(rng, (n, b, count))

    initial = init_compile(inputs, params, init_seed)
    weights, curves = fit(
        "compile",
        initial,
        _loss_parts(params),
        CURVES,
        batch,
        params.iterations,
        params.learning_rate,
        step_noise=noise,
        jit_compile=xla_pays(inputs.frames),
    )
    zeros_b, zeros_z = tf.zeros((n, b, width)), tf.zeros((n, b, count))
    samples = _read(weights, batch, zeros_b, zeros_z, params)
    boundaries, latents = _read_segments(
        samples["b"].numpy(), samples["z"].numpy(), inputs.demos.lengths
    )
    used = sorted({z for seq in latents for z in seq})
    options = unstack_skills(weights["options"], range(count))
    return Segmentation(options, used, boundaries, latents, curves)


#: The loss parts recorded per Adam step (the method's curves).
CURVES = ("loss", "nll", "kl_z", "kl_b", "termination")


@functools.cache
def _loss_parts(params: CompileParams) -> Any:
    """The soft ELBO's parts as the fit takes them, one function per params (cached).

    The params shape the graph (the segments are unrolled), so they are baked in; caching by
    value gives every cell with the same params the same function, hence one compiled fit per
    input shapes. A traced fit is never shape-relaxed: a relaxed retrace may order float
    operations differently, and the same seed must give the same options bit for bit.
    """

    def loss_parts(weights: Any, batch: dict[str, tf.Tensor], noise: Any) -> dict[str, tf.Tensor]:
        noise_b, noise_z = noise
        return compile_loss(weights, batch, noise_b, noise_z, params, hard=False)[0]

    return loss_parts


@tf.function
def _read(
    weights: Any, batch: dict[str, tf.Tensor], zeros_b: tf.Tensor, zeros_z: tf.Tensor, params: Any
) -> dict[str, tf.Tensor]:
    """The argmax segmentation (boundaries [B, N, T+1], latents [B, N, K]) of the batch."""
    return compile_loss(weights, batch, zeros_b, zeros_z, params, hard=True)[1]


def _gumbel(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    uniform = rng.uniform(size=shape)
    return (-np.log(EPS - np.log(uniform + EPS))).astype(np.float32)


def _read_segments(
    b: np.ndarray, z: np.ndarray, lengths: np.ndarray
) -> tuple[list[list[int]], list[list[int]]]:
    """Hard boundaries [B, N, T+1] and latents [B, N, K] -> (boundaries, latents) per demo.

    Empty segments (a boundary at or before the previous one) are dropped.
    """
    boundaries, latents = [], []
    for d in range(b.shape[0]):
        start, cuts, codes = 0, [], []
        for i in range(b.shape[1]):
            end = int(np.argmax(b[d, i]))
            if end > start:
                codes.append(int(np.argmax(z[d, i])))
                if end < int(lengths[d]):
                    cuts.append(end)
                start = end
        boundaries.append(cuts)
        latents.append(codes)
    return boundaries, latents
