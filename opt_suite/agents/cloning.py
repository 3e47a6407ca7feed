"""Behaviour cloning of a PPO agent's actor: the start of the jump-start control (``bc_ppo``).

Cross-entropy of the actor's action distribution against the demonstrated actions, minimised by
Adam (the optimiser the agent itself learns with, ``tf.keras.optimizers.Adam``) over shuffled
minibatches, for a fixed number of epochs. Only the actor's variables move (with a shared trunk,
the trunk too: it is the actor's input); the value network starts untrained, as the agent's does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from opt_suite._tf import tensorflow

__all__ = ["clone_actor"]


def clone_actor(
    actor: Any,
    observations: np.ndarray,
    actions: np.ndarray,
    epochs: int,
    batch_size: int,
    learning_rate: float,
    rng: np.random.Generator,
) -> np.ndarray:
    """Train ``actor`` to imitate (observation, action) pairs; the mean loss of every epoch.

    Args:
      actor: a tf-agents actor network (``actor(obs, step_type=, network_state=())`` returns a
        categorical distribution over the agent's actions).
      observations: [N, ...] in the actor's observation dtype and shape.
      actions: int [N] in [0, A).
      epochs: passes over the pairs.
      batch_size: pairs per Adam step.
      learning_rate: Adam's step size.
      rng: the order of the minibatches.

    Raises:
      FloatingPointError: a non-finite loss (naming the epoch).
    """
    tf = tensorflow()
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

    losses = []
    count = len(actions)
    for epoch in range(epochs):
        order = rng.permutation(count)
        total = 0.0
        for start in range(0, count, batch_size):
            rows = order[start : start + batch_size]
            loss = float(
                step(tf.constant(observations[rows]), tf.constant(actions[rows], tf.int32))
            )
            total += loss * len(rows)
        if not np.isfinite(total):
            raise FloatingPointError(
                f"behaviour cloning of the actor: loss {total} at epoch {epoch}"
            )
        losses.append(total / count)
    return np.array(losses)
