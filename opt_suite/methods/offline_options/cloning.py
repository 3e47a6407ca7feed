"""Behaviour cloning of one option's μ on the demonstrations: the imitation control of Ĵ.

The question a reviewer asks first of options learned by Ĵ (issue 25): do they beat other uses of
the *same* demonstrations? The simplest is one option that imitates them. Its μ is trained to
maximise

    (1/|H|) Σ_h (1/|h|) Σ_t log μ(a_t | s_t)

— Ĵ's likelihood term (``likelihood: log_prob_per_step``) for a policy over options that always
calls this one option: with β ≡ 0 the option runs through h and Pr(h) = Π_t μ(a_t | s_t); with
β ≡ 1 it is called again at every step, and Pr(h) is the same product. So both termination variants
of the control share one trained μ; only β, fixed after training, differs.

The option is offline_options' own (``new_option`` with the run's seed: the network
Algorithm 1 would introduce first, on the same features), trained with the same Adam, step size and
number of full-batch steps as one round of Algorithm 1's minimum (``epochs`` × ``steps_per_epoch``,
unless the control's ``cloned_pairs`` sets another budget): the control differs from the method
in its objective alone. :func:`demonstration_fit` scores a clone on demonstrations (its accuracy
and mean log-likelihood per step), the fit ``bc_option`` reports.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import tensorflow as tf

from opt_suite.methods.offline_options.demos import DemoBatch
from opt_suite.methods.offline_options.params import Params
from opt_suite.methods.offline_options.training import batch_tensors
from opt_suite.objective.adam import adam_ascent_all, zero_moments
from opt_suite.option_networks.networks import Weights, option_outputs

__all__ = ["DemonstrationFit", "cloning_likelihood", "clone_option", "demonstration_fit"]


def _is_mu_weight(key: str) -> bool:
    """μ's path through the network: every weight but the β head (β is fixed after training)."""
    return not key.startswith("beta_")


def cloning_likelihood(
    log_mu: tf.Tensor, positions: tf.Tensor, actions: tf.Tensor, lengths: tf.Tensor
) -> tf.Tensor:
    """(1/|H|) Σ_h (1/|h|) Σ_{t<|h|} log μ(a_t | s_t): Ĵ's likelihood term for the option alone.

    Args:
      log_mu: [U, A] log μ(s, ·) on the demonstrated states.
      positions: int32 [B, L] positions of s_t among them (L = T + 1).
      actions: int32 [B, L] a_t (the last column is padding).
      lengths: int32 [B] |h|.
    """
    per_step = tf.gather_nd(log_mu, tf.stack([positions, actions], axis=-1))  # [B, L]
    acts = tf.range(tf.shape(positions)[1])[None, :] < lengths[:, None]
    total = tf.reduce_sum(tf.where(acts, per_step, tf.zeros_like(per_step)), axis=1)
    return tf.reduce_mean(total / tf.cast(tf.maximum(lengths, 1), log_mu.dtype))


def _inputs(coords: np.ndarray | None) -> tf.Tensor | None:
    """The network's per-state inputs: none (a table), frames (uint8, cast inside) or vectors."""
    if coords is None:
        return None
    if coords.dtype == np.uint8:
        return tf.constant(coords)  # frames: cast inside the conv network
    return tf.constant(coords, tf.float32)


