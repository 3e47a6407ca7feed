"""The option networks (μ, β) and the policy over options π, as pure functions of their weights.

Paper, Sec. 4.1: "Each option was represented as a two-layer neural network, with 32 neurons in each
layer, and two output layers: a softmax output layer over the four possible actions representing μ,
and a separate sigmoid layer representing β." The policy over options π is the same trunk with one
softmax head over every option (the A primitives first, then the learned options).

Weights are plain dicts of arrays (``index_w``, ``coord_w``, ``b0``, ``w1``, ``b1``, ..., then
``<head>_w``, ``<head>_b``), so training is a pure function of them and is traced once per process,
not once per network (see ``opt_suite.methods.offline_options.training``). They are drawn from a
numpy ``Generator`` seeded by a ``SeedSequence`` (Glorot-uniform weights, zero biases, what a Keras
``Dense`` layer does), so initialisation never touches TF's random state: same seed => same
network.

The first layer is one dense layer on the input [one-hot(s), coords(s)] (see ``features.py``); its
one-hot part is a per-state row lookup (``tf.gather``), without the [S, S] one-hot matrix.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import tensorflow as tf

from opt_suite.option_networks.conv import (
    FrameFeatures,
    conv_forward,
    init_conv_weights,
    is_conv,
)
from opt_suite.option_networks.features import StateFeatures

__all__ = [
    "Weights",
    "glorot_uniform",
    "init_weights",
    "init_option",
    "init_policy",
    "forward",
    "option_outputs",
    "policy_probs",
    "keras_vector_option_network",
]

#: Network weights by name (numpy arrays at rest, tensors inside training).
Weights = Mapping[str, np.ndarray | tf.Tensor]


def glorot_uniform(rng: np.random.Generator, fan_in: int, fan_out: int) -> np.ndarray:
    """float32 [fan_in, fan_out] ~ U(-l, l), l = sqrt(6 / (fan_in + fan_out)) (Glorot 2010)."""
    limit = np.sqrt(6.0 / (fan_in + fan_out))
    return rng.uniform(-limit, limit, size=(fan_in, fan_out)).astype(np.float32)


def init_weights(
    features: StateFeatures,
    hidden_sizes: Sequence[int],
    heads: Mapping[str, int],
    seed: np.random.SeedSequence,
) -> dict[str, np.ndarray]:
    """Initial weights of a ReLU MLP from a state to linear heads (drawn in a fixed order)."""
    if isinstance(features, FrameFeatures):  # frames in: the convolutional trunk (conv.py)
        return init_conv_weights(features, heads, seed)
    rng = np.random.default_rng(seed)
    width = int(hidden_sizes[0])
    index_rows = features.num_states if features.use_index else 0
    # One Dense layer on [one-hot(s), coords(s)]: draw it whole, then split.
    first = glorot_uniform(rng, index_rows + features.coord_dim, width)
    weights: dict[str, np.ndarray] = {"b0": np.zeros(width, np.float32)}
    if features.use_index:
        weights["index_w"] = first[:index_rows]
    if features.coords is not None:
        weights["coord_w"] = first[index_rows:]
    for i, out in enumerate(hidden_sizes[1:], start=1):
        weights[f"w{i}"] = glorot_uniform(rng, width, int(out))
        weights[f"b{i}"] = np.zeros(int(out), np.float32)
        width = int(out)
    for head, out in heads.items():
        weights[f"{head}_w"] = glorot_uniform(rng, width, int(out))
        weights[f"{head}_b"] = np.zeros(int(out), np.float32)
    return weights


def init_option(
    features: StateFeatures,
    hidden_sizes: Sequence[int],
    num_actions: int,
    seed: np.random.SeedSequence,
) -> dict[str, np.ndarray]:
    """A fresh option o = (μ_φ, β_ψ): a softmax head over actions and a one-unit sigmoid head."""
    return init_weights(features, hidden_sizes, {"mu": num_actions, "beta": 1}, seed)


def init_policy(
    features: StateFeatures,
    hidden_sizes: Sequence[int],
    num_options: int,
    seed: np.random.SeedSequence,
) -> dict[str, np.ndarray]:
    """A fresh policy over options π_θ with one softmax head over ``num_options`` options."""
    return init_weights(features, hidden_sizes, {"pi": num_options}, seed)


def forward(weights: Weights, states: tf.Tensor, coords: tf.Tensor | None) -> dict[str, tf.Tensor]:
    """Head name -> logits [U, width] for int32 state indices [U] and their coords [U, d].

    Args:
      weights: from :func:`init_weights` (arrays or tensors).
      states: int32 [U] state indices (used when the input has a one-hot part).
      coords: float32 [U, d] dense features of the same states, or None without a dense part; for
        a convolutional network (``conv.py``), the states' frames [U, H, W, C].
    """
    if is_conv(weights):
        return conv_forward(weights, coords)
    x = weights["b0"]
    if "index_w" in weights:
        x = x + tf.gather(weights["index_w"], states)
    if "coord_w" in weights:
        x = x + tf.matmul(coords, weights["coord_w"])
    x = tf.nn.relu(x)
    i = 1
    while f"w{i}" in weights:
        x = tf.nn.relu(tf.matmul(x, weights[f"w{i}"]) + weights[f"b{i}"])
        i += 1
    trunk = ("index", "coord")
    heads = {key[:-2] for key in weights if key.endswith("_w") and key[:-2] not in trunk}
    return {head: tf.matmul(x, weights[f"{head}_w"]) + weights[f"{head}_b"] for head in heads}


def option_outputs(
    weights: Weights, states: tf.Tensor, coords: tf.Tensor | None, dtype: tf.DType = tf.float32
) -> tuple[tf.Tensor, tf.Tensor]:
    """(log μ_o(s, ·) [U, A], β_o(s) [U]) of one option, activated in ``dtype``.

    The logits are cast *before* the softmax and the sigmoid: in float64 a probability of e^-100
    is a number, not the 0 it becomes in float32 (see ``training.py`` on why that matters).
    """
    out = forward(weights, states, coords)
    mu, beta = tf.cast(out["mu"], dtype), tf.cast(out["beta"][:, 0], dtype)
    return tf.nn.log_softmax(mu, axis=-1), tf.sigmoid(beta)


def policy_probs(
    weights: Weights, states: tf.Tensor, coords: tf.Tensor | None, dtype: tf.DType = tf.float32
) -> tf.Tensor:
    """π(s, ·) [U, num_options], the softmax taken in ``dtype``."""
    return tf.nn.softmax(tf.cast(forward(weights, states, coords)["pi"], dtype), axis=-1)


def keras_vector_option_network(weights: Mapping[str, np.ndarray], name: str = "option"):
    """An MLP option on vector observations as a standard keras model: [n, d] -> [μ, β [n, 1]].

    The same numbers as :func:`option_outputs` on ``coords`` = the vectors (a test checks it), in
    standard Dense layers only, so that an option set file rebuilds it without this module
    (``NetworkOptionSet``). ``weights`` must have no per-state part (``index_w``): a vector has
    no index.
    """
    if "index_w" in weights or "coord_w" not in weights:
        raise ValueError("a vector option network needs coordinate weights only (no index_w)")
    keras = tf.keras
    dim = int(np.shape(weights["coord_w"])[0])
    vectors = keras.Input((dim,), name="observation")
    layers = [("coord_w", "b0")]
    i = 1
    while f"w{i}" in weights:
        layers.append((f"w{i}", f"b{i}"))
        i += 1
    x = vectors
    for j, (kernel, bias) in enumerate(layers):
        layer = keras.layers.Dense(int(np.shape(weights[kernel])[1]), "relu", name=f"dense{j}")
        x = layer(x)
        layer.set_weights([np.asarray(weights[kernel]), np.asarray(weights[bias])])
    outputs = []
    for head, activation in (("mu", "softmax"), ("beta", "sigmoid")):
        layer = keras.layers.Dense(int(np.shape(weights[f"{head}_w"])[1]), activation, name=head)
        outputs.append(layer(x))
        layer.set_weights([np.asarray(weights[f"{head}_w"]), np.asarray(weights[f"{head}_b"])])
    return keras.Model(vectors, outputs, name=name)
