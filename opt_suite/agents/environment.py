"""A tf-agents ``PyEnvironment`` over gymnasium envs (gymnasium 1.x: 5-tuple step, reset(seed=)).

tf-agents 0.18's ``suite_gym`` wraps the old gym API (4-tuple step, ``env.seed``); this adapter
speaks gymnasium's. It is batched over a gymnasium ``VectorEnv`` (or one env, unbatched) and maps
gymnasium's episode ends onto tf-agents' time steps:

- ``terminated`` -> ``LAST`` with discount 0 (no value after the end);
- ``truncated`` (a time or frame cap) -> ``LAST`` with discount 1, so agents that bootstrap from
  the last observation treat the cut as a cut, not as an end;
- the step after a ``LAST`` -> ``FIRST`` with reward 0 and discount 1. That is exactly gymnasium's
  next-step autoreset (the vector env resets that sub-env and ignores its action), which is why the
  vector env must use ``AutoresetMode.NEXT_STEP``, and tf-agents' convention for batched envs that
  reset themselves.

Specs are derived from the spaces: a ``Box`` observation space becomes a ``BoundedArraySpec`` of
its shape, dtype and bounds; ``Discrete(n, start)`` actions a scalar int64 ``BoundedArraySpec``
[start, start + n - 1]; rewards and discounts are float32 scalars.

Budgets and curves: :attr:`GymnasiumPyEnvironment.frames` counts the emulator frames the env
reported in ``info["frames"]`` (resets included), or one per sub-env step for envs that report
none; every episode that ends is recorded with its return and that count
(:meth:`GymnasiumPyEnvironment.pop_episodes`), however the env is driven (tf-agents' drivers step
it inside TensorFlow).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import gymnasium
import numpy as np

from opt_suite._tf import tensorflow

tensorflow()  # tf-agents imports TensorFlow; do it quietly first

from tf_agents.environments import py_environment  # noqa: E402
from tf_agents.specs import array_spec  # noqa: E402
from tf_agents.trajectories import time_step as ts  # noqa: E402

from opt_suite.agents import _compat  # noqa: E402

_compat.apply()

__all__ = ["EpisodeEnd", "GymnasiumPyEnvironment", "space_spec"]


class EpisodeEnd(NamedTuple):
    """An episode that ended: its undiscounted return, and the adapter's frame count at its end."""

    episode_return: float
    frames: int


def space_spec(space: gymnasium.Space, name: str) -> array_spec.ArraySpec:
    """The tf-agents spec of one gymnasium space (``Box`` or ``Discrete``).

    Raises:
      TypeError: any other space (tuple, dict, multi-discrete: not needed by opt_suite's families).
    """
    if isinstance(space, gymnasium.spaces.Discrete):
        start = int(space.start)
        return array_spec.BoundedArraySpec(
            (), np.int64, minimum=start, maximum=start + int(space.n) - 1, name=name
        )
    if isinstance(space, gymnasium.spaces.Box):
        low, high = space.low, space.high
        # One scalar bound when the bound is uniform (readable specs, cheap checks).
        low = low.flat[0] if np.all(low == low.flat[0]) else low
        high = high.flat[0] if np.all(high == high.flat[0]) else high
        return array_spec.BoundedArraySpec(space.shape, space.dtype, low, high, name=name)
    raise TypeError(f"no tf-agents spec for a {type(space).__name__} {name} space: {space}")


