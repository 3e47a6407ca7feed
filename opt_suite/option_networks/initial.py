"""Untrained options, drawn exactly as Algorithm 1 line 6 draws a newly introduced option.

Garcia, Nota & Thomas (2020) compare learned options with "options before training" (Sec. 5): the
same networks at their initial weights. Both sides draw from here, so they cannot drift apart:
``offline_options`` introduces its r-th option with :func:`new_option` (seed :func:`option_seed`
of the run's seed, index r), and ``random_options`` builds its r-th option the same way, tabulated
over every state (:func:`initial_tabular_options`) or as a keras conv network on frames
(:func:`initial_frame_options`).

Seeds: the r-th introduced option and the r-th policy over options draw their initial weights from
fixed children of the run's seed (unlike ``spawn``, a child does not depend on earlier spawns).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import tensorflow as tf

from opt_suite.families.base import TabularModel, Task, TaskFamily
from opt_suite.option_networks.conv import FrameFeatures, keras_option_network
from opt_suite.option_networks.features import FeatureKind, StateFeatures, state_features
from opt_suite.option_networks.networks import init_option, option_outputs
from opt_suite.options import TabularOptionSet
from opt_suite.options.network import NetworkOptionSet

__all__ = [
    "option_seed",
    "policy_seed",
    "new_option",
    "tabulate",
    "frame_option_set",
    "task_actions",
    "initial_tabular_options",
    "initial_frame_options",
    "initial_options_over",
    "initial_vector_options",
]

_OPTION_STREAM, _POLICY_STREAM = 0, 1


def _child(seed: np.random.SeedSequence, *keys: int) -> np.random.SeedSequence:
    """A fixed child of ``seed`` (unlike ``spawn``, it does not depend on earlier spawns)."""
    return np.random.SeedSequence(seed.entropy, spawn_key=(*seed.spawn_key, *keys))


def option_seed(seed: np.random.SeedSequence, index: int) -> np.random.SeedSequence:
    """Seed of the initial weights of the ``index``-th introduced option (0-based)."""
    return _child(seed, _OPTION_STREAM, index)


def policy_seed(seed: np.random.SeedSequence, index: int) -> np.random.SeedSequence:
    """Seed of the initial weights of π in round ``index`` (0-based)."""
    return _child(seed, _POLICY_STREAM, index)


def new_option(
    features: StateFeatures,
    num_actions: int,
    hidden_sizes: Sequence[int],
    seed: np.random.SeedSequence,
    index: int,
) -> dict[str, np.ndarray]:
    """Algorithm 1 line 6: the weights (φ, ψ) of a freshly initialised option o' = (μ'_φ, β'_ψ)."""
    return init_option(features, hidden_sizes, num_actions, option_seed(seed, index))


