"""The segmentation baselines' skills as stacked option networks, and their full-batch fit (TF).

Both CompILE and LOVE keep K skills, each an option network of the suite (``mu`` and ``beta``
heads, :func:`opt_suite.option_networks.networks.init_option`). The K networks share one structure,
so they are held stacked ([K, ...] per weight) and evaluated in one vectorised call: the traced
graph holds one network, not K (tracing dominates a short run). :func:`fit` is the one training
loop: a keras Adam on every weight, one full-batch step per iteration, a non-finite loss or
gradient stopping the run with the iteration named. Imports TensorFlow: import it inside
``discover``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import tensorflow as tf

from opt_suite.option_networks.networks import forward, init_option

__all__ = ["demo_tensors", "fit", "init_skills", "skill_outputs", "unstack_skills"]


def demo_tensors(inputs: Any) -> dict[str, tf.Tensor]:
    """The padded demonstrations of a ``SegmentInputs`` as the models' batch of tensors.

    ``states`` int32 [U], ``coords`` (the U states' inputs, absent for one-hot input),
    ``positions`` int32 [B, T+1], ``actions`` int32 [B, T], ``lengths`` int32 [B].
    """
    states, coords = inputs.state_input()
    demos = inputs.demos
    batch = {
        "states": tf.constant(states, tf.int32),
        "positions": tf.constant(demos.positions, tf.int32),
        "actions": tf.constant(demos.actions, tf.int32),
        "lengths": tf.constant(demos.lengths, tf.int32),
    }
    if coords is not None:
        batch["coords"] = tf.constant(coords)
    return batch


def init_skills(
    features: Any,
    hidden_sizes: Sequence[int],
    num_actions: int,
    count: int,
    seed: np.random.SeedSequence,
) -> dict[str, np.ndarray]:
    """``count`` option networks (one child seed each), stacked: every weight [count, ...]."""
    skills = [
        init_option(features, hidden_sizes, num_actions, child) for child in seed.spawn(count)
    ]
    return {key: np.stack([s[key] for s in skills]) for key in skills[0]}


def skill_outputs(
    stacked: Any, states: tf.Tensor, coords: tf.Tensor | None
) -> tuple[tf.Tensor, tf.Tensor]:
    """(action logits [U, K, A], termination logits [U, K]) of the K skills on U states."""
    out = tf.vectorized_map(lambda w: forward(w, states, coords), stacked)
    return tf.transpose(out["mu"], [1, 0, 2]), tf.transpose(out["beta"][..., 0])


def unstack_skills(stacked: Any, keep: Sequence[int]) -> list[dict[str, np.ndarray]]:
    """The weights of skills ``keep`` as separate option networks (numpy), in that order."""
    arrays = {name: np.asarray(v) for name, v in stacked.items()}
    return [{name: v[k] for name, v in arrays.items()} for k in keep]


def fit(
    method: str,
    initial: dict[str, dict[str, np.ndarray]],
    gradients: Callable[..., tuple[dict[str, tf.Tensor], Any]],
    iteration_inputs: Callable[[int], tuple[Any, ...]],
    iterations: int,
    learning_rate: float,
    global_clipnorm: float | None = None,
) -> tuple[dict[str, dict[str, tf.Variable]], dict[str, np.ndarray]]:
    """Full-batch Adam (keras) for ``iterations`` steps; (trained variables, per-step curves).

    Args:
      method: named in errors.
      initial: weight groups (name -> array) to train.
      gradients: ``gradients(variables, *iteration_inputs(i))`` -> (loss parts, each a scalar,
        ``loss`` among them; gradients with the structure of ``variables``).
      iteration_inputs: the extra inputs of step i (e.g. its Gumbel noise).
      iterations: steps.
      learning_rate: Adam's step size.
      global_clipnorm: clip the gradients' global norm (None: no clipping).

    Raises:
      FloatingPointError: the loss or a gradient is not finite at some step (no weight is read).
    """
    variables = {
        group: {key: tf.Variable(v, name=f"{group}/{key}") for key, v in weights.items()}
        for group, weights in initial.items()
    }
    flat = tf.nest.flatten(variables)
    optimizer = tf.keras.optimizers.Adam(
        learning_rate=learning_rate, global_clipnorm=global_clipnorm
    )
    curves: dict[str, list[float]] = {}
    for iteration in range(iterations):
        parts, grads = gradients(variables, *iteration_inputs(iteration))
        grads = tf.nest.flatten(grads)
        values = {name: float(value) for name, value in parts.items()}
        norm = float(tf.linalg.global_norm(grads))  # NaN/inf when any gradient entry is
        if not (np.isfinite(norm) and all(np.isfinite(list(values.values())))):
            raise FloatingPointError(
                f"{method}: the loss or its gradient is not finite at iteration {iteration + 1} "
                f"({values}); no options are returned"
            )
        optimizer.apply_gradients(zip(grads, flat, strict=True))
        for name, value in values.items():
            curves.setdefault(name, []).append(value)
    return variables, {name: np.array(v) for name, v in curves.items()}
