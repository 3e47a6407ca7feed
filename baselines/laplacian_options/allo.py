"""The augmented Lagrangian Laplacian objective (ALLO; Gomez, Bowling & Machado, ICLR 2024).

Learn the d smallest eigenfunctions u_1..u_d of the Laplacian L = I - P of the random walk, with
inner products under the walk's state distribution rho, from transitions (s, s') alone:

    min_u max_beta   sum_i E[(u_i(s) - u_i(s'))^2]                                  (graph drawing)
                   + sum_{j >= k} beta_jk (<u_j, [[u_k]]> - delta_jk)                   (duals)
                   + b sum_{j >= k} (<u_j, [[u_k]]> - delta_jk)^2                       (barrier)

(Gomez et al. 2024's augmented Lagrangian), [[.]] a stop-gradient. The stop-gradient on the lower
triangle is what makes the solution the eigenvectors themselves, in order, instead of any rotation
of their span: u_j is held orthogonal to the u_k before it, never the other way round. The
graph-drawing objective of Wu, Tucker & Nachum (2019) has the same first term and a symmetric
penalty, and so recovers the span only (its minimisers are invariant to rotations); the suite's
options need each eigenfunction, hence ALLO.

Each step: inner products on two independent batches of states (so the square of the error is
estimated without bias: E_1 * E_2), a gradient step on u, then dual ascent
beta += dual_rate * E (clipped to [-100, 100]) and b += barrier_rate * mean(max(E_1 * E_2, 0))
(clipped to [0, 10 000]) — the authors' ``src/trainer/al.py`` (read, not copied).

The eigenvalue of u_i is read from its graph term: E[(u_i(s) - u_i(s'))^2] = 2 <u_i, L u_i> for a
reversible walk, so lambda_i ~ half of it.

On index observations (a tabular family) the steps run in NumPy on every state at once
compiled by numba (:mod:`baselines.laplacian_options.table_network`, :func:`allo_table_steps`):
the same objective, batches, gradients and Adam, a few matrix products per step instead of a
TensorFlow graph's dispatched ops (``benchmarks/bench_field.py``).
"""

from __future__ import annotations

import functools
from typing import Any

import numba
import numpy as np

from baselines.laplacian_options.networks import batch_outputs, every_state, stored
from baselines.laplacian_options.table_network import (
    adam_step,
    backward,
    forward,
    is_table_network,
    layout_of,
)
from baselines.xla import xla_pays
from opt_suite._tf import tensorflow

__all__ = ["allo_loss", "allo_table_step", "allo_table_steps", "train_allo"]

DUAL_CLIP = 100.0
CHUNK = 500
BARRIER_MAX = 10_000.0


def allo_loss(
    u_t: Any, u_tp1: Any, u_a: Any, u_b: Any, duals: Any, barrier: Any
) -> tuple[Any, Any, Any, Any]:
    """(loss, graph norms [d], errors [d, d], quadratic errors [d, d]) of one batch (see above).

    Args:
      u_t: float [n, d], u at s_t of n transitions.
      u_tp1: float [n, d], u at their s_t+1.
      u_a: float [m, d], u at a batch of states.
      u_b: float [m, d], u at another, independent batch.
      duals: float [d, d] (lower triangle used).
      barrier: float scalar, the barrier coefficient b.
    """
    tf = tensorflow()
    d = u_t.shape[-1]
    graph = tf.reduce_mean(tf.square(u_t - u_tp1), axis=0)
    eye = tf.eye(d)

    def error(u: Any) -> Any:
        inner = tf.matmul(u, tf.stop_gradient(u), transpose_a=True) / tf.cast(
            tf.shape(u)[0], u.dtype
        )
        return tf.linalg.band_part(inner - eye, -1, 0)  # lower triangle, diagonal included

    error_a, error_b = error(u_a), error(u_b)
    errors = 0.5 * (error_a + error_b)
    quadratic = error_a * error_b
    loss = (
        tf.reduce_sum(graph)
        + tf.reduce_sum(tf.stop_gradient(duals) * errors)
        + tf.stop_gradient(barrier) * tf.reduce_sum(quadratic)
    )
    return loss, graph, errors, quadratic


