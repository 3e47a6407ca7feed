"""Convolutional options on frames (the paper's Atari options, Sec. 4.2), for Algorithm 1 as it is.

Paper: "Options were represented by a two layer convolutional neural network, and were given the
previous two frames as input" (grayscale, 84x84). The paper gives no layer sizes; we use the first
two layers of Mnih et al. (2013)'s DQN network, the usual Atari trunk of the time: 16 filters 8x8
stride 4, then 32 filters 4x4 stride 2, ReLU, then the heads on the flattened 9x9x32 map — μ a
softmax over actions, β a one-unit sigmoid, π (the policy over options during training) a softmax
over the A primitives + the learned options.

Other image sizes (:mod:`opt_suite.option_networks.trunk`): on frames too small for those layers
(a side under 20 px: a 10x10 MinAtar frame, a 7x7 MiniGrid view) the same filters become 3x3
stride-1 convolutions, as many as fit; frames under 3 px a side get none (the heads read the
pixels). The layers are a function of the frame shape alone (:func:`frame_layers`), so weights
(which hold kernels, not strides) and a frame shape always name one network.

How this plugs into the tabular machinery without changing it: offline_options' Algorithm 1 and its
training round evaluate networks on the U distinct *demonstrated states* and gather the results
into Ĵ's [B, L, n] tables. Here the demonstrated states are the demonstrations' frames, numbered
0..U-1: :class:`FrameFeatures` is a :class:`StateFeatures` whose "coordinates" are the frames
themselves (uint8 [U, 84, 84, 2], held once for every option and round, cast to float inside the
network); offline_options' ``frame_demo_batch`` numbers every frame of every demonstration.
Weights are plain dicts like the MLP's (``conv1_w``, ``conv1_b``, ``conv2_w``, ``conv2_b``, then the
heads; other layers than Atari's carry their stride in their names, see :func:`conv_key`), so the
one traced training step serves both kinds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np
import tensorflow as tf

from opt_suite.option_networks.features import StateFeatures

# CONV_LAYERS and frame_layers live in trunk.py (no TensorFlow: validate sizes networks with them).
from opt_suite.option_networks.trunk import CONV_LAYERS, frame_layers

__all__ = [
    "CONV_LAYERS",
    "FrameFeatures",
    "conv_key",
    "frame_layers",
    "conv_forward",
    "init_conv_weights",
    "is_conv",
    "keras_option_network",
]


@dataclasses.dataclass(frozen=True, eq=False)
class FrameFeatures(StateFeatures):
    """Frames as the networks' input: ``coords`` are the demonstrations' frames, uint8 [U, H, W, C].

    Attributes:
      frame_shape: (H, W, C) of one observation (84, 84, 2 on Atari).
      layers: the convolutions, :func:`frame_layers` of ``frame_shape`` (set by :meth:`of`).
    """

    frame_shape: tuple[int, int, int] = (84, 84, 2)
    layers: tuple[tuple[int, int, int], ...] = CONV_LAYERS

    @classmethod
    def of(
        cls, frames: np.ndarray | None, frame_shape: Sequence[int] | None = None
    ) -> FrameFeatures:
        """Features over ``frames`` [U, H, W, C] (or none: architecture only, for fresh options)."""
        if frames is not None:
            frames = np.asarray(frames)
            if frames.ndim != 4 or frames.dtype != np.uint8:
                raise ValueError(
                    f"frame features: expected uint8 frames [U, H, W, C], got {frames.dtype} "
                    f"{frames.shape}"
                )
            frame_shape = frames.shape[1:]
        if frame_shape is None or len(frame_shape) != 3 or min(frame_shape) < 1:
            raise ValueError(f"frame features: expected a frame shape (H, W, C), got {frame_shape}")
        count = 0 if frames is None else len(frames)
        shape = tuple(int(v) for v in frame_shape)
        return cls(
            count,
            use_index=False,
            coords=frames,
            frame_shape=shape,  # type: ignore[arg-type]
            layers=frame_layers(shape),
        )

    @property
    def coord_dim(self) -> int:
        """Not a vector input: the flattened size of the last feature map (the heads' fan-in)."""
        height, width = self.frame_shape[:2]
        channels = self.frame_shape[2]
        for filters, kernel, stride in self.layers:
            height, width = (height - kernel) // stride + 1, (width - kernel) // stride + 1
            channels = filters
        return height * width * channels


def is_conv(weights: Mapping[str, object]) -> bool:
    """Whether ``weights`` are a network on frames (from :func:`init_conv_weights`).

    Not "has conv1_w": frames too small for a convolution give a network of heads only. Every MLP
    on states has the first layer's bias ``b0`` (``networks.init_weights``); no frame network does.
    """
    return "b0" not in weights


def conv_key(index: int, layers: Sequence[tuple[int, int, int]]) -> str:
    """The weight-name prefix of convolution ``index`` (1-based) of ``layers``.

    The traced training step is compiled once per set of weight *names* with shape-free inputs
    (``offline_options.training``), so a convolution's stride — a Python value of the graph —
    must follow from its name: ``conv{i}`` for Atari's layers (:data:`CONV_LAYERS`, their names
    since 0.1), ``conv{i}_stride{s}`` for any other.
    """
    if tuple(layers) == CONV_LAYERS:
        return f"conv{index}"
    return f"conv{index}_stride{layers[index - 1][2]}"


def _weight_strides(weights: Mapping[str, object]) -> list[tuple[str, int]]:
    """(name prefix, stride) of each convolution in ``weights``, in order (see :func:`conv_key`)."""
    found = []
    for index in range(1, len(weights) + 1):
        if f"conv{index}_w" in weights:
            found.append((f"conv{index}", CONV_LAYERS[index - 1][2]))
            continue
        named = [k for k in weights if k.startswith(f"conv{index}_stride") and k.endswith("_w")]
        if not named:
            break
        found.append((named[0][:-2], int(named[0][len(f"conv{index}_stride") : -2])))
    return found


def _glorot(
    rng: np.random.Generator, shape: Sequence[int], fan_in: int, fan_out: int
) -> np.ndarray:
    limit = np.sqrt(6.0 / (fan_in + fan_out))
    return rng.uniform(-limit, limit, size=tuple(shape)).astype(np.float32)


def init_conv_weights(
    features: FrameFeatures, heads: Mapping[str, int], seed: np.random.SeedSequence
) -> dict[str, np.ndarray]:
    """Initial weights: Glorot-uniform kernels (Keras' Conv2D/Dense default), zero biases."""
    rng = np.random.default_rng(seed)
    weights: dict[str, np.ndarray] = {}
    channels = features.frame_shape[2]
    for i, (filters, kernel, _) in enumerate(features.layers, start=1):
        shape = (kernel, kernel, channels, filters)
        key = conv_key(i, features.layers)
        weights[f"{key}_w"] = _glorot(
            rng, shape, kernel * kernel * channels, kernel * kernel * filters
        )
        weights[f"{key}_b"] = np.zeros(filters, np.float32)
        channels = filters
    width = features.coord_dim
    for head, out in heads.items():
        weights[f"{head}_w"] = _glorot(rng, (width, int(out)), width, int(out))
        weights[f"{head}_b"] = np.zeros(int(out), np.float32)
    return weights


def conv_forward(weights: Mapping[str, tf.Tensor | np.ndarray], frames: tf.Tensor) -> dict:
    """Head name -> logits [U, width] for frames [U, H, W, C] (uint8 0..255 or float in [0, 1])."""
    x = tf.convert_to_tensor(frames)
    x = tf.cast(x, tf.float32) / 255.0 if x.dtype == tf.uint8 else tf.cast(x, tf.float32)
    for key, stride in _weight_strides(weights):  # the strides are in the names (conv_key)
        x = tf.nn.conv2d(x, weights[f"{key}_w"], strides=stride, padding="VALID")
        x = tf.nn.relu(x + weights[f"{key}_b"])
    x = tf.reshape(x, [tf.shape(x)[0], -1])
    heads = {key[:-2] for key in weights if key.endswith("_w") and not key.startswith("conv")}
    return {head: tf.matmul(x, weights[f"{head}_w"]) + weights[f"{head}_b"] for head in heads}


def keras_option_network(
    weights: Mapping[str, np.ndarray], frame_shape: Sequence[int], name: str = "option"
):
    """The option as a standard keras model: frames [n, H, W, C] -> [μ [n, A], β [n, 1]].

    Same numbers as :func:`conv_forward` + softmax/sigmoid (a test checks it), in standard layers
    only, so that an option set file rebuilds it without this module (``NetworkOptionSet``). Its
    input is the raw frame cast to float (0..255): the first layer rescales to [0, 1].
    """
    keras = tf.keras
    frames = keras.Input(tuple(int(d) for d in frame_shape), name="frames")
    x = keras.layers.Rescaling(1.0 / 255.0, name="rescale")(frames)
    layers = frame_layers(frame_shape)
    for i, (filters, kernel, stride) in enumerate(layers, start=1):
        layer = keras.layers.Conv2D(filters, kernel, stride, activation="relu", name=f"conv{i}")
        x = layer(x)
        key = conv_key(i, layers)
        layer.set_weights([weights[f"{key}_w"], weights[f"{key}_b"]])
    x = keras.layers.Flatten(name="flatten")(x)
    outputs = []
    for head, activation in (("mu", "softmax"), ("beta", "sigmoid")):
        width = int(np.shape(weights[f"{head}_w"])[1])
        layer = keras.layers.Dense(width, activation=activation, name=head)
        outputs.append(layer(x))
        layer.set_weights([weights[f"{head}_w"], weights[f"{head}_b"]])
    return keras.Model(frames, outputs, name=name)
