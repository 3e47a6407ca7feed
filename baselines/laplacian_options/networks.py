"""Keras networks from one observation to ``outputs`` numbers, sized to the observation.

- state indices (``Discrete(S)``): an ``Embedding`` row per state (a dense layer on the one-hot
  state, without the one-hot matrix), then the ReLU layers;
- images ([H, W] or [H, W, C]): rescaled to [0, 1] when the space's values exceed 1, then the
  suite's one convolution rule for options on frames
  (:func:`opt_suite.option_networks.conv.frame_layers`: Atari's layers where they fit, 3x3 stride-1
  on small images), flattened, then the ReLU layers;
- anything else with a shape: flattened, then the ReLU layers.

Only standard layers, seeded initialisers: the same seed builds the same network, and a model
built on it saves to JSON (``NetworkOptionSet``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from opt_suite._tf import tensorflow

__all__ = [
    "as_input",
    "batch_outputs",
    "every_state",
    "network_input",
    "option_model",
    "state_network",
    "stored",
]


def as_input(observations: np.ndarray) -> np.ndarray:
    """A batch as the networks take it: int32 state indices, or float32 arrays.

    Frames stay uint8 in memory (a walk of Atari frames in float32 would be 4x larger) until they
    are batched.
    """
    observations = np.asarray(observations)
    if observations.ndim == 1 and np.issubdtype(observations.dtype, np.integer):
        return observations.astype(np.int32)
    return observations.astype(np.float32)


def stored(observations: np.ndarray) -> Any:
    """The observations as one tensor to gather batches from: int32 indices, or frames as given."""
    observations = np.asarray(observations)
    if observations.ndim == 1 and np.issubdtype(observations.dtype, np.integer):
        observations = observations.astype(np.int32)
    return tensorflow().constant(observations)


def network_input(batch: Any) -> Any:
    """A gathered batch of :func:`stored` as the networks take it (in a compiled function)."""
    tf = tensorflow()
    if batch.dtype == tf.int32 and batch.shape.rank == 1:
        return batch
    return tf.cast(batch, tf.float32)


def every_state(observations: Any, next_observations: Any, rows_per_step: int) -> Any:
    """Every state 0..S-1 (int32 [S]) to evaluate the network on, or None (then per batch).

    Given when the walk's observations are state indices and S is below the rows a step
    evaluates (see :func:`batch_outputs`). S is the largest index seen plus one: the network is
    only ever asked about states the walk visited.
    """
    observations = np.asarray(observations)
    if observations.ndim != 1 or not np.issubdtype(observations.dtype, np.integer):
        return None
    count = int(max(observations.max(initial=0), np.max(next_observations, initial=0))) + 1
    return tensorflow().range(count, dtype="int32") if count < rows_per_step else None


def batch_outputs(network: Any, batches: list[tuple[Any, Any]], states: Any) -> list[Any]:
    """The network's outputs on ``data[p]`` for each (``data``, index batch ``p``), compiled.

    Why: on a tabular family a step's batches (4 x 512 rows for ALLO) hold only a hundred
    distinct states; the network is a function of the state, so running it once on every state
    (``states`` from :func:`every_state`) and gathering rows gives the same outputs and gradients
    (up to the order of float sums) for a twentieth of the work. With ``states`` None (frames,
    vectors, or more states than rows) each batch runs through the network.
    """
    tf = tensorflow()
    if states is None:
        return [network(network_input(tf.gather(d, p)), training=True) for d, p in batches]
    every = network(states, training=True)
    return [tf.gather(every, tf.gather(d, p)) for d, p in batches]


def state_network(
    space: Any, outputs: int, hidden_sizes: Sequence[int], seed: int, name: str
) -> Any:
    """A functional keras model: a batch of observations of ``space`` -> float [n, outputs].

    Args:
      space: the family's observation space (``Discrete`` or a ``Box``).
      outputs: width of the last (linear) layer.
      hidden_sizes: the ReLU layers' widths.
      seed: seeds every initialiser.
      name: the model's name.
    """
    keras = tensorflow().keras
    seeds = iter(np.random.SeedSequence(seed).generate_state(len(hidden_sizes) + 16))

    def glorot() -> Any:
        return keras.initializers.GlorotUniform(seed=int(next(seeds)))

    num_states = getattr(space, "n", None)
    if num_states is not None and space.shape == ():
        inputs = keras.Input(shape=(), dtype="int32", name="state")
        x = keras.layers.Embedding(
            int(num_states), int(hidden_sizes[0]), embeddings_initializer=glorot()
        )(inputs)
        x = keras.layers.Activation("relu")(x)
        rest = hidden_sizes[1:]
    else:
        from opt_suite.option_networks.trunk import frame_layers

        shape = tuple(int(d) for d in space.shape)
        inputs = keras.Input(shape=shape, name="observation")
        x = inputs
        high = np.asarray(getattr(space, "high", 1.0), dtype=np.float64)
        if np.isfinite(high).all() and high.max() > 1.0:
            x = keras.layers.Rescaling(1.0 / float(high.max()))(x)
        if len(shape) in (2, 3):
            if len(shape) == 2:
                x = keras.layers.Reshape((*shape, 1))(x)
            for filters, kernel, stride in frame_layers(shape if len(shape) == 3 else (*shape, 1)):
                x = keras.layers.Conv2D(
                    filters, kernel, stride, activation="relu", kernel_initializer=glorot()
                )(x)
        x = keras.layers.Flatten()(x)
        rest = hidden_sizes
    for width in rest:
        x = keras.layers.Dense(int(width), activation="relu", kernel_initializer=glorot())(x)
    out = keras.layers.Dense(int(outputs), kernel_initializer=glorot(), name="out")(x)
    return keras.Model(inputs, out, name=name)


def option_model(
    q_network: Any,
    head: int,
    heads: int,
    num_actions: int,
    temperature: float,
    tolerance: float,
    name: str,
) -> Any:
    """Option ``head`` of a multi-head Q network as a keras model: obs -> [mu [n, A], beta [n, 1]].

    mu = softmax(Q / temperature) (near-greedy), beta = sigmoid((tolerance - max_a Q) /
    temperature): about 1 where no action has positive value (the eigenoption's stop rule, up to
    ``tolerance``), about 0 where one has. Standard layers only (the head is cut out of the
    [n, heads, A] outputs by ``Cropping1D``), on the Q network's own layers, so the option set
    file rebuilds it.
    """
    keras = tensorflow().keras
    q = keras.layers.Reshape((heads, num_actions))(q_network.output)
    q = keras.layers.Cropping1D((head, heads - 1 - head))(q)  # [n, 1, A]
    mu = keras.layers.Softmax(name="mu")(
        keras.layers.Reshape((num_actions,))(keras.layers.Rescaling(1.0 / temperature)(q))
    )
    best = keras.layers.GlobalMaxPooling1D()(keras.layers.Permute((2, 1))(q))  # [n, 1]
    beta = keras.layers.Activation("sigmoid", name="beta")(
        keras.layers.Rescaling(-1.0 / temperature, offset=tolerance / temperature)(best)
    )
    return keras.Model(q_network.input, [mu, beta], name=name)