def allo_table_step(u, here, there, batch_a, batch_b, duals, barrier):  # type: ignore[no-untyped-def]
    """:func:`allo_loss` and its gradient on u over every state, the batches as state indices.

    The same objective as :func:`allo_loss` on u_t = u[s_t], ..., written with counts: a batch's
    inner products are u^T diag(c) u / m, c how often each state is in it. Compiled by numba
    (:func:`allo_table_steps`).

    Args:
      u: float [S, d], the network on states 0..S-1.
      here: int [n], the transitions' s_t.
      there: int [n], their s_t+1.
      batch_a: int [m], a batch of states.
      batch_b: int [m], another, independent batch.
      duals: float [d, d] (lower triangle used).
      barrier: b.

    Returns:
      (loss, graph norms [d], errors [d, d], quadratic errors [d, d], d loss / d u [S, d]).
    """
    states, d = u.shape
    n, m = len(here), len(batch_a)
    graph = np.zeros(d)
    d_u = np.zeros((states, d))
    for row in range(n):  # graph term: +2/n (u_s - u_s') into row s, the negative into row s'
        s, t = here[row], there[row]
        for j in range(d):
            diff = u[s, j] - u[t, j]
            graph[j] += diff * diff / n
            d_u[s, j] += 2.0 * diff / n
            d_u[t, j] -= 2.0 * diff / n
    count_a, count_b = np.zeros(states), np.zeros(states)
    for row in range(m):
        count_a[batch_a[row]] += 1.0
        count_b[batch_b[row]] += 1.0
    lower = np.tril(np.ones((d, d)))
    error_a = lower * ((u * count_a.reshape((-1, 1))).T @ u / m - np.eye(d))
    error_b = lower * ((u * count_b.reshape((-1, 1))).T @ u / m - np.eye(d))
    errors = 0.5 * (error_a + error_b)
    quadratic = error_a * error_b
    loss = np.sum(graph) + np.sum(duals * errors) + barrier * np.sum(quadratic)
    # error_a's first factor carries the gradient (the second is stopped), weighted by what
    # multiplies error_a in the loss: its dual's half and the barrier times error_b (and so for b)
    weight_a = lower * (0.5 * duals + barrier * error_b)
    weight_b = lower * (0.5 * duals + barrier * error_a)
    d_u += count_a.reshape((-1, 1)) * (u @ np.ascontiguousarray(weight_a.T)) / m
    d_u += count_b.reshape((-1, 1)) * (u @ np.ascontiguousarray(weight_b.T)) / m
    return loss, graph, errors, quadratic, d_u


allo_table_step = numba.njit(cache=True, nogil=True)(allo_table_step)


@numba.njit(cache=True, nogil=True)
def allo_table_steps(  # type: ignore[no-untyped-def]
    flat, starts, widths, count, here, there, picks, rates, losses, graphs
):
    """Every ALLO step on the index-observation network ``flat`` (trained in place), compiled.

    ``rates``: (learning rate, dual rate, barrier rate, initial barrier); ``losses`` [steps] and
    ``graphs`` [steps, d] are filled. The step is :func:`train_allo`'s graph one: loss and
    gradient, Adam, then dual ascent and the barrier's rise.
    """
    learning_rate, dual_rate, barrier_rate, barrier = rates[0], rates[1], rates[2], rates[3]
    d = graphs.shape[1]
    duals = np.zeros((d, d))
    grad, m, v = np.zeros_like(flat), np.zeros_like(flat), np.zeros_like(flat)
    for i in range(picks.shape[0]):
        u, hidden = forward(flat, starts, widths, count)
        moved = picks[i, 0]
        loss, graph, errors, quadratic, d_u = allo_table_step(
            u, here[moved], there[moved], here[picks[i, 1]], here[picks[i, 2]], duals, barrier
        )
        backward(flat, starts, widths, hidden, d_u, grad)
        adam_step(flat, grad, m, v, i + 1, learning_rate)
        duals = np.minimum(np.maximum(duals + dual_rate * errors, -DUAL_CLIP), DUAL_CLIP)
        rise = barrier_rate * np.mean(np.maximum(quadratic, 0.0))
        barrier = min(max(barrier + rise, 0.0), BARRIER_MAX)
        losses[i] = loss
        graphs[i] = graph


