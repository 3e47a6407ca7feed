"""Transitions of a uniform-random policy on the train tasks, within a declared frame budget.

Covering options (``graph: random_walk``) and the Laplacian options learn from the same thing: the
steps of a uniformly random policy (the random walk of Jinnai et al. 2019's online setting, and the
uniform-random data of Wu, Tucker & Nachum 2019 and Gomez et al. 2024). The walk steps envs
from ``context.make_env``, so every step is counted into the discovery's budget and the runner stops
a method that oversteps it (:mod:`opt_suite.methods.budget`).

The budget is split evenly over the train tasks (the first tasks take the remainder); an episode
restarts when it terminates, is truncated, or reaches ``episode_steps``. The actions come from the
discovery seed alone.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from opt_suite.methods.base import DiscoveryContext, discrete_actions

__all__ = ["MAX_WALK_FRAMES", "Walk", "check_walk_budget", "uniform_random_walk"]

#: The longest random walk a method may declare (env steps): 10 million is ~100x what a 40x40 grid
#: needs to be covered. Methods bound their ``walk_frames`` params with it.
MAX_WALK_FRAMES = 10_000_000


@dataclasses.dataclass(frozen=True)
class Walk:
    """Transitions (s_t, a_t, s_t+1) of a random walk, stacked over every task.

    Attributes:
      observations: [n, ...] the observations s_t.
      actions: int64 [n].
      next_observations: [n, ...] the observations s_t+1 (the terminal one where an episode ended).
      episodes: how many episodes (resets) the walk took.
      frames: emulator frames the envs reported (``info["frames"]``, else one per step).
    """

    observations: np.ndarray
    actions: np.ndarray
    next_observations: np.ndarray
    episodes: int
    frames: int

    def __len__(self) -> int:
        return len(self.actions)


def check_walk_budget(method: str, frames: int, context: DiscoveryContext) -> None:
    """Refuse a walk longer than the discovery's interaction budget, before stepping anything.

    Raises:
      ValueError: ``frames`` above ``context.interaction_budget`` (naming both keys).
    """
    if frames > context.interaction_budget:
        raise ValueError(
            f"{method}: params.walk_frames = {frames} is above evaluation.interaction_budget = "
            f"{context.interaction_budget}; lower one or raise the other"
        )


def uniform_random_walk(
    context: DiscoveryContext, method: str, steps: int, episode_steps: int
) -> Walk:
    """``steps`` env steps of a uniform-random policy over ``context.train_tasks``.

    Args:
      context: the discovery context (its seed draws the actions; its envs count the steps).
      method: the calling method's name, for error messages.
      steps: env steps in total (checked against the budget by :func:`check_walk_budget`).
      episode_steps: the longest episode before a reset.

    Raises:
      ValueError: no train tasks, a budget above ``context.interaction_budget``, or steps fewer
        than the train tasks (a task would get no transition).
    """
    check_walk_budget(method, steps, context)
    tasks = list(context.train_tasks)
    if not tasks:
        raise ValueError(f"{method}: needs at least one train task, got none")
    if steps < len(tasks):
        raise ValueError(f"{method}: a walk of {steps} steps cannot visit {len(tasks)} train tasks")
    num_actions = discrete_actions(context.family, method)
    rng = np.random.default_rng(context.seed)
    share = [steps // len(tasks) + (i < steps % len(tasks)) for i in range(len(tasks))]
    observations, actions, next_observations = [], [], []
    episodes, frames_before = 0, context.budget.frames
    for task, task_steps in zip(tasks, share, strict=True):
        env = context.make_env(task)
        try:
            obs, _ = env.reset(seed=int(rng.integers(2**31)))
            episodes, length = episodes + 1, 0
            for _ in range(task_steps):
                action = int(rng.integers(num_actions))
                next_obs, _, terminated, truncated, _ = env.step(action)
                observations.append(obs)
                actions.append(action)
                next_observations.append(next_obs)
                length += 1
                if terminated or truncated or length >= episode_steps:
                    obs, _ = env.reset(seed=int(rng.integers(2**31)))
                    episodes, length = episodes + 1, 0
                else:
                    obs = next_obs
        finally:
            env.close()
    return Walk(
        np.asarray(observations),
        np.asarray(actions, dtype=np.int64),
        np.asarray(next_observations),
        episodes,
        context.budget.frames - frames_before,
    )
