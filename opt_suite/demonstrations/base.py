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
import dataclasses
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from opt_suite.component import Component, adapt_entry, adapt_memory
from opt_suite.families.base import Task, TaskFamily
from opt_suite.trajectory import Trajectory

__all__ = [
    "DemonstrationError",
    "DemonstrationSource",
    "SourceContext",
    "base_env",
    "child_seed",
    "episode_caps",
]


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
    success = getattr(family, "success_return", None)  # the gymnasium family's (solved_when_cut)
    if isinstance(success, float):
        parts.append(
            f"a cut episode succeeds at a return of {success:g} x the task's reward scale "
            "(family.params.success_return)"
        )
    return ", ".join(parts)


class DemonstrationError(RuntimeError):
    """Demonstrations could not be produced: no model, an expert that fails, a bad dataset."""


def child_seed(seed: np.random.SeedSequence, *key: int) -> np.random.SeedSequence:
    """A child of ``seed`` named by ``key`` (unlike ``spawn``, it does not mutate ``seed``)."""
    return np.random.SeedSequence(seed.entropy, spawn_key=(*seed.spawn_key, *key))


@dataclasses.dataclass(frozen=True, eq=False)
class SourceContext:
    """Everything a demonstration source is given.

    A new capability is a new field here (with a default), never a new argument of
    :meth:`DemonstrationSource.collect`.

    Attributes:
      family: the task family.
      train_tasks: the train tasks to demonstrate.
      trajectories_per_task: trajectories wanted on each train task.
      max_steps: primitive steps a trajectory may take before it is cut.
      seed: the only source of randomness the source may use.
      checkpoint_dir: where a source that trains agents keeps them (the run's ``experts/``), so a
        rerun that recomputes the demonstrations reuses them; None keeps nothing.
    """

    family: TaskFamily
    train_tasks: Sequence[Task]
    trajectories_per_task: int
    max_steps: int
    seed: np.random.SeedSequence
    checkpoint_dir: str | None = None


def _call_old_collect(old: Any, source: Any, c: SourceContext) -> Any:
    """A source written as ``collect(family, train_tasks, trajectories_per_task, max_steps, seed)``.

    It was given ``checkpoint_dir=`` when it set ``uses_checkpoints``.
    """
    extra = {"checkpoint_dir": c.checkpoint_dir} if source.uses_checkpoints else {}
    per_task = c.trajectories_per_task
    return old(source, c.family, c.train_tasks, per_task, c.max_steps, c.seed, **extra)


class DemonstrationSource(Component):
    """A source of demonstrations. Subclass, set the class attributes, implement :meth:`collect`.

    ``name``, ``description``, ``Params``, ``requires``, :meth:`requirements`,
    :meth:`check_family` and :meth:`memory_estimate` are declared by
    :class:`~opt_suite.component.Component`; a source adds:

    Attributes:
      uses_checkpoints: whether it keeps trained agents in ``context.checkpoint_dir`` (shown by
        ``opt-suite describe``).
    """

    uses_checkpoints: ClassVar[bool] = False

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

    def checkpoint_names(self, context: SourceContext) -> list[str]:
        """The plain file names in ``context.checkpoint_dir`` that :meth:`collect` would reuse.

        A cell may run on a machine that cannot see the run's ``experts/`` (a Ray node): the runner
        sends these files along when the run has them, and brings back every file the source
        writes there, so a later cell on any machine finds them. Default: none (a source with
        ``uses_checkpoints`` that does not say trains again wherever its cell runs).
        """
        return []

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        adapt_entry(cls, "collect", _call_old_collect, SourceContext)
        adapt_memory(cls, "network_memory")

    @abc.abstractmethod
    def collect(self, context: SourceContext) -> list[Trajectory]:
        """``context.trajectories_per_task`` trajectories on each train task, each ending at a goal.

        Deterministic in ``context.seed``. Trajectories carry their task's ``task_id``.

        Raises:
          DemonstrationError: naming the task (or dataset) that could not be demonstrated.
        """