def train_allo(
    network: Any,
    states: np.ndarray,
    next_states: np.ndarray,
    params: Any,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """Train ``network`` (observations -> d) on the transitions; (loss curve, eigenvalues [d]).

    The batches' indices are drawn up front from ``rng``. On index observations (the network
    ``state_network`` builds for a ``Discrete`` space, fewer states than a step's rows) every step
    runs in one numba loop (:func:`allo_table_steps`); otherwise inside one compiled TensorFlow
    loop per chunk of :data:`CHUNK` steps (a Python call per step costs as much as the step on a
    small network), so the result does not depend on the chunking.

    Args:
      network: a keras model with d outputs.
      states: the walk's s_t, [N, ...].
      next_states: its s_t+1, [N, ...].
      params: ``LaplacianOptionsParams`` (steps, batch_size, learning_rate, barrier and duals).
      rng: draws the batches.

    Returns:
      (the objective per step, float [steps]; each eigenvalue, half its graph term averaged over
      the last tenth of the steps, float [d]).
    """
    size = len(states)
    batch = min(int(params.batch_size), size)
    every = every_state(states, next_states, 4 * batch)
    picks = rng.integers(size, size=(params.steps, 3, batch)).astype(np.int32)
    if every is not None and is_table_network(network):
        losses, graphs = _train_table(
            network, states, next_states, picks, int(every.shape[0]), params
        )
    else:
        losses, graphs = _train_graph(network, states, next_states, picks, every, params)
    tail = graphs[-max(len(graphs) // 10, 1) :]
    return losses.astype(np.float64), tail.mean(axis=0) / 2.0


def _train_table(
    network: Any,
    states: np.ndarray,
    next_states: np.ndarray,
    picks: np.ndarray,
    count: int,
    params: Any,
) -> tuple[np.ndarray, np.ndarray]:
    """ALLO's steps compiled by numba on states 0..count-1 (index observations)."""
    layout, flat = layout_of(network)
    rates = np.array(
        [params.learning_rate, params.dual_rate, params.barrier_rate, params.barrier_initial],
        dtype=np.float64,
    )
    losses = np.zeros(len(picks))
    graphs = np.zeros((len(picks), int(layout.widths[-1])))
    here = np.asarray(states, dtype=np.int64)
    there = np.asarray(next_states, dtype=np.int64)
    allo_table_steps(
        flat, layout.starts, layout.widths, count, here, there, picks, rates, losses, graphs
    )
    network.set_weights(layout.unflatten(flat))
    return losses, graphs


def _train_graph(
    network: Any,
    states: np.ndarray,
    next_states: np.ndarray,
    picks: np.ndarray,
    every: Any,
    params: Any,
) -> tuple[np.ndarray, np.ndarray]:
    """ALLO's steps as compiled TensorFlow chunks (any observation); (losses, graph norms)."""
    tf = tensorflow()
    d = int(network.output.shape[-1])
    duals = tf.Variable(tf.zeros((d, d)))
    barrier = tf.Variable(float(params.barrier_initial))
    optimizer = tf.keras.optimizers.Adam(params.learning_rate)
    weights = network.trainable_variables
    data, data_next = stored(states), stored(next_states)

    # XLA: a step on four rooms is a few dozen small ops; as one cluster the 10 000 default
    # steps took 12.6 s against 16.9 s as a TensorFlow graph (loaded 2-core machine). On frames
    # (states [N, H, W, C]) XLA's convolutions are far slower than TensorFlow's (xla_pays).
    @functools.partial(tf.function, jit_compile=xla_pays(frames=np.ndim(states) > 2))
    def run(picks: Any) -> tuple[Any, Any]:
        count = tf.shape(picks)[0]
        losses = tf.TensorArray(tf.float32, size=count)
        graphs = tf.TensorArray(tf.float32, size=count)
        for i in tf.range(count):
            with tf.GradientTape() as tape:
                here, there = (data, picks[i, 0]), (data_next, picks[i, 0])
                u_t, u_tp1, u_a, u_b = batch_outputs(
                    network, [here, there, (data, picks[i, 1]), (data, picks[i, 2])], every
                )
                loss, graph, errors, quadratic = allo_loss(u_t, u_tp1, u_a, u_b, duals, barrier)
            optimizer.apply_gradients(zip(tape.gradient(loss, weights), weights, strict=True))
            duals.assign(tf.clip_by_value(duals + params.dual_rate * errors, -DUAL_CLIP, DUAL_CLIP))
            rise = params.barrier_rate * tf.reduce_mean(tf.maximum(quadratic, 0.0))
            barrier.assign(tf.clip_by_value(barrier + rise, 0.0, BARRIER_MAX))
            losses = losses.write(i, loss)
            graphs = graphs.write(i, graph)
        return losses.stack(), graphs.stack()

    losses, graphs = [], []
    for start in range(0, len(picks), CHUNK):
        loss, graph = run(tf.constant(picks[start : start + CHUNK]))
        losses.append(np.asarray(loss))
        graphs.append(np.asarray(graph))
    return np.concatenate(losses), np.concatenate(graphs)