def clone_option(
    option: Weights,
    demos: DemoBatch,
    coords: np.ndarray | None,
    params: Params,
    steps: int | None = None,
    minibatches: tuple[int, np.random.Generator] | None = None,
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Adam ascent of :func:`cloning_likelihood` on μ's weights; (weights, likelihood per epoch).

    ``params.epochs`` epochs of ``params.steps_per_epoch`` full-batch steps at
    ``params.learning_rate`` (``steps``, when given, replaces epochs x steps_per_epoch); the
    returned curve has one point before training, one every ``steps_per_epoch`` steps and one
    after the last step (always of the full-batch likelihood).

    ``minibatches`` = (size, rng): each step ascends instead the mean log μ(a | s) of ``size``
    demonstrated pairs drawn without replacement by ``rng`` (all of them when there are fewer) —
    ``bc_ppo``'s cloning step (``agents.cloning``), for a control budget-matched to it.

    Raises:
      FloatingPointError: the likelihood or a gradient became non-finite (names the step).
    """
    batch = batch_tensors(demos)
    states = tf.constant(demos.states, tf.int32)
    inputs = _inputs(coords)
    trained = {k: tf.constant(v, tf.float32) for k, v in option.items() if _is_mu_weight(k)}
    fixed = {k: tf.constant(v, tf.float32) for k, v in option.items() if not _is_mu_weight(k)}

    def likelihood(weights):
        log_mu, _ = option_outputs({**weights, **fixed}, states, inputs)
        return cloning_likelihood(log_mu, batch["positions"], batch["actions"], batch["lengths"])

    @tf.function(autograph=False)
    def step(weights, moments, t):
        with tf.GradientTape() as tape:
            tape.watch(weights)
            value = likelihood(weights)
        grads = tape.gradient(value, weights)
        new_weights, new_moments = adam_ascent_all(
            weights, grads, moments, t, tf.constant(params.learning_rate, tf.float32)
        )
        finite = tf.reduce_all(
            [tf.reduce_all(tf.math.is_finite(tf.convert_to_tensor(g))) for g in grads.values()]
        )
        return new_weights, new_moments, tf.logical_and(finite, tf.math.is_finite(value))

    # Every demonstrated pair (position of s_t among the states, a_t), for minibatches of pairs.
    acts = np.arange(demos.actions.shape[1])[None, :] < demos.lengths[:, None]
    pair_positions, pair_actions = demos.positions[:, :-1][acts], demos.actions[acts]

    @tf.function(autograph=False)
    def minibatch_step(weights, moments, t, rows_states, rows_inputs, rows_actions):
        with tf.GradientTape() as tape:
            tape.watch(weights)
            log_mu, _ = option_outputs({**weights, **fixed}, rows_states, rows_inputs)
            value = tf.reduce_mean(
                tf.gather(log_mu, rows_actions, axis=1, batch_dims=1)  # log μ(a_i | s_i)
            )
        grads = tape.gradient(value, weights)
        new_weights, new_moments = adam_ascent_all(
            weights, grads, moments, t, tf.constant(params.learning_rate, tf.float32)
        )
        finite = tf.reduce_all(
            [tf.reduce_all(tf.math.is_finite(tf.convert_to_tensor(g))) for g in grads.values()]
        )
        return new_weights, new_moments, tf.logical_and(finite, tf.math.is_finite(value))

    def next_step(weights, moments, t):
        if minibatches is None:
            return step(weights, moments, tf.constant(t))
        size, rng = minibatches
        rows = rng.choice(len(pair_actions), size=min(size, len(pair_actions)), replace=False)
        positions = pair_positions[rows]
        return minibatch_step(
            weights,
            moments,
            tf.constant(t),
            tf.constant(demos.states[positions], tf.int32),
            None if coords is None else _inputs(coords[positions]),
            tf.constant(pair_actions[rows], tf.int32),
        )

    moments = zero_moments(trained)
    curve = [float(likelihood(trained))]
    total = params.epochs * params.steps_per_epoch if steps is None else steps
    for t in range(1, total + 1):
        trained, moments, finite = next_step(trained, moments, t)
        if not bool(finite):
            raise FloatingPointError(
                f"behaviour cloning: a non-finite likelihood or gradient at Adam step {t}"
            )
        if t % params.steps_per_epoch == 0 or t == total:
            curve.append(float(likelihood(trained)))
    weights = {k: np.asarray(v) for k, v in {**trained, **fixed}.items()}
    return weights, np.array(curve, np.float64)


@dataclasses.dataclass(frozen=True)
class DemonstrationFit:
    """How well an option's μ reproduces demonstrations it is scored on.

    Attributes:
      accuracy: share of the demonstrated steps whose action is μ's most probable one.
      log_likelihood: mean of log μ(a_t | s_t) over those steps (pooled, every step weighs one).
      steps: how many demonstrated steps they are.
    """

    accuracy: float
    log_likelihood: float
    steps: int


def demonstration_fit(
    option: Weights, demos: DemoBatch, coords: np.ndarray | None
) -> DemonstrationFit:
    """μ's accuracy and mean log-likelihood on every demonstrated (s_t, a_t) of ``demos``."""
    weights = {k: tf.constant(v, tf.float32) for k, v in option.items()}
    log_mu, _ = option_outputs(weights, tf.constant(demos.states, tf.int32), _inputs(coords))
    log_mu_np = log_mu.numpy().astype(np.float64)  # [U, A]
    acts = np.arange(demos.actions.shape[1])[None, :] < demos.lengths[:, None]  # [B, T]
    positions = demos.positions[:, :-1][acts]
    actions = demos.actions[acts]
    chosen = log_mu_np[positions, actions]
    best = log_mu_np[positions].argmax(axis=-1)
    return DemonstrationFit(
        float(np.mean(best == actions)), float(np.mean(chosen)), int(actions.size)
    )
