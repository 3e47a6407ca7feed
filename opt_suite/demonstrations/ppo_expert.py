"""Demonstration source ``ppo_expert``: a trained tf-agents agent per train task (paper Sec. 4.2).

The spec chooses it for families without an exact model (Atari)::

    demonstrations:
      source: ppo_expert
      params: {frames: 10000000}      # ExpertParams: the frame budget per train task, PPO settings
      trajectories_per_task: 4        # 3 train tasks x 4 = the paper's 12
      max_steps: 27000                # a demonstration longer than this is an error

Each trajectory runs from a reset until the first life is lost (or the game ends), as in the paper,
on families whose envs report lives (Atari), and until the episode ends on the others; one cut by
``max_steps`` or the episode cap first is an error naming the task (in the family's words) — like a
tabular demonstration that never reaches its goal — or, with ``min_complete``, dropped with a
warning. A cut episode that succeeded is complete: on a survival task the cap is the goal
(CartPole balanced to its limit; the family's ``solved_when_cut``, the gymnasium family's
``success_return``). Expert checkpoints go to the checkpoint folder the runner gives (and from
there to the run's ``experts/``: :class:`opt_suite.runner.cells.DemonstrationsJob`), and
:meth:`PPOExpert.checkpoint_names` names them, so a rerun that must recompute the demonstrations
(more trajectories, a longer ``max_steps``) reuses the trained experts, on whichever machine it
runs — each only if its bytes match the digest written beside it; a swapped or damaged one is
retrained (:mod:`opt_suite.agents.expert`).

This module does not import TensorFlow (``opt-suite list`` and ``validate`` load it); collecting
does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from opt_suite.agents.params import ExpertParams, network_fit, ppo_memory
from opt_suite.component import ProblemSize
from opt_suite.demonstrations.base import DemonstrationError, DemonstrationSource, SourceContext
from opt_suite.families.base import Task
from opt_suite.families.capabilities import DISCRETE_ACTIONS
from opt_suite.trajectory import Trajectory

__all__ = ["PPOExpert"]


class PPOExpert(DemonstrationSource):
    """A PPO agent trained on each train task within a frame budget; see the module docstring."""

    name: ClassVar[str] = "ppo_expert"
    description: ClassVar[str] = (
        "tf-agents PPO trained per train task within a frame budget; trajectories sampled from it "
        "until a life is lost (paper Sec. 4.2)"
    )
    Params: ClassVar[type] = ExpertParams
    requires: ClassVar[frozenset[str]] = frozenset({DISCRETE_ACTIONS})
    uses_checkpoints: ClassVar[bool] = True

    @classmethod
    def check_family(cls, params: Any, family: Any) -> list[tuple[str, str]]:
        """The expert's convolutions must fit the family's frames (else it fails at run time)."""
        return network_fit(params.ppo, family, "ppo.")

    @classmethod
    def training_steps(cls, params: Any, max_steps: int) -> int:
        """The frame budget of each train task's expert (``frames``)."""
        return int(params.frames)

    @classmethod
    def memory_estimate(cls, params: Any, size: ProblemSize) -> tuple[int, str]:
        """(bytes, what) of one expert's networks and batch, for the work estimate."""
        found = ppo_memory(params.ppo, size.observation_shape, size.num_actions)
        return found, "a PPO expert: networks with Adam's moments and one update's batch"

    def checkpoint_names(self, context: SourceContext) -> list[str]:
        """Each train task's expert checkpoint and its sidecar of digests."""
        from opt_suite.demonstrations.agent_sampling import checkpoint_names

        family, tasks = context.family, context.train_tasks
        return checkpoint_names(family, tasks, self.params, context.seed)

    def collect(self, context: SourceContext) -> list[Trajectory]:
        """Train (or reload) each task's expert and sample its trajectories.

        Raises:
          DemonstrationError: a trajectory was cut before its end (a lost life on Atari, else the
            episode's end), naming its task.
        """
        family, train_tasks = context.family, context.train_tasks
        trajectories_per_task = context.trajectories_per_task
        max_steps, seed, checkpoint_dir = context.max_steps, context.seed, context.checkpoint_dir
        from opt_suite.demonstrations.agent_sampling import (
            CutDemonstration,
            collect_agent_demonstrations,
        )

        minimum = self.params.min_complete
        if minimum is not None and minimum > trajectories_per_task:
            raise DemonstrationError(
                f"demonstrations.params.min_complete = {minimum} is more than "
                f"demonstrations.trajectories_per_task = {trajectories_per_task}"
            )
        try:
            result = collect_agent_demonstrations(
                family,
                train_tasks,
                self.params,
                trajectories_per_task,
                max_steps,
                seed,
                checkpoint_dir,
                allow_cut=minimum is not None,
            )
        except CutDemonstration as exc:
            raise DemonstrationError(str(exc)) from exc
        return keep_complete(result, train_tasks, trajectories_per_task, minimum or 0)


def keep_complete(
    result: Any, train_tasks: Sequence[Task], per_task: int, minimum: int
) -> list[Trajectory]:
    """The complete demonstrations; each cut one dropped with a warning line on stderr.

    Raises:
      DemonstrationError: a train task keeps fewer than ``minimum``, naming it, how many were
        cut, and why the first was (steps reached, every cap).
    """
    import sys

    kept: list[Trajectory] = []
    messages = iter(result.cut_messages)
    for i, task in enumerate(train_tasks):
        rows = range(i * per_task, (i + 1) * per_task)
        complete = [result.trajectories[j] for j in rows if not result.was_cut[j]]
        why = [next(messages) for j in rows if result.was_cut[j]]
        for message in why:
            print(f"warning: demonstrations: dropped: {message}", file=sys.stderr)
        if len(complete) < minimum:
            raise DemonstrationError(
                f"{len(complete)} of {per_task} demonstrations on {task.task_id} are complete, "
                f"fewer than demonstrations.params.min_complete = {minimum}; the first cut: "
                f"{why[0]}"
            )
        kept += complete
    return kept
