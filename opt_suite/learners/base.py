"""The test-time learner contract: the same learner runs for every method on every test task.

A learner learns a policy over primitives + a method's options on held-out test tasks and records
the per-episode return and number of primitive env steps. It is registered through the
``opt_suite.learners`` entry point group (spec key ``evaluation.learner``) and declares its
parameters as a frozen ``Params`` dataclass (``evaluation.params``).

Runs are passed in batches — (task, seed) pairs that share one option set — so that a learner can
advance many runs together, vectorised.
"""

from __future__ import annotations

import abc
import dataclasses
import os
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from opt_suite.component import Component, adapt_entry, adapt_memory
from opt_suite.families.base import Task, TaskFamily
from opt_suite.files_guard import InputError, regular_file
from opt_suite.options import OptionSet
from opt_suite.stages import ZERO_SHOT_INFO  # where a cell's info keeps zero_shot's returns

MAX_USAGE_BYTES = 1 << 30  # counts per episode and option: kilobytes per cell

__all__ = [
    "ZERO_SHOT_INFO",
    "CloneFit",
    "EpisodeLog",
    "Learner",
    "LearnerContext",
    "LearnerRun",
    "OptionUsage",
]


#: A cloned policy's fit to its demonstrations (``Learner.clones_policy``): accuracy and mean
#: log-likelihood on the pairs it was cloned on, then a second clone's on held-out pairs (None:
#: none held out). The store's typed form is ``store.records.ClonedFit`` (a layer above).
CloneFit = tuple[float, float, float | None, float | None]


@dataclasses.dataclass(frozen=True, eq=False)
class EpisodeLog:
    """One run's learning curve: ``returns[e]``, primitive ``steps[e]`` and ``frames[e]``.

    ``frames[e]`` counts the emulator frames the run used from its start to the end of episode e
    (cumulative: the x-axis of a learning curve in interaction). Families that do not skip frames
    spend one frame per primitive step, and ``frames`` defaults to the cumulative sum of ``steps``.
    ``cloning_fit``: the fit of the policy the run started from by behaviour cloning (a
    :class:`~opt_suite.options.policy_start.PolicyStart`), when the learner measured it.
    """

    returns: np.ndarray
    steps: np.ndarray
    frames: np.ndarray | None = None
    cloning_fit: CloneFit | None = None

    def __post_init__(self) -> None:
        if self.frames is None:
            object.__setattr__(self, "frames", np.cumsum(np.asarray(self.steps), dtype=np.int64))


