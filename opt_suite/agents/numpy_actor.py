"""The PPO actor's forward pass in NumPy, for acting between updates.

Why: PPO acts once per batched env step and learns once per ``steps_per_iteration`` steps. Acting
through TensorFlow (tf-agents' collect policy, even compiled) costs about 1.1 ms of CPU per call
on one thread whatever the network's size: op dispatch, nests, the distribution object. On
MinAtar's 10x10 frames that is most of the acting cost and about a third of a whole PPO
iteration; the same arithmetic in NumPy (an ``im2col`` matrix product per convolution) costs tens
of microseconds. The networks stay tf-agents' own and TensorFlow still trains them: this module
only reads their weights after each update (:meth:`NumpyActor.refresh`) and mirrors their
forward pass, layer by layer.

What is mirrored, and nothing else (anything else is a ``TypeError`` when the actor is built):
the observation scaling of ``opt_suite.agents.ppo`` (uint8 pixels / 255, else float32; a channel
axis for a ``[H, W]`` image fed to convolutions), Keras ``Conv2D`` with 'valid' padding,
channels-last, no dilation; ``Flatten``; ``Dense``; activations ReLU or none. The last ``Dense``
gives the logits of tf-agents' categorical projection. A test checks the logits against the
TensorFlow network's on Atari-, MinAtar- and vector-shaped observations, separate and shared.

Sampling: one uniform draw per row from a seeded ``numpy.random.Generator``, inverted through the
softmax's cumulative probabilities (computed in float64): the categorical distribution that
tf-agents' collect policy samples, from a stream the caller seeds.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["NumpyActor", "sample_categorical"]

_ACTIVATIONS = {"relu": lambda x: np.maximum(x, 0.0), "linear": lambda x: x}


def sample_categorical(logits: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One action index per row of ``logits`` [N, A], drawn from softmax(logits).

    Raises:
      FloatingPointError: a logit is NaN or infinite (diverged weights). Every comparison with a
        NaN is false, so such a row would otherwise always draw action 0, silently.
    """
    z = logits.astype(np.float64)
    if not np.isfinite(z).all():
        raise FloatingPointError(
            f"the policy's logits are not finite ({np.count_nonzero(~np.isfinite(z))} of "
            f"{z.size}): PPO's weights diverged"
        )
    z -= z.max(axis=1, keepdims=True)
    p = np.exp(z)
    cumulative = np.cumsum(p, axis=1)
    u = rng.random(len(z)) * cumulative[:, -1]  # unnormalised: scale u, not p
    index = (cumulative <= u[:, None]).sum(axis=1)
    return np.minimum(index, z.shape[1] - 1)  # u == total cannot pick past the last action


def _conv2d(x: np.ndarray, kernel: np.ndarray, stride: int) -> np.ndarray:
    """A "valid" convolution, channels last: x [N, H, W, C], kernel [kh, kw, C, F]."""
    kh, kw, channels, filters = kernel.shape
    # NumPy's stubs type ``axis`` as one index; a tuple is documented and works.
    windows = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(1, 2))  # type: ignore[call-overload]
    windows = windows[:, ::stride, ::stride]  # [N, H', W', C, kh, kw]
    n, oh, ow = windows.shape[:3]
    patches = windows.transpose(0, 1, 2, 4, 5, 3).reshape(n * oh * ow, kh * kw * channels)
    return (patches @ kernel.reshape(kh * kw * channels, filters)).reshape(n, oh, ow, filters)


def _dense(x: np.ndarray, kernel_t: np.ndarray) -> np.ndarray:
    """The product of rows x [N, K] and a kernel [K, F] given as its contiguous transpose.

    OpenBLAS multiplies a few rows by a wide kernel 2-3x faster as (kernel^T x^T)^T, with the
    transpose stored contiguous, than as x kernel (measured: 8 x 1024 by 1024 x 128, 164 vs 77
    us; 8 x 2592 by 2592 x 256, 951 vs 353 us); with hundreds of rows the direct product wins.
    """
    if len(x) > _FEW_ROWS:
        return x @ kernel_t.T
    return (kernel_t @ x.T).T


