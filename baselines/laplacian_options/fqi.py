"""Each eigenoption by fitted Q-iteration on the random-walk transitions (Ernst et al. 2005).

The eigenpurpose of eigenfunction u is the reward r = u(s') - u(s) (Machado et al. 2017, Sec. 3),
with a ``terminate`` action worth 0. Its optimal values satisfy

    Q(s, a) = E[r + gamma * max(0, max_a' Q(s', a'))]

and the eigenoption stops where no action has positive value (max_a Q(s, a) <= 0). Fitted
Q-iteration solves this offline from the same transitions the representation was learned from:
each sweep computes the targets y = r + gamma * max(0, max_a' Q(s', a')) with the previous network,
then fits Q(s, a) to y by a few Adam steps on minibatches. Why this: it needs no model (unlike the
2017 method's dynamic programming), no more env steps (unlike an online Q-learner per option), and
it runs on any observation the networks take, images included.

Rewards are divided by their standard deviation over the walk, so that one temperature and one
tolerance serve every eigenfunction (an eigenfunction's scale depends on the number of states).

On index observations (a tabular family) every sweep runs compiled by numba on every state at once
(:func:`fqi_table_sweeps`, :mod:`baselines.laplacian_options.table_network`): the same targets,
minibatches, loss and Adam, without a TensorFlow graph's per-op dispatch.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from baselines.laplacian_options.networks import as_input, batch_outputs, every_state, stored
from baselines.laplacian_options.table_network import (
    adam_step,
    backward,
    forward,
    is_table_network,
    layout_of,
)
from opt_suite._tf import tensorflow

__all__ = ["fitted_q_iteration", "fqi_table_sweeps"]


def fitted_q_iteration(
    network: Any,
    states: np.ndarray,
    actions: np.ndarray,
    next_states: np.ndarray,
    reward: np.ndarray,
    params: Any,
    rng: np.random.Generator,
) -> np.ndarray:
    """Fit ``network`` (observations -> Q [n, m * A], m heads) to m eigenpurposes at once.

    One network with a head per eigenoption (a shared trunk): one compiled training loop however
    many options, and the trunk's features serve every eigenpurpose.

    Args:
      network: keras model with m * A outputs, head i's Q in columns i * A .. (i + 1) * A - 1
        (trained in place).
      states: the walk's s_t, [N, ...].
      actions: its a_t, int [N].
      next_states: its s_t+1, [N, ...].
      reward: float [N, m], the (normalised) eigenpurpose rewards of each transition.
      params: ``LaplacianOptionsParams`` (gamma, fqi_iterations, fqi_steps, batch_size,
        learning_rate).
      rng: draws the minibatches.

    Returns:
      The mean squared error of the fit per sweep, float [fqi_iterations].
    """
    size = len(states)
    batch = min(int(params.batch_size), size)
    every = every_state(states, next_states, batch)
    if every is not None and is_table_network(network):
        return _fit_table(
            network, states, actions, next_states, reward, params, rng, int(every.shape[0])
        )
    tf = tensorflow()
    heads = reward.shape[1]
    optimizer = tf.keras.optimizers.Adam(params.learning_rate)
    weights = network.trainable_variables
    data, taken = stored(states), tf.constant(np.asarray(actions, dtype=np.int32))

    @tf.function
    def fit(picks: Any, targets: Any) -> Any:
        # One sweep's fitting steps in one compiled loop (see ``allo.train_allo``). Not XLA: on
        # four rooms the 60 default sweeps took 3.3-5.4 s as a TensorFlow graph and 3.8-8.9 s as
        # XLA clusters (loaded 2-core machine), so the compile is not worth it.
        total = tf.constant(0.0)
        for i in tf.range(tf.shape(picks)[0]):
            with tf.GradientTape() as tape:
                (q,) = batch_outputs(network, [(data, picks[i])], every)
                q = tf.reshape(q, (-1, heads, tf.shape(q)[-1] // heads))  # [n, m, A]
                taken_q = tf.gather(q, tf.gather(taken, picks[i]), axis=2, batch_dims=1)
                loss = tf.reduce_mean(tf.square(taken_q - tf.gather(targets, picks[i])))
            optimizer.apply_gradients(zip(tape.gradient(loss, weights), weights, strict=True))
            total += loss
        return total / tf.cast(tf.shape(picks)[0], tf.float32)

    losses = np.zeros(params.fqi_iterations)
    for sweep in range(params.fqi_iterations):
        after = _values_at(network, next_states, every).reshape(size, heads, -1).max(axis=2)
        targets = (reward + params.gamma * np.maximum(after, 0.0)).astype(np.float32)
        picks = rng.integers(size, size=(params.fqi_steps, batch)).astype(np.int32)
        losses[sweep] = float(fit(tf.constant(picks), tf.constant(targets)))
    return losses


def _fit_table(
    network: Any,
    states: np.ndarray,
    actions: np.ndarray,
    next_states: np.ndarray,
    reward: np.ndarray,
    params: Any,
    rng: np.random.Generator,
    count: int,
) -> np.ndarray:
    """:func:`fitted_q_iteration` compiled by numba on states 0..count-1 (index observations).

    The minibatches are drawn sweep by sweep, as the graph path draws them.
    """
    size = len(states)
    batch = min(int(params.batch_size), size)
    picks = np.stack(
        [rng.integers(size, size=(params.fqi_steps, batch)) for _ in range(params.fqi_iterations)]
    )
    layout, flat = layout_of(network)
    losses = np.zeros(params.fqi_iterations)
    fqi_table_sweeps(
        flat, layout.starts, layout.widths, count,
        np.asarray(states, dtype=np.int64), np.asarray(actions, dtype=np.int64),
        np.asarray(next_states, dtype=np.int64), np.asarray(reward, dtype=np.float64),
        picks, float(params.gamma), float(params.learning_rate), losses,
    )  # fmt: skip
    network.set_weights(layout.unflatten(flat))
    return losses


@numba.njit(cache=True, nogil=True)
def fqi_table_sweeps(  # type: ignore[no-untyped-def]
    flat, starts, widths, count, here, taken, there, reward, picks, gamma, learning_rate, losses
):
    """Every sweep of fitted Q-iteration on the index-observation Q network ``flat``, compiled.

    Per sweep: targets y = r + gamma max(0, max_a' Q(s', a')) from the current network, then
    ``picks.shape[1]`` Adam steps on mean (Q(s, a) - y)^2 over a minibatch and the heads (one
    optimiser over all sweeps, as the graph path's). ``losses[sweep]``: the steps' mean loss.
    """
    heads = reward.shape[1]
    actions = widths[-1] // heads
    grad, m, v = np.zeros_like(flat), np.zeros_like(flat), np.zeros_like(flat)
    step = 0
    for sweep in range(picks.shape[0]):
        q, _ = forward(flat, starts, widths, count)
        best = np.zeros((count, heads))
        for s in range(count):
            for h in range(heads):
                best[s, h] = max(np.max(q[s, h * actions : (h + 1) * actions]), 0.0)
        targets = np.empty_like(reward)
        for row in range(len(here)):
            for h in range(heads):
                targets[row, h] = reward[row, h] + gamma * best[there[row], h]
        total = 0.0
        for i in range(picks.shape[1]):
            q, hidden = forward(flat, starts, widths, count)
            rows = picks[sweep, i]
            scale = 1.0 / (len(rows) * heads)
            d_q = np.zeros_like(q)
            loss = 0.0
            for row in rows:
                s = here[row]
                for h in range(heads):
                    column = h * actions + taken[row]
                    error = q[s, column] - targets[row, h]
                    loss += error * error * scale
                    d_q[s, column] += 2.0 * error * scale
            backward(flat, starts, widths, hidden, d_q, grad)
            step += 1
            adam_step(flat, grad, m, v, step, learning_rate)
            total += loss
        losses[sweep] = total / picks.shape[1]


def _values_at(network: Any, observations: np.ndarray, every: Any) -> np.ndarray:
    """:func:`values` on the observations, once per state when ``every`` is given.

    With index observations the network runs on each state once and the rows are picked (a
    20 000-step walk visits about a hundred states).
    """
    if every is None:
        return values(network, observations)
    return values(network, np.asarray(every))[np.asarray(observations, dtype=np.int64)]


def values(network: Any, observations: np.ndarray, chunk: int = 4096) -> np.ndarray:
    """The network's outputs on every observation, float [N, outputs], in chunks."""
    out = [
        np.asarray(network(as_input(observations[i : i + chunk]), training=False))
        for i in range(0, len(observations), chunk)
    ]
    return np.concatenate(out) if out else np.zeros((0, int(network.output.shape[-1])))
