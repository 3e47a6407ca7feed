"""Batches of envs of one task that step *any subset* of their sub-envs: what option acting needs.

A batched test-time agent picks one decision per sub-env; a primitive is one step, an option runs
until it terminates. So in a batched step each sub-env runs for its own number of primitive steps,
and on every tick only the sub-envs still running an option act — gymnasium's vector envs step
all their sub-envs every time, so they do not fit. :class:`EnvBatch` is the small protocol the
option-augmented env (``opt_suite.learners.option_env``) drives instead:

- ``reset_at(i, seed)``: reset sub-env i (seeded on the first reset, ``None`` later to continue
  its stream) and return its observation and the emulator frames the reset used;
- ``send_at(i, action)`` then ``recv_at(i)``: start one step of sub-env i, then collect it (its
  observation, reward, terminated and truncated flags and frames). Between the two, other sub-envs
  may be sent and received: a batch that steps on threads runs every sent sub-env at once, so a
  caller keeps as many in flight as it can (the option env sends a sub-env's next step as soon as
  its last one is received, rather than waiting for a whole tick).

:func:`step_rows` steps several sub-envs at once through these: all sent, then all received.

Every step of a sub-env is cut (truncated) after ``max_steps`` primitive steps of its episode, as
gymnasium's ``TimeLimit`` does. Frames are the env's ``info["frames"]`` (one per step, zero per
reset, for envs that report none).

:class:`SequentialBatch` serves any gymnasium env by stepping the rows one after the other. A family
can ship a faster batch by overriding :meth:`TaskFamily.make_env_batch` (the Atari family steps its
emulators on C++ threads, :mod:`opt_suite.families.atari.threads`); the default is the sequential
one (:func:`sequential_batch`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, runtime_checkable

import gymnasium
import numpy as np

if TYPE_CHECKING:
    from opt_suite.families.base import TaskFamily

__all__ = [
    "BatchStep",
    "EnvBatch",
    "RowStep",
    "SequentialBatch",
    "make_env_batch",
    "sequential_batch",
    "step_rows",
]


@dataclasses.dataclass(frozen=True)
class BatchStep:
    """The result of :func:`step_rows` for k rows (each array's first axis is the row).

    Attributes:
      observations: [k, *observation shape].
      rewards: float64 [k].
      terminated: bool [k].
      truncated: bool [k] (never set where ``terminated`` is).
      frames: int64 [k], emulator frames each row's step used.
    """

    observations: np.ndarray
    rewards: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    frames: np.ndarray


class RowStep(NamedTuple):
    """One sub-env's step: what ``env.step`` returns, with its frames instead of the info dict."""

    observation: np.ndarray
    reward: float
    terminated: bool
    truncated: bool  # never set where ``terminated`` is
    frames: int


def step_rows(batch: EnvBatch, rows: np.ndarray, actions: np.ndarray) -> BatchStep:
    """Step the sub-envs ``rows`` (distinct) with ``actions``: all sent, then all received."""
    order = np.asarray(rows, np.int64).tolist()
    for i, a in zip(order, np.asarray(actions).tolist(), strict=True):
        batch.send_at(i, a)
    steps = [batch.recv_at(i) for i in order]
    return BatchStep(
        np.array([s.observation for s in steps]),
        np.array([s.reward for s in steps], np.float64),
        np.array([s.terminated for s in steps], bool),
        np.array([s.truncated for s in steps], bool),
        np.array([s.frames for s in steps], np.int64),
    )


@runtime_checkable
class EnvBatch(Protocol):
    """n envs of one task, stepped a subset at a time (see the module docstring)."""

    @property
    def num_envs(self) -> int:
        """The number of sub-envs."""
        ...

    @property
    def single_observation_space(self) -> gymnasium.spaces.Space:
        """One sub-env's observation space."""
        ...

    @property
    def single_action_space(self) -> gymnasium.spaces.Space:
        """One sub-env's action space."""
        ...

    def reset_at(self, i: int, seed: int | None) -> tuple[np.ndarray, int]:
        """Reset sub-env ``i``: (its observation, the frames the reset used)."""
        ...

    def send_at(self, i: int, action: int) -> None:
        """Start one step of sub-env ``i``."""
        ...

    def recv_at(self, i: int) -> RowStep:
        """Collect the step of sub-env ``i`` sent last."""
        ...

    def close(self) -> None:
        """Release the sub-envs."""
        ...


class SequentialBatch:
    """Any gymnasium envs as an :class:`EnvBatch`: the rows are stepped one after the other.

    Args:
      envs: n envs of one task (wrap them in ``TimeLimit`` for an episode cap in steps).
    """

    def __init__(self, envs: Sequence[gymnasium.Env]) -> None:
        if not envs:
            raise ValueError("SequentialBatch: no envs")
        self._envs = list(envs)
        self.num_envs = len(self._envs)
        self.single_observation_space = self._envs[0].observation_space
        self.single_action_space = self._envs[0].action_space
        self._sent: dict[int, tuple] = {}

    def reset_at(self, i: int, seed: int | None) -> tuple[np.ndarray, int]:
        """``envs[i].reset(seed=seed)``."""
        obs, info = self._envs[i].reset(seed=seed)
        return obs, int(info.get("frames", 0))

    def send_at(self, i: int, action: int) -> None:
        """``envs[i].step(action)``, at once (kept for :meth:`recv_at`)."""
        self._sent[i] = self._envs[i].step(int(action))

    def recv_at(self, i: int) -> RowStep:
        """The step :meth:`send_at` made."""
        obs, reward, terminated, truncated, info = self._sent.pop(i)
        terminated = bool(terminated)
        frames = int(info.get("frames", 1))
        return RowStep(obs, float(reward), terminated, bool(truncated) and not terminated, frames)

    def close(self) -> None:
        """Close every env."""
        for env in self._envs:
            env.close()


def make_env_batch(family: TaskFamily, task: Any, num_envs: int, max_steps: int) -> EnvBatch:
    """``family.make_env_batch(task, num_envs, max_steps)``, its counts checked first.

    The default (:meth:`TaskFamily.make_env_batch`) is :func:`sequential_batch`.
    """
    if max_steps < 1 or num_envs < 1:
        raise ValueError(f"make_env_batch: expected num_envs, max_steps >= 1, got {num_envs}, "
                         f"{max_steps}")  # fmt: skip
    return family.make_env_batch(task, num_envs, max_steps)


def sequential_batch(family: TaskFamily, task: Any, num_envs: int, max_steps: int) -> EnvBatch:
    """``num_envs`` of ``family.make_env(task)``, each in a ``TimeLimit`` of ``max_steps``."""
    return SequentialBatch(
        [
            gymnasium.wrappers.TimeLimit(family.make_env(task), max_episode_steps=max_steps)
            for _ in range(num_envs)
        ]
    )
