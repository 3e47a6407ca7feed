"""``offline_options`` with ``features: frames``: Algorithm 1 on image demonstrations (Atari).

The same Algorithm 1 and Ĵ as on tables (``algorithm.py``), with convolutional options
(``conv.py``) evaluated on the demonstrations' frames. The result is a network option set: each kept
option as a standard keras model, acted with by calling it (there is no table over every state of
an Atari game).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from opt_suite.methods.base import Discovery, DiscoveryContext
from opt_suite.methods.offline_options.algorithm import learn_options, new_option
from opt_suite.methods.offline_options.conv import (
    FrameFeatures,
    frame_demo_batch,
    keras_option_network,
)
from opt_suite.methods.offline_options.params import Params
from opt_suite.options.network import NetworkOptionSet

__all__ = ["discover_on_frames", "initial_frame_options", "num_actions"]


def num_actions(context_or_family: Any, task: Any, method: str) -> int:
    """A, from the action space of ``task``'s env; raises ValueError for non-discrete actions."""
    env = context_or_family.make_env(task)
    try:
        space = env.action_space
    finally:
        env.close()
    if not hasattr(space, "n"):
        raise ValueError(f"{method}: needs discrete actions, got {space}")
    return int(space.n)


def _option_set(weights, frame_shape, count_actions, prefix) -> NetworkOptionSet:
    names = tuple(f"{prefix}-{i}" for i in range(len(weights)))
    networks = [
        keras_option_network(w, frame_shape, name) for w, name in zip(weights, names, strict=True)
    ]
    return NetworkOptionSet(networks, count_actions, frame_shape, names)


def discover_on_frames(context: DiscoveryContext, params: Params, method: str) -> Discovery:
    """Algorithm 1 on ``context.demonstrations`` (uint8 frames); a network option set."""
    start = time.perf_counter()
    if not context.train_tasks:
        raise ValueError(f"{method}: needs at least one train task, got none")
    actions = num_actions(context.family, context.train_tasks[0], method)
    demos, frames = frame_demo_batch(context.demonstrations, actions)
    features = FrameFeatures.of(frames)
    learned = learn_options(demos, features, actions, params, context.seed)
    options = _option_set(learned.weights, features.frame_shape, actions, "option")
    return learned.discovery(
        options,
        len(context.demonstrations),
        start,
        demonstrated_frames=int(len(frames)),
        frames_bytes=int(frames.nbytes),
    )


def initial_frame_options(
    family: Any,
    task: Any,
    params: Params,
    count: int,
    seed: np.random.SeedSequence,
    prefix: str = "random",
) -> NetworkOptionSet:
    """``count`` untrained conv options, exactly as Algorithm 1 line 6 initialises them."""
    actions = num_actions(family, task, "random_options")
    env = family.make_env(task)
    try:
        frame_shape = tuple(int(d) for d in env.observation_space.shape)
    finally:
        env.close()
    features = FrameFeatures.of(None, frame_shape)
    weights = [new_option(features, actions, params, seed, i) for i in range(count)]
    return _option_set(weights, frame_shape, actions, prefix)
