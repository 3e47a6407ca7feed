"""The index-observation network of :func:`networks.state_network`, compiled by numba, with Adam.

Why: on a tabular family the network is a function of ~100 states, and a training step is a few
dozen tiny ops (an embedding row per state, two 64-unit layers, a handful of outputs). As a
TensorFlow graph, or even one XLA cluster, a step cost ~1.1 ms on four rooms, nearly all of it
op dispatch; compiled by numba, the whole loop of steps is a few matrix products per step
(``benchmarks/bench_field.py``). The network is the same one — weights read from the keras model
``state_network`` built and written back to it after training — and Adam is Keras' (Kingma & Ba
2015, epsilon outside the root), so only the order of float sums (and float64 for float32)
differs from the graph.

Layers (``state_network`` on a ``Discrete`` space): ``Embedding`` -> ReLU -> ``Dense`` + ReLU per
further hidden width -> a linear ``Dense``, evaluated on every state 0..S-1 at once. Weights live
in one flat float64 vector (:class:`Layout` says where each is), so Adam is one loop over it.

Importing this module imports numba (the registered method module does not import it).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numba
import numpy as np

__all__ = ["Layout", "adam_step", "backward", "forward", "is_table_network", "layout_of"]

#: Keras' Adam defaults (``keras.optimizers.Adam``).
BETA_1, BETA_2, EPSILON = 0.9, 0.999, 1e-7


def is_table_network(network: Any) -> bool:
    """Whether ``network`` is ``state_network``'s index-observation model (the only one here)."""
    kinds = [type(layer).__name__ for layer in network.layers]
    return (
        len(kinds) >= 4
        and kinds[:3] == ["InputLayer", "Embedding", "Activation"]
        and all(kind == "Dense" for kind in kinds[3:])
    )


@dataclasses.dataclass(frozen=True)
class Layout:
    """Where the weights [embedding, W_1, b_1, ..., W_out, b_out] are in one flat vector.

    Attributes:
      widths: int64 [L + 1]: the embedding's width, then each ``Dense`` layer's.
      starts: int64 [2L + 2]: weight i is ``flat[starts[i]:starts[i + 1]]`` (keras' order).
      shapes: each weight's shape.
    """

    widths: np.ndarray
    starts: np.ndarray
    shapes: tuple[tuple[int, ...], ...]

    def unflatten(self, flat: np.ndarray) -> list[np.ndarray]:
        """The weights as keras' ``set_weights`` takes them (float32)."""
        return [
            flat[a:b].reshape(shape).astype(np.float32)
            for a, b, shape in zip(self.starts[:-1], self.starts[1:], self.shapes, strict=True)
        ]


def layout_of(network: Any) -> tuple[Layout, np.ndarray]:
    """(the layout, the weights as one float64 vector) of a keras ``state_network`` on indices."""
    if not is_table_network(network):
        raise TypeError(f"not an index-observation state_network: {network.name}")
    weights = network.get_weights()
    shapes = tuple(tuple(int(n) for n in np.shape(w)) for w in weights)
    widths = np.array([shapes[0][1], *(shape[1] for shape in shapes[1::2])], dtype=np.int64)
    starts = np.cumsum([0, *(int(np.prod(shape)) for shape in shapes)]).astype(np.int64)
    flat = np.concatenate([np.ravel(w) for w in weights]).astype(np.float64)
    return Layout(widths, starts, shapes), flat


@numba.njit(cache=True, nogil=True)
def forward(flat, starts, widths, count):  # type: ignore[no-untyped-def]
    """(outputs [count, d] on states 0..count-1, each hidden layer's ReLU output for backward)."""
    h = np.maximum(flat[starts[0] : starts[0] + count * widths[0]].reshape((count, widths[0])), 0.0)
    hidden = [h]
    layers = len(widths) - 1
    for k in range(layers):
        w = flat[starts[1 + 2 * k] : starts[2 + 2 * k]].reshape((widths[k], widths[k + 1]))
        b = flat[starts[2 + 2 * k] : starts[3 + 2 * k]]
        z = h @ w + b
        if k < layers - 1:
            z = np.maximum(z, 0.0)
            hidden.append(z)
        h = z
    return h, hidden


@numba.njit(cache=True, nogil=True)
def backward(flat, starts, widths, hidden, d_out, grad):  # type: ignore[no-untyped-def]
    """Fill ``grad`` (flat, like ``flat``) with the gradients given d loss / d outputs."""
    upstream = d_out
    for k in range(len(widths) - 2, -1, -1):
        below = hidden[k]
        rows, cols = widths[k], widths[k + 1]
        g_w = np.ascontiguousarray(below.T) @ upstream
        grad[starts[1 + 2 * k] : starts[2 + 2 * k]] = g_w.ravel()
        for j in range(cols):
            grad[starts[2 + 2 * k] + j] = upstream[:, j].sum()
        w = flat[starts[1 + 2 * k] : starts[2 + 2 * k]].reshape((rows, cols))
        upstream = np.where(below > 0.0, upstream @ np.ascontiguousarray(w.T), 0.0)
    # rows of states never evaluated (count..S-1) get no gradient
    filled = starts[0] + upstream.size
    grad[starts[0] : filled] = upstream.ravel()
    grad[filled : starts[1]] = 0.0


@numba.njit(cache=True, nogil=True)
def adam_step(flat, grad, m, v, step, learning_rate):  # type: ignore[no-untyped-def]
    """Keras' Adam update number ``step`` (from 1) of ``flat`` in place; moments m, v in place.

    m += (g - m)(1 - beta_1); v += (g^2 - v)(1 - beta_2); w -= alpha m / (sqrt(v) + epsilon),
    alpha = lr sqrt(1 - beta_2^t) / (1 - beta_1^t). Keras' sparse (embedding) update decays every
    row's moments too, so this dense update is the same.
    """
    alpha = learning_rate * np.sqrt(1.0 - BETA_2**step) / (1.0 - BETA_1**step)
    for i in range(flat.size):
        g = grad[i]
        m[i] += (g - m[i]) * (1.0 - BETA_1)
        v[i] += (g * g - v[i]) * (1.0 - BETA_2)
        flat[i] -= alpha * m[i] / (np.sqrt(v[i]) + EPSILON)
