"""One Adam step up a gradient (Kingma & Ba 2015, Algorithm 1): the one optimiser of Ĵ's ascents.

Two loops maximise Ĵ: Algorithm 1's rounds (``methods.offline_options.training``, float32 network
weights inside one ``tf.function``) and the π-table fit of :mod:`.scoring` (float64 logits inside
one XLA cluster). Both take this step, so a change to the optimiser is one edit, and both stay
ascents (the paper's pseudocode shows plain gradient ascent with step size α; Adam with α as its
step size is the usual stand-in).

Why not ``tf.keras.optimizers.Adam``: it minimises ``tf.Variable`` objects, while both loops carry
their weights and moments as loop values of a ``tf.while_loop`` / ``tf.range`` loop (no variables,
so one trace serves every shape and the XLA cluster holds the whole ascent). The bias correction is
folded into the step size, ``α·sqrt(1 − β2^t)/(1 − β1^t)``, as Algorithm 1's last lines suggest
(the ε placement of Kingma & Ba's "more efficient" form).
"""

from __future__ import annotations

from typing import NamedTuple

import tensorflow as tf

__all__ = [
    "BETA1",
    "BETA2",
    "EPSILON",
    "AdamState",
    "adam_ascent",
    "adam_ascent_all",
    "zero_moments",
]

#: Kingma & Ba's defaults (Algorithm 1). 1 − β is written as a literal below: in float64,
#: ``1.0 - 0.9`` is one ulp below 0.1, and the literal keeps both loops' numbers as they were.
BETA1, BETA2, EPSILON = 0.9, 0.999, 1e-8
_ONE_MINUS_BETA1, _ONE_MINUS_BETA2 = 0.1, 0.001


class AdamState(NamedTuple):
    """The first and second moment estimates of one tensor."""

    m: tf.Tensor
    v: tf.Tensor


def adam_ascent(
    weight: tf.Tensor, grad: tf.Tensor, state: AdamState, step: tf.Tensor, learning_rate
) -> tuple[tf.Tensor, AdamState]:
    """One Adam step *up* ``grad``: (the new weight, the new moments).

    Args:
      weight: the tensor being ascended.
      grad: ∂Ĵ/∂weight (an ``IndexedSlices`` from a gather is made dense).
      state: its moments before this step (zeros before the first).
      step: t, the 1-based number of this step (any numeric tensor or number).
      learning_rate: α, a number or a scalar tensor of ``weight``'s dtype.
    """
    grad = tf.convert_to_tensor(grad)
    t = tf.cast(step, weight.dtype)
    m = BETA1 * state.m + _ONE_MINUS_BETA1 * grad
    v = BETA2 * state.v + _ONE_MINUS_BETA2 * tf.square(grad)
    scale = learning_rate * tf.sqrt(1.0 - BETA2**t) / (1.0 - BETA1**t)
    return weight + scale * m / (tf.sqrt(v) + EPSILON), AdamState(m, v)


def zero_moments(weights: dict[str, tf.Tensor]) -> dict[str, AdamState]:
    """Adam's moments before the first step, for every tensor of ``weights``."""
    return {k: AdamState(tf.zeros_like(w), tf.zeros_like(w)) for k, w in weights.items()}


def adam_ascent_all(
    weights: dict[str, tf.Tensor],
    grads: dict[str, tf.Tensor],
    moments: dict[str, AdamState],
    step: tf.Tensor,
    learning_rate,
) -> tuple[dict[str, tf.Tensor], dict[str, AdamState]]:
    """:func:`adam_ascent` on every tensor of a dict of weights: (new weights, new moments)."""
    new_weights, new_moments = {}, {}
    for key, w in weights.items():
        new_weights[key], new_moments[key] = adam_ascent(
            w, grads[key], moments[key], step, learning_rate
        )
    return new_weights, new_moments
