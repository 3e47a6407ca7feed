"""Behaviour cloning of a PPO agent's actor: the start of the jump-start control (``bc_ppo``).

Cross-entropy of the actor's action distribution against the demonstrated actions, minimised by
Adam (the optimiser the agent itself learns with, ``tf.keras.optimizers.Adam``) over shuffled
minibatches, for a fixed number of steps (not epochs: a handful of demonstrations would otherwise
get a handful of steps). Only the actor's variables move (with a shared trunk,
the trunk too: it is the actor's input); the value network starts untrained, as the agent's does.

The compiled step and its Adam are kept on the actor, per learning rate: the actor of a worker's
kept agent (``opt_suite.agents.agent_cache``) clones with a step traced once per worker, its
Adam's step count and moments set back to zeros (a new Adam's) before every cloning.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from opt_suite._tf import tensorflow

__all__ = ["actor_fit", "clone_actor"]

#: Pairs per forward pass when scoring a fit (bounds the memory of a batch of frames).
_FIT_CHUNK = 512


def clone_actor(
    actor: Any,
    observations: np.ndarray,
    actions: np.ndarray,
    steps: int,
    batch_size: int,
    learning_rate: float,
    rng: np.random.Generator,
) -> np.ndarray:
    """Train ``actor`` to imitate (observation, action) pairs; the loss of every step.

    Args:
      actor: a tf-agents actor network (``actor(obs, step_type=, network_state=())`` returns a
        categorical distribution over the agent's actions).
      observations: [N, ...] in the actor's observation dtype and shape.
      actions: int [N] in [0, A).
      steps: Adam steps.
      batch_size: pairs per Adam step (each step draws them without replacement; all of them
        when there are fewer).
      learning_rate: Adam's step size.
      rng: the order of the minibatches.

    Raises:
      FloatingPointError: a non-finite loss (naming the step).
    """
    tf = tensorflow()
    step = _cloning_step(actor, learning_rate)
    losses = np.zeros(steps)
    count = len(actions)
    size = min(batch_size, count)
    for t in range(steps):
        rows = rng.choice(count, size=size, replace=False)
        obs, act = tf.constant(observations[rows]), tf.constant(actions[rows], tf.int32)
        losses[t] = float(step(obs, act))
        if not np.isfinite(losses[t]):
            raise FloatingPointError(
                f"behaviour cloning of the actor: loss {losses[t]} at step {t}"
            )
    return losses


def actor_fit(actor: Any, observations: np.ndarray, actions: np.ndarray) -> tuple[float, float]:
    """(accuracy, mean log-likelihood) of ``actor`` on (observation, action) pairs.

    Accuracy: the share of pairs whose action is the actor's most probable one (ties: the first);
    log-likelihood: the mean of log pi(a | s). Forward passes only, ``training=False``: no weight,
    optimiser or random stream moves, so measuring a fit changes no later number.

    Raises:
      ValueError: no pair to score.
    """
    if len(actions) == 0:
        raise ValueError("actor_fit: no (observation, action) pair to score")
    tf = tensorflow()
    hits, log_likelihood = 0, 0.0
    for start in range(0, len(actions), _FIT_CHUNK):
        obs = tf.constant(observations[start : start + _FIT_CHUNK])
        act = np.asarray(actions[start : start + _FIT_CHUNK], np.int64)
        step_type = tf.zeros([len(act)], dtype=tf.int32)
        distribution, _ = actor(obs, step_type=step_type, network_state=(), training=False)
        logits = np.asarray(distribution.logits_parameter(), np.float64).reshape(len(act), -1)
        shifted = logits - logits.max(axis=1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        hits += int((logits.argmax(axis=1) == act).sum())
        log_likelihood += float(log_probs[np.arange(len(act)), act].sum())
    return hits / len(actions), log_likelihood / len(actions)


def _cloning_step(actor: Any, learning_rate: float) -> Any:
    """The compiled Adam step on ``actor``'s cross-entropy, its Adam as new (kept on ``actor``)."""
    tf = tensorflow()
    # In __dict__, not as an attribute: Keras would track the optimiser's variables as the actor's.
    steps = actor.__dict__.setdefault("_opt_suite_cloning_steps", {})
    if learning_rate in steps:
        kept_optimizer, kept_step = steps[learning_rate]
        for variable in kept_optimizer.variables:  # the step count and moments: a new Adam's 0
            variable.assign(tf.zeros_like(variable))
        return kept_step
    optimizer = tf.keras.optimizers.Adam(learning_rate=learning_rate)
    variables = actor.trainable_variables

    @tf.function(autograph=False)
    def step(obs, act):
        with tf.GradientTape() as tape:
            step_type = tf.zeros(tf.shape(act), dtype=tf.int32)
            distribution, _ = actor(obs, step_type=step_type, network_state=(), training=True)
            logits = distribution.logits_parameter()
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=act, logits=logits)
            )
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables, strict=True))
        return loss

    steps[learning_rate] = optimizer, step
    return step