_FEW_ROWS = 64


def _activation(layer: Any) -> str:
    name = getattr(getattr(layer, "activation", None), "__name__", "linear")
    if name not in _ACTIVATIONS:
        raise TypeError(f"NumpyActor: activation {name!r} of layer {layer.name} is not mirrored")
    return name


def _layers(actor: Any) -> list[Any]:
    """The Keras layers after the observation's scaling, in order, ending with the logits."""
    encoder = getattr(actor, "_encoder", None) or getattr(actor, "trunk", None)
    projection = getattr(actor, "_projection_networks", None) or getattr(actor, "head", None)
    logits_layer = getattr(projection, "_projection_layer", None)
    if encoder is None or logits_layer is None:
        raise TypeError(
            f"NumpyActor: {type(actor).__name__} is not an actor of opt_suite.agents.ppo "
            "(an encoder and a categorical projection)"
        )
    return [*encoder._postprocessing_layers, logits_layer]


class NumpyActor:
    """The logits of an actor network (see the module doc), on NumPy observations.

    Args:
      actor: the actor built by ``opt_suite.agents.ppo.build_networks`` (separate or shared).
      observation_dtype: the observations' dtype (uint8 pixels are scaled to [0, 1]).
      observation_rank: rank of one observation (2: a ``[H, W]`` image, given a channel axis when
        the first layer is a convolution).
    """

    def __init__(self, actor: Any, observation_dtype: Any, observation_rank: int) -> None:
        self._pixels = np.dtype(observation_dtype) == np.uint8
        self._plan: list[tuple[str, Any, str]] = []  # (kind, layer, activation)
        for layer in _layers(actor):
            kind = type(layer).__name__
            if kind == "Conv2D":
                if (
                    layer.padding != "valid"
                    or layer.data_format != "channels_last"
                    or tuple(layer.dilation_rate) != (1, 1)
                    or layer.strides[0] != layer.strides[1]
                ):
                    raise TypeError(f"NumpyActor: convolution {layer.name} is not mirrored")
            elif kind not in ("Flatten", "Dense"):
                raise TypeError(f"NumpyActor: layer {layer.name} ({kind}) is not mirrored")
            activation = "linear" if kind == "Flatten" else _activation(layer)
            self._plan.append((kind, layer, activation))
        self._channel_axis = observation_rank == 2 and self._plan[0][0] == "Conv2D"
        self._weights: list[tuple[np.ndarray, np.ndarray | None] | None] = []
        self.refresh()

    def refresh(self) -> None:
        """Read the network's current weights (call after every update)."""
        self._weights = [
            None
            if kind == "Flatten"
            else (
                # Dense kernels stored transposed, contiguous: see _dense.
                layer.kernel.numpy()
                if kind == "Conv2D"
                else np.ascontiguousarray(layer.kernel.numpy().T),
                layer.bias.numpy() if layer.use_bias else None,
            )
            for kind, layer, _ in self._plan
        ]

    def logits(self, observations: np.ndarray) -> np.ndarray:
        """Action logits [N, A] (float32) of observations [N, ...]."""
        x = observations.astype(np.float32)
        if self._pixels:
            x /= np.float32(255.0)  # as ppo's scaling: a float32 division
        if self._channel_axis:
            x = x[..., None]
        for (kind, layer, activation), weights in zip(self._plan, self._weights, strict=True):
            if kind == "Flatten":
                x = x.reshape(len(x), -1)
                continue
            kernel, bias = weights  # type: ignore[misc]
            x = _conv2d(x, kernel, layer.strides[0]) if kind == "Conv2D" else _dense(x, kernel)
            if bias is not None:
                x = x + bias
            x = _ACTIVATIONS[activation](x)
        return x.astype(np.float32, copy=False)