def tabulate(
    option: dict[str, np.ndarray], features: StateFeatures, states: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(μ [len(states), A], β [len(states)]) of an option in float64, rows of μ summing to 1."""
    coords = None if features.coords is None else tf.constant(features.coords[states])
    log_mu, beta = option_outputs(option, tf.constant(states, tf.int32), coords)
    mu = np.exp(log_mu.numpy().astype(np.float64))
    return mu / mu.sum(axis=-1, keepdims=True), beta.numpy().astype(np.float64)


def frame_option_set(
    weights: Sequence[dict[str, np.ndarray]],
    frame_shape: Sequence[int],
    num_actions: int,
    prefix: str,
) -> NetworkOptionSet:
    """Conv option weights as a network option set of keras models named ``{prefix}-{i}``."""
    names = tuple(f"{prefix}-{i}" for i in range(len(weights)))
    networks = [
        keras_option_network(w, frame_shape, name) for w, name in zip(weights, names, strict=True)
    ]
    return NetworkOptionSet(networks, num_actions, frame_shape, names)


def task_actions(family: Any, task: Any, method: str) -> int:
    """A, from the action space of ``task``'s env; raises ValueError for non-discrete actions."""
    env = family.make_env(task)
    try:
        space = env.action_space
    finally:
        env.close()
    if not hasattr(space, "n"):
        raise ValueError(f"{method}: needs discrete actions, got {space}")
    return int(space.n)


def initial_tabular_options(
    family: TaskFamily,
    model: TabularModel,
    features: FeatureKind | Literal["frames"],
    hidden_sizes: Sequence[int],
    count: int,
    seed: np.random.SeedSequence,
) -> TabularOptionSet:
    """``count`` untrained MLP options, tabulated over every state of ``model``.

    The i-th option here is bit-for-bit the i-th option Algorithm 1 would introduce with the same
    ``seed``, ``features`` and ``hidden_sizes`` before any training.

    Args:
      family: the family ``model`` belongs to (named in errors).
      model: any task's exact model of the family (gives the states and their features).
      features: the networks' input (see :mod:`opt_suite.option_networks.features`; ``frames``
        is an error here: see :func:`initial_frame_options`).
      hidden_sizes: the networks' hidden layers.
      count: number of options, >= 0.
      seed: the seed a ``discover`` run would get.
    """
    if count < 0:
        raise ValueError(f"initial options: count must be >= 0, got {count}")
    if model is None:
        raise ValueError(f"initial options: family {family.name!r} has no tabular model")
    return initial_options_over(
        state_features(model, features), model.num_actions, hidden_sizes, count, seed
    )


def initial_options_over(
    state_input: StateFeatures,
    num_actions: int,
    hidden_sizes: Sequence[int],
    count: int,
    seed: np.random.SeedSequence,
) -> TabularOptionSet:
    """``count`` untrained MLP options tabulated over every state of ``state_input``.

    The states are a model's (:func:`initial_tabular_options`) or a ``Discrete`` observation
    space's indices (:func:`~opt_suite.option_networks.features.index_features`, no model).
    """
    if count < 0:
        raise ValueError(f"initial options: count must be >= 0, got {count}")
    states = np.arange(state_input.num_states, dtype=np.int32)
    tables = [
        tabulate(new_option(state_input, num_actions, hidden_sizes, seed, i), state_input, states)
        for i in range(count)
    ]
    if not tables:
        return TabularOptionSet.empty(state_input.num_states, num_actions)
    return TabularOptionSet(np.stack([m for m, _ in tables]), np.stack([b for _, b in tables]))


def initial_vector_options(
    dim: int,
    num_actions: int,
    hidden_sizes: Sequence[int],
    count: int,
    seed: np.random.SeedSequence,
    prefix: str = "random",
) -> NetworkOptionSet:
    """``count`` untrained MLP options on vectors of width ``dim``, as Algorithm 1 line 6 draws.

    Bit-for-bit the options ``offline_options`` introduces on vector observations (whose
    features are the demonstrated vectors: only their width enters the initial weights).
    """
    from opt_suite.option_networks.networks import keras_vector_option_network

    shape_only = StateFeatures(0, use_index=False, coords=np.zeros((0, dim), np.float32))
    weights = [new_option(shape_only, num_actions, hidden_sizes, seed, i) for i in range(count)]
    names = tuple(f"{prefix}-{i}" for i in range(count))
    networks = [keras_vector_option_network(w, n) for w, n in zip(weights, names, strict=True)]
    return NetworkOptionSet(networks, num_actions, (dim,), names)


def initial_frame_options(
    family: TaskFamily,
    task: Task,
    count: int,
    seed: np.random.SeedSequence,
    prefix: str = "random",
) -> NetworkOptionSet:
    """``count`` untrained conv options on ``task``'s frames, exactly as Algorithm 1 line 6 draws.

    Conv options have no hidden sizes to choose (their layers are fixed, see ``conv.py``).
    """
    actions = task_actions(family, task, "random_options")
    env = family.make_env(task)
    try:
        frame_shape = tuple(int(d) for d in env.observation_space.shape)
    finally:
        env.close()
    features = FrameFeatures.of(None, frame_shape)
    weights = [new_option(features, actions, (), seed, i) for i in range(count)]
    return frame_option_set(weights, frame_shape, actions, prefix)
