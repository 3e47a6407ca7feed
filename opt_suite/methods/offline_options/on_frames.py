"""``offline_options`` with ``features: frames``: Algorithm 1 on image demonstrations (Atari).

The same Algorithm 1 and Ĵ as on tables (``algorithm.py``), with convolutional options
(``opt_suite.option_networks.conv``) evaluated on the demonstrations' frames. The result is a
network option set: each kept option as a standard keras model, acted with by calling it (there is
no table over every state of an Atari game).
"""

from __future__ import annotations

import time

from opt_suite.methods.base import Discovery, DiscoveryContext
from opt_suite.methods.offline_options.algorithm import learn_options
from opt_suite.methods.offline_options.demos import frame_demo_batch
from opt_suite.methods.offline_options.params import Params
from opt_suite.option_networks.conv import FrameFeatures
from opt_suite.option_networks.initial import frame_option_set, task_actions

__all__ = ["discover_on_frames"]


def discover_on_frames(context: DiscoveryContext, params: Params, method: str) -> Discovery:
    """Algorithm 1 on ``context.demonstrations`` (uint8 frames); a network option set."""
    start = time.perf_counter()
    if not context.train_tasks:
        raise ValueError(f"{method}: needs at least one train task, got none")
    actions = task_actions(context.family, context.train_tasks[0], method)
    demos, frames = frame_demo_batch(context.demonstrations, actions)
    features = FrameFeatures.of(frames)
    learned = learn_options(demos, features, actions, params, context.seed)
    options = frame_option_set(learned.weights, features.frame_shape, actions, "option")
    return learned.discovery(
        options,
        len(context.demonstrations),
        start,
        demonstrated_frames=int(len(frames)),
        frames_bytes=int(frames.nbytes),
    )