@dataclasses.dataclass(frozen=True, eq=False)
class OptionUsage:
    """How one run used its options: per episode, the choices of each option and its steps.

    A learner that can count them offers ``run_with_usage`` (the same context as ``run``, returns
    ``(EpisodeLog, OptionUsage)`` per run, with the same numbers as ``run``).

    Attributes:
      names: the O = A + m choices: the A primitive actions, then the options' names.
      num_primitives: A.
      calls: int [episodes, O], decisions of the policy over options that chose each one.
      steps: int [episodes, O], primitive steps taken while each one ran (a primitive: 1 per
        call); a row sums to the episode's steps.
      frames: int [episodes, O], emulator frames those steps used, or None when the learner
        does not count them (a family that skips no frames uses one per step).
    """

    names: tuple[str, ...]
    num_primitives: int
    calls: np.ndarray
    steps: np.ndarray
    frames: np.ndarray | None = None

    def __post_init__(self) -> None:
        calls, steps = np.asarray(self.calls), np.asarray(self.steps)
        if calls.ndim != 2 or calls.shape != steps.shape or calls.shape[1] != len(self.names):
            raise ValueError(
                f"OptionUsage: expected calls and steps of shape [episodes, {len(self.names)}],"
                f" got {calls.shape} and {steps.shape}"
            )
        if self.frames is not None and np.shape(self.frames) != steps.shape:
            raise ValueError(
                f"OptionUsage: expected frames of shape {steps.shape}, got {np.shape(self.frames)}"
            )
        if not 0 <= self.num_primitives <= len(self.names):
            raise ValueError(f"OptionUsage: num_primitives {self.num_primitives} out of range")

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the counts to one ``.npz`` file (how an evaluation cell keeps them)."""
        arrays: dict[str, Any] = {
            "names": np.array(self.names, dtype=str),
            "num_primitives": np.int64(self.num_primitives),
            "calls": np.asarray(self.calls, dtype=np.int64),
            "steps": np.asarray(self.steps, dtype=np.int64),
        }
        if self.frames is not None:  # only when counted: other learners' files keep their bytes
            arrays["frames"] = np.asarray(self.frames, dtype=np.int64)
        with open(path, "wb") as f:
            np.savez_compressed(f, **arrays)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> OptionUsage:
        """Read counts written by :meth:`save`.

        Raises:
          ValueError: the file does not hold such counts.
        """
        try:
            regular_file(path, "option-usage file", MAX_USAGE_BYTES)  # no FIFO, no /dev/zero
            with np.load(path, allow_pickle=False) as f:
                return cls(
                    tuple(str(n) for n in f["names"]),
                    int(f["num_primitives"]),
                    f["calls"],
                    f["steps"],
                    f["frames"] if "frames" in f.files else None,
                )
        except (KeyError, OSError, InputError) as exc:
            raise ValueError(f"{path}: not an option-usage file ({exc})") from None


@dataclasses.dataclass(frozen=True, eq=False)
class LearnerRun:
    """One (test task, seed) run of a learner."""

    task: Task
    seed: np.random.SeedSequence


@dataclasses.dataclass(frozen=True, eq=False)
class LearnerContext:
    """Everything a learner is given: a batch of runs that share one option set, and the budget.

    A new capability is a new field here (with a default), never a new argument of
    :meth:`Learner.run`.

    Attributes:
      family: the family of the runs' tasks.
      runs: the (test task, seed) runs, all learning with ``options``.
      options: the option set the learner may call besides the primitives.
      episodes: the budget in episodes (unless ``frames`` is given).
      max_steps: primitive steps per episode before it is cut.
      frames: a budget in emulator frames per run instead of ``episodes``; set only for a
        learner with ``frame_budgets = True`` (when the spec gives ``evaluation.frames``).
    """

    family: TaskFamily
    runs: Sequence[LearnerRun]
    options: OptionSet
    episodes: int
    max_steps: int
    frames: int | None = None


def _call_old_run(old: Any, learner: Any, c: LearnerContext) -> Any:
    """A learner written as ``run(family, runs, options, episodes, max_steps, frames=None)``."""
    frames = {} if c.frames is None else {"frames": c.frames}  # old learners may omit frames
    return old(learner, c.family, c.runs, c.options, c.episodes, c.max_steps, **frames)


def _call_old_usage(old: Any, learner: Any, c: LearnerContext) -> Any:
    """A learner written as ``run_with_usage(family, runs, options, episodes, max_steps)``."""
    return old(learner, c.family, c.runs, c.options, c.episodes, c.max_steps)


class Learner(Component):
    """A test-time learner. Subclass, set the class attributes, implement :meth:`run`.

    ``name``, ``description``, ``Params``, ``requires``, :meth:`requirements`,
    :meth:`check_family` and :meth:`memory_estimate` are declared by
    :class:`~opt_suite.component.Component`; a learner adds:

    Attributes:
      frame_budgets: whether :meth:`run` honours ``context.frames`` (a budget in emulator frames
        instead of episodes); ``opt-suite validate`` rejects ``evaluation.frames`` for a learner
        without.
      counts_usage: whether it implements :meth:`run_with_usage`; the runner then records every
        evaluation's option usage and ``opt-suite option-usage`` can replay it.
      clones_policy: whether it has a policy to initialise and clones it on a
        :class:`~opt_suite.options.policy_start.PolicyStart` (the ``bc_ppo`` control) before it
        acts; a learner without one (a Q table) is refused such a start, by validate and by the
        runner.
    """

    frame_budgets: ClassVar[bool] = False
    counts_usage: ClassVar[bool] = False
    clones_policy: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        adapt_entry(cls, "run", _call_old_run, LearnerContext)
        adapt_entry(cls, "run_with_usage", _call_old_usage, LearnerContext)
        adapt_memory(cls, "network_memory")

    @abc.abstractmethod
    def run(self, context: LearnerContext) -> list[EpisodeLog]:
        """Learn on every run's task from scratch; one EpisodeLog per run, in order.

        Each run's randomness comes from its own seed only, so results do not depend on how runs
        are batched. ``context.frames`` is set only for a learner with ``frame_budgets = True``
        (and only when the spec gives ``evaluation.frames``): each run then stops once it has used
        that many emulator frames (``episodes`` is then not the budget) and logs the episodes
        that ended within them.
        """

    def zero_shot(self, context: LearnerContext) -> list[np.ndarray] | None:
        """Per run, the returns of ``context.episodes`` episodes of the untrained policy.

        The policy the learner starts from over ``context.options``, before any update (an
        option set's zero-shot return), each run acting with its own seed alone. Default: None,
        the learner cannot say (the leaderboard then leaves the zero-shot column empty for it).
        """
        return None

    def run_with_usage(self, context: LearnerContext) -> list[tuple[EpisodeLog, OptionUsage]]:
        """:meth:`run`, also counting how each run used its options (``counts_usage = True``).

        The EpisodeLogs must equal :meth:`run`'s bit for bit: the runner calls this instead of
        :meth:`run` for every evaluation when ``counts_usage`` is set — with an episode budget,
        or also with a frame budget (passing ``frames=`` as to :meth:`run`) when the learner
        has ``frame_budgets``.

        Raises:
          NotImplementedError: the learner does not count usage (the default).
        """
        raise NotImplementedError(f"learner {self.name!r} does not count option usage")
