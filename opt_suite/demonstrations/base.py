"""The demonstration-source contract: where the demonstrations every method learns from come from.

A source turns the train tasks into trajectories: an expert that plans on the exact model
(``optimal``, the default), a tabular Q-learning expert (``q_learning``), a trained agent, or a
dataset someone brings (``minari``). The spec chooses one::

    demonstrations:
      source: optimal             # opt-suite list shows the registered sources
      params: {gamma: 0.99}       # the source's Params
      trajectories_per_task: 1
      max_steps: 2000

Sources register through the ``opt_suite.demonstration_sources`` entry point group (name = spec
``demonstrations.source``) and declare what they need from the family in ``requires`` (see
:mod:`opt_suite.families.capabilities`); ``opt-suite validate`` rejects a source the family cannot
serve. Every trajectory must end at a goal: a demonstration that does not is an error naming the
task, never a silently shorter dataset.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from opt_suite.families.base import Task, TaskFamily
from opt_suite.trajectory import Trajectory

__all__ = ["DemonstrationError", "DemonstrationSource", "base_env", "child_seed", "episode_caps"]


def base_env(env: Any) -> Any:
    """The env the family's id names, unwrapped (what a planner reads), for a task's env."""
    found = env.unwrapped
    inner = getattr(found, "inner", None)  # the gymnasium family's task env wraps the named env
    return found if inner is None else inner


def episode_caps(env: Any, family: TaskFamily, max_steps: int) -> str:
    """Every step cap that can cut a demonstration on ``env``, as the spec keys that set them.

    ``demonstrations.max_steps``, the family's episode cap (``max_episode_steps`` or Atari's
    ``max_episode_frames``) and the env's own (MiniGrid's ``max_steps``, a kwarg of the env).
    """
    parts = [f"demonstrations.max_steps = {max_steps}"]
    for key in ("max_episode_steps", "max_episode_frames"):
        value = getattr(family.params, key, None)
        if isinstance(value, int):
            parts.append(f"family.params.{key} = {value}")
    own = getattr(base_env(env), "max_steps", None)
    if isinstance(own, int):
        parts.append(f"the env's own max_steps = {own} (family.params.kwargs: {{max_steps: N}})")
    return ", ".join(parts)


class DemonstrationError(RuntimeError):
    """Demonstrations could not be produced: no model, an expert that fails, a bad dataset."""


def child_seed(seed: np.random.SeedSequence, *key: int) -> np.random.SeedSequence:
    """A child of ``seed`` named by ``key`` (unlike ``spawn``, it does not mutate ``seed``)."""
    return np.random.SeedSequence(seed.entropy, spawn_key=(*seed.spawn_key, *key))


class DemonstrationSource(abc.ABC):
    """A source of demonstrations. Subclass, set the class attributes, implement :meth:`collect`.

    Attributes:
      name: the spec name (``demonstrations.source``).
      description: one line for ``opt-suite list`` (default "": the docstring's first line).
      Params: frozen dataclass of its parameters (``demonstrations.params``).
      requires: what it needs from the family (e.g. an exact model).
      uses_checkpoints: whether :meth:`collect` takes a ``checkpoint_dir`` keyword (a source that
        trains agents stores them there, so a rerun that recomputes the demonstrations reuses them).
    """

    name: ClassVar[str]
    description: ClassVar[str] = ""
    Params: ClassVar[type]
    requires: ClassVar[frozenset[str]] = frozenset()
    uses_checkpoints: ClassVar[bool] = False

    @classmethod
    def requirements(cls, params: Any) -> frozenset[str]:
        """What the source needs from the family with these params (default: ``requires``)."""
        return cls.requires

    @classmethod
    def network_memory(
        cls, params: Any, observation_shape: tuple[int, ...], num_actions: int
    ) -> tuple[int, str] | None:
        """(bytes, what) of the networks the source builds on these observations, or None.

        Counted by the work estimate on every family (the PPO agents: weights with Adam's
        moments and one update's batch). Default: None (no network).
        """
        return None

    @classmethod
    def training_steps(cls, params: Any, max_steps: int) -> int:
        """At most how many env steps (frames) the source spends per train task before sampling.

        Its experts' training: the work estimate (``opt-suite validate``) adds it per train task
        and seed to the steps of the demonstrations themselves. Default: 0 (no training).

        Args:
          params: the source's params.
          max_steps: ``demonstrations.max_steps``, the cap of an episode.
        """
        return 0

    @classmethod
    def check_family(cls, params: Any, family: Any) -> list[tuple[str, str]]:
        """What in ``params`` cannot work with ``family``, as (key below the params, message).

        ``opt-suite validate`` reports each at its spec key (e.g. ``methods[2].params.features``)
        instead of the generic capability message; default: nothing.
        """
        return []

    def __init__(self, params: Any = None) -> None:
        self.params = self.Params() if params is None else params

    @abc.abstractmethod
    def collect(
        self,
        family: TaskFamily,
        train_tasks: Sequence[Task],
        trajectories_per_task: int,
        max_steps: int,
        seed: np.random.SeedSequence,
    ) -> list[Trajectory]:
        """``trajectories_per_task`` trajectories on each train task, each ending at a goal.

        Deterministic in ``seed``. Trajectories carry their task's ``task_id``. A source with
        ``uses_checkpoints = True`` is also given a keyword ``checkpoint_dir: str | None`` (the
        run's ``experts/``); other sources are called without it.

        Raises:
          DemonstrationError: naming the task (or dataset) that could not be demonstrated.
        """
