"""The segmentation baselines' skills as stacked option networks, and their full-batch fit (TF).

Both CompILE and LOVE keep K skills, each an option network of the suite (``mu`` and ``beta``
heads, :func:`opt_suite.option_networks.networks.init_option`). The K networks share one structure,
so they are held stacked ([K, ...] per weight) and evaluated in one mapped call: the traced
graph holds one network, not K (tracing dominates a short run). :func:`fit` is the one training
loop: the package's Adam (:mod:`opt_suite.objective.adam`) on every weight, one full-batch step
per iteration, a non-finite loss or gradient stopping the run with the iteration named.

Why compiled, in chunks: a step on four-rooms demonstrations is a few hundred tiny ops (the
forward-backward scans and their gradients); dispatched one by one from Python each step cost
0.08 s (LOVE), so the README's 20,000 steps took half an hour. A chunk of :data:`CHUNK` steps is
one XLA cluster (weights and Adam's moments are loop values, not variables), traced once per cell
and run without Python between steps. On frames the chunk is an ordinary TensorFlow graph
instead (:func:`baselines.xla.xla_pays`). Imports TensorFlow: import it inside ``discover``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import tensorflow as tf

from baselines.xla import bucketed, xla_pays
from opt_suite.objective.adam import adam_ascent_all, zero_moments
from opt_suite.option_networks.networks import forward, init_option

__all__ = ["demo_tensors", "fit", "init_skills", "padded", "skill_outputs", "unstack_skills"]


def demo_tensors(inputs: Any) -> dict[str, tf.Tensor]:
    """The padded demonstrations of a ``SegmentInputs`` as the models' batch of tensors.

    ``states`` int32 [U], ``coords`` (the U states' inputs, absent for one-hot input),
    ``positions`` int32 [B, T+1], ``actions`` int32 [B, T], ``lengths`` int32 [B].

    For an XLA fit (feature inputs, :func:`baselines.xla.xla_pays`) T and U are padded to
    :func:`baselines.xla.bucketed` sizes, so that most seeds share a compiled fit: the extra steps
    lie past every demonstration's length (masked, as a shorter demonstration's are), the extra
    states repeat the last one and no position points at them.
    """
    states, coords = inputs.state_input()
    demos = inputs.demos
    positions, actions = demos.positions, demos.actions
    if xla_pays(inputs.frames):
        steps, count = bucketed(actions.shape[1]), bucketed(len(states))
        positions = padded(positions, steps + 1, axis=1)
        actions = padded(actions, steps, axis=1)
        states = padded(states, count, axis=0, edge=True)
        if coords is not None:
            coords = padded(coords, count, axis=0, edge=True)
    batch = {
        "states": tf.constant(states, tf.int32),
        "positions": tf.constant(positions, tf.int32),
        "actions": tf.constant(actions, tf.int32),
        "lengths": tf.constant(demos.lengths, tf.int32),
    }
    if coords is not None:
        batch["coords"] = tf.constant(coords)
    return batch


def padded(array: np.ndarray, length: int, *, axis: int, edge: bool = False) -> np.ndarray:
    """``array`` extended along ``axis`` to ``length`` entries: zeros (``edge``: the last one's)."""
    widths = [(0, 0)] * array.ndim
    widths[axis] = (0, length - array.shape[axis])
    return np.pad(array, widths, mode="edge" if edge else "constant")


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
    """(action logits [U, K, A], termination logits [U, K]) of the K skills on U states.

    One ``map_fn`` over the stacked networks: its loop has a static count (K) that XLA compiles,
    and the traced graph holds one network, not K. Not ``tf.vectorized_map``: pfor made the
    states' coords a compile-time constant of the XLA cluster, so every seed's demonstrated
    states (other coords, same shapes) compiled the whole fit again, 5 s of CompILE's 6 s per
    seed on four rooms. (pfor also has no batched-filter convolution.)
    """
    spec = tf.TensorSpec(None, tf.float32)
    out = tf.map_fn(
        lambda w: forward(w, states, coords),
        stacked,
        fn_output_signature={"mu": spec, "beta": spec},
    )
    return tf.transpose(out["mu"], [1, 0, 2]), tf.transpose(out["beta"][..., 0])


def unstack_skills(stacked: Any, keep: Sequence[int]) -> list[dict[str, np.ndarray]]:
    """The weights of skills ``keep`` as separate option networks (numpy), in that order."""
    arrays = {name: np.asarray(v) for name, v in stacked.items()}
    return [{name: v[k] for name, v in arrays.items()} for k in keep]


#: Adam steps per compiled call: a whole chunk runs inside one XLA cluster (no Python per step),
#: and a non-finite step is found within a chunk's time. The last chunk runs fewer steps through
#: the same compiled function (the step count is an input, the noise padded to the chunk).
CHUNK = 500

#: ``loss_parts(weights, batch, noise)``: the objective's scalar parts (``loss`` the one minimised).
LossParts = Callable[..., dict[str, tf.Tensor]]


def _flat(weights: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """``{"group/key": weight}``: one namespace for Adam, as offline_options' training keeps it."""
    return {f"{group}/{key}": w for group, ws in weights.items() for key, w in ws.items()}


def _nested(flat: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    nested: dict[str, dict[str, Any]] = {}
    for name, w in flat.items():
        group, key = name.split("/", 1)
        nested.setdefault(group, {})[key] = w
    return nested


@functools.cache
def _compiled_chunk(
    loss_parts: LossParts, names: tuple[str, ...], clipped: bool, jit_compile: bool
) -> Callable[..., Any]:
    """Up to ``chunk`` Adam steps on ``loss_parts`` as one compiled call (cached per structure).

    Each step: the loss parts and their gradient on the whole batch; if any part or gradient
    entry is not finite the loop stops *before* that step's update (status 1); else the gradient
    is clipped to ``clipnorm`` (global norm, when ``clipped``) and Adam steps *down* it
    (:func:`opt_suite.objective.adam.adam_ascent_all` up the negated gradient: the package's one
    Adam). Returns (weights, moments, parts per step [size, P] (row ``done`` is the bad step's
    when status is 1), steps done, status).
    """

    def run(flat, moments, first_step, count, batch, noise, learning_rate, clipnorm, size):
        rows = tf.TensorArray(tf.float32, size=size, element_shape=[len(names)])
        done, status = tf.constant(0), tf.constant(0)
        for i in tf.range(count):
            step_noise = tf.nest.map_structure(lambda n: n[i], noise)  # noqa: B023
            with tf.GradientTape() as tape:
                tape.watch(flat)
                parts = loss_parts(_nested(flat), batch, step_noise)
            grads = tape.gradient(
                parts["loss"], flat, unconnected_gradients=tf.UnconnectedGradients.ZERO
            )
            row = tf.stack([tf.cast(parts[name], tf.float32) for name in names])
            norm = tf.linalg.global_norm(list(grads.values()))  # NaN/inf if any entry is
            rows = rows.write(i, row)  # the bad step's row too: the error shows it
            if not tf.reduce_all(tf.math.is_finite(row)) or not tf.math.is_finite(norm):
                status = tf.constant(1)
                break
            if clipped:
                scale = tf.minimum(1.0, clipnorm / tf.maximum(norm, clipnorm))
                grads = {k: g * scale for k, g in grads.items()}
            flat, moments = adam_ascent_all(
                flat, {k: -g for k, g in grads.items()}, moments, first_step + i + 1, learning_rate
            )
            done = i + 1
        return flat, moments, rows.stack(), done, status

    return tf.function(run, jit_compile=jit_compile, autograph=True)


def fit(
    method: str,
    initial: dict[str, dict[str, np.ndarray]],
    loss_parts: LossParts,
    names: tuple[str, ...],
    batch: Any,
    iterations: int,
    learning_rate: float,
    *,
    step_noise: Callable[[int], Any] | None = None,
    global_clipnorm: float | None = None,
    jit_compile: bool = True,
) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, np.ndarray]]:
    """Full-batch Adam for ``iterations`` steps, compiled; (trained weights, per-step curves).

    The steps run in chunks of :data:`CHUNK` inside one compiled function (XLA by default),
    traced once per cell (per loss, structure and input shapes), never per step; the package's
    Adam (:mod:`opt_suite.objective.adam`) steps down the gradient.

    Args:
      method: named in errors.
      initial: weight groups (name -> array) to train.
      loss_parts: ``loss_parts(weights, batch, noise)`` -> scalar tensors, ``loss`` among
        ``names``; hashable (a module-level function, or a ``functools.partial`` kept by the
        caller: one compiled function per object).
      names: the parts recorded per step (their curves), ``loss`` among them.
      batch: tensors every step sees.
      iterations: steps.
      learning_rate: Adam's step size.
      step_noise: step i's extra inputs (a nest of float32 arrays, drawn in step order, e.g.
        its Gumbel noise); None: none.
      global_clipnorm: clip the gradients' global norm (None: no clipping).
      jit_compile: compile the chunk with XLA (False: an ordinary TensorFlow graph). The callers
        pass :func:`baselines.xla.xla_pays` of their inputs: not on frames.

    Raises:
      FloatingPointError: the loss or a gradient is not finite at some step (no weight is read;
        the bad step is not applied).
    """
    size = min(CHUNK, iterations)
    run = _compiled_chunk(loss_parts, tuple(names), global_clipnorm is not None, jit_compile)
    flat = {k: tf.constant(v) for k, v in _flat(initial).items()}
    moments = zero_moments(flat)
    rate = tf.constant(learning_rate, tf.float32)
    clipnorm = tf.constant(global_clipnorm or 0.0, tf.float32)
    rows: list[np.ndarray] = []
    for first in range(0, iterations, size):
        count = min(size, iterations - first)
        noise = _chunk_noise(step_noise, first, count, size)
        flat, moments, chunk_rows, done, status = run(
            flat,
            moments,
            tf.constant(first),
            tf.constant(count),
            batch,
            noise,
            rate,
            clipnorm,
            size,
        )
        chunk_rows, done = chunk_rows.numpy(), int(done)
        rows.append(chunk_rows[:done])
        if int(status) != 0:
            bad = first + done
            values = {name: float(v) for name, v in zip(names, chunk_rows[done], strict=True)}
            raise FloatingPointError(
                f"{method}: the loss or its gradient is not finite at iteration {bad + 1} "
                f"({values}); no options are returned"
            )
    curves = np.concatenate(rows).astype(np.float64)
    weights = {g: {k: w.numpy() for k, w in ws.items()} for g, ws in _nested(flat).items()}
    return weights, {name: curves[:, j] for j, name in enumerate(names)}


def _chunk_noise(step_noise: Callable[[int], Any] | None, first: int, count: int, size: int) -> Any:
    """Steps first..first+count-1's noise stacked [size, ...] (zeros after ``count``), or ()."""
    if step_noise is None:
        return ()
    draws = [step_noise(first + i) for i in range(count)]
    stacked = tf.nest.map_structure(lambda *xs: np.stack(xs), *draws)
    return tf.nest.map_structure(lambda x: tf.constant(padded(x, size, axis=0)), stacked)