class GymnasiumPyEnvironment(py_environment.PyEnvironment):
    """tf-agents' view of a gymnasium env or next-step-autoreset vector env; see the module doc.

    Args:
      env: a ``gymnasium.Env`` (unbatched: time steps without a batch axis) or a
        ``gymnasium.vector.VectorEnv`` with next-step autoreset (batched: ``batch_size`` =
        ``num_envs``).
      seed: the seed of the first reset (a vector env's sub-env i gets ``seed + i``); later resets
        continue the seeded streams. None: unseeded.

    Raises:
      ValueError: a vector env with another autoreset mode.
    """

    def __init__(self, env: gymnasium.Env | gymnasium.vector.VectorEnv, seed: int | None = None):
        super().__init__(handle_auto_reset=False)
        if isinstance(env, gymnasium.vector.VectorEnv):
            mode = env.metadata.get("autoreset_mode", gymnasium.vector.AutoresetMode.NEXT_STEP)
            if mode != gymnasium.vector.AutoresetMode.NEXT_STEP:
                raise ValueError(
                    "GymnasiumPyEnvironment needs a vector env with next-step autoreset "
                    f"(tf-agents' convention), got {mode}"
                )
            self._vector, self._batched = env, True
            single_obs, single_act = env.single_observation_space, env.single_action_space
        else:
            self._vector = gymnasium.vector.SyncVectorEnv(
                [lambda: env], autoreset_mode=gymnasium.vector.AutoresetMode.NEXT_STEP
            )
            self._batched = False
            single_obs, single_act = env.observation_space, env.action_space
        self._num_envs = int(self._vector.num_envs)
        self._observation_spec = space_spec(single_obs, "observation")
        self._action_spec = space_spec(single_act, "action")
        self._seed = seed
        self._done = np.zeros(self._num_envs, dtype=bool)
        self._info: dict[str, Any] = {}
        self._returns: np.ndarray = np.zeros(self._num_envs)
        self._episodes: list[EpisodeEnd] = []
        self.frames = 0

    # tf-agents API ---------------------------------------------------------------------------

    @property
    def batched(self) -> bool:
        """Whether time steps carry a leading batch axis (a vector env was given)."""
        return self._batched

    @property
    def batch_size(self) -> int | None:
        """``num_envs`` of the vector env, None when unbatched."""
        return self._num_envs if self._batched else None

    @property
    def gymnasium_env(self) -> gymnasium.vector.VectorEnv:
        """The vector env underneath (a one-env ``SyncVectorEnv`` when built from one env)."""
        return self._vector

    def observation_spec(self) -> array_spec.BoundedArraySpec:
        """From the (single) observation space."""
        return self._observation_spec

    def action_spec(self) -> array_spec.BoundedArraySpec:
        """From the (single) action space."""
        return self._action_spec

    def get_info(self) -> dict[str, Any]:
        """The gymnasium ``info`` of the last reset or step (vector env layout)."""
        return self._info

    def seed(self, seed: int | None) -> None:
        """Seed the next reset."""
        self._seed = seed

    def pop_episodes(self) -> list[EpisodeEnd]:
        """The episodes that ended since the last call, in the order they ended."""
        episodes, self._episodes = self._episodes, []
        return episodes

    def close(self) -> None:
        """Close the gymnasium env(s)."""
        self._vector.close()

    def _reset(self) -> ts.TimeStep:
        seed, self._seed = self._seed, None  # later resets continue the seeded streams
        obs, info = self._vector.reset(seed=seed)
        self._count_frames(info, steps=0)
        self._done[:] = False
        self._returns[:] = 0.0
        self._info = info
        step_type = np.full(self._num_envs, ts.StepType.FIRST, dtype=np.int32)
        zeros = np.zeros(self._num_envs, dtype=np.float32)
        return self._time_step(step_type, zeros, zeros + 1.0, obs)

    def _step(self, action: Any) -> ts.TimeStep:
        actions = np.asarray(action, dtype=np.int64).reshape(self._num_envs)
        obs, reward, terminated, truncated, info = self._vector.step(actions)
        restarted = self._done.copy()  # these sub-envs were reset by this step, action ignored
        self._count_frames(info, steps=int((~restarted).sum()))
        ended = (terminated | truncated) & ~restarted
        step_type = np.where(
            restarted, ts.StepType.FIRST, np.where(ended, ts.StepType.LAST, ts.StepType.MID)
        ).astype(np.int32)
        reward = np.where(restarted, 0.0, reward).astype(np.float32)
        discount = np.where(terminated & ~restarted, 0.0, 1.0).astype(np.float32)
        self._returns = np.where(restarted, 0.0, self._returns + reward)
        self._episodes += [
            EpisodeEnd(float(self._returns[i]), self.frames) for i in np.flatnonzero(ended)
        ]
        self._done = ended
        self._info = info
        return self._time_step(step_type, reward, discount, obs)

    # Internals -------------------------------------------------------------------------------

    def _count_frames(self, info: dict[str, Any], steps: int) -> None:
        """Add the frames the sub-envs reported, else ``steps`` (resets are not steps)."""
        if "frames" in info:
            reported = info.get("_frames", np.ones(self._num_envs, dtype=bool))
            self.frames += int(np.asarray(info["frames"])[reported].sum())
        else:
            self.frames += steps

    def _time_step(
        self, step_type: np.ndarray, reward: np.ndarray, discount: np.ndarray, obs: np.ndarray
    ) -> ts.TimeStep:
        obs = np.asarray(obs, dtype=self._observation_spec.dtype)
        if not self._batched:
            return ts.TimeStep(step_type[0], reward[0], discount[0], obs[0])
        return ts.TimeStep(step_type, reward, discount, obs)
