"""Demonstrations: their sources' contract, tabular experts, Minari datasets, the runner's file.

Modules: :mod:`.base` (the contract), :mod:`.tabular` (experts on the exact model),
:mod:`.minari_io` (Minari datasets in and out), :mod:`.files` (the runner's ``.npz``).

:func:`collect_demonstrations` is what the runner calls: the spec's source, its params, and checks
that every train task got its trajectories.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from opt_suite.demonstrations.base import (
    DemonstrationError,
    DemonstrationSource,
    SourceContext,
    child_seed,
)
from opt_suite.demonstrations.files import load_demonstrations, save_demonstrations
from opt_suite.demonstrations.tabular import (
    Expert,
    ExpertError,
    OptimalExpert,
    QLearningExpert,
    sample_trajectory,
    train_expert,
)
from opt_suite.families.base import Task, TaskFamily
from opt_suite.trajectory import Trajectory

__all__ = [
    "DemonstrationError",
    "DemonstrationSource",
    "Expert",
    "ExpertError",
    "OptimalExpert",
    "QLearningExpert",
    "SourceContext",
    "child_seed",
    "collect_demonstrations",
    "load_demonstrations",
    "sample_trajectory",
    "save_demonstrations",
    "train_expert",
]


def collect_demonstrations(
    family: TaskFamily,
    train_tasks: Sequence[Task],
    spec: Any,
    seed: np.random.SeedSequence,
    source_cls: type | None = None,
    checkpoint_dir: str | Path | None = None,
) -> list[Trajectory]:
    """The demonstrations the spec's ``demonstrations`` section asks for.

    Args:
      family: the task family.
      train_tasks: the train tasks.
      spec: the spec's ``demonstrations`` section (``source``, ``params``,
        ``trajectories_per_task``, ``max_steps``).
      seed: the demonstrations cell's seed.
      source_cls: the registered class of ``spec.source`` (looked up when None).
      checkpoint_dir: where a source that trains agents (``uses_checkpoints``) keeps them
        (``SourceContext.checkpoint_dir``).

    A source may return fewer than ``trajectories_per_task`` on a task -- ``ppo_expert`` drops
    cut demonstrations while its declared ``min_complete`` remain (it raises below that) -- but
    never none, and never more; the report warns about a task that kept fewer.

    Raises:
      DemonstrationError: the source failed, left a train task without trajectories, or gave
        one more than it was asked for.
    """
    if source_cls is None:
        from opt_suite import registry

        source_cls = registry.load(registry.DEMONSTRATION_SOURCES, spec.source)
    source = source_cls(spec.params)
    context = SourceContext(
        family,
        train_tasks,
        spec.trajectories_per_task,
        spec.max_steps,
        seed,
        None if checkpoint_dir is None else str(checkpoint_dir),
    )
    demos = list(source.collect(context))
    counts = {task.task_id: 0 for task in train_tasks}
    for trajectory in demos:
        if trajectory.task_id not in counts:
            raise DemonstrationError(
                f"demonstration source {spec.source!r} returned a trajectory of "
                f"{trajectory.task_id!r}, which is not a train task"
            )
        counts[trajectory.task_id] += 1
    for task_id, count in counts.items():
        if not 1 <= count <= spec.trajectories_per_task:
            raise DemonstrationError(
                f"demonstration source {spec.source!r} gave {count} trajectories of {task_id}; "
                f"expected 1 to demonstrations.trajectories_per_task ="
                f" {spec.trajectories_per_task} (a source may drop cut ones, never all)"
            )
    return demos
