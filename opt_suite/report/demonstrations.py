"""What the demonstrations were worth: each train task's demonstration returns, and a warning.

Options learned from demonstrations can only be as good as the behaviour shown. When an expert
(e.g. a PPO agent trained within a small frame budget) does not play, its demonstrations score
nothing and whatever the options do says nothing about the paper's claim — the report says so.
The section lists, per demonstrations seed and train task, how many demonstrations there are,
their returns (as the task scores them: reward scale included) and their lengths; a task that
kept fewer than the spec's ``demonstrations.trajectories_per_task`` is warned about too. It is a
report section (:mod:`opt_suite.report.section`): the demonstrations cells' stored trajectories
in, a "Demonstrations" part of ``leaderboard.md`` and one caveat out.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from opt_suite.report.episodes import LearningCurves
from opt_suite.report.section import CaveatPlace, Column, MarkdownPlace, StoredRun

__all__ = [
    "SECTION",
    "DemonstrationsKept",
    "DemonstrationsSection",
    "TaskDemonstrations",
    "demonstrations_markdown",
    "demonstrations_warning",
    "summarise_demonstrations",
]


@dataclasses.dataclass(frozen=True)
class TaskDemonstrations:
    """The demonstrations of one train task under one seed.

    Attributes:
      seed: the demonstrations cell's seed.
      task_id: the train task.
      returns: each demonstration's return (sum of its rewards).
      lengths: each demonstration's number of actions.
      rewarded: whether each demonstration received any non-zero reward. A return of 0 alone does
        not mean "scored nothing": on four rooms (-1 a step, +10 at the goal) an 11-step path to
        the goal sums to exactly 0.
    """

    seed: int
    task_id: str
    returns: tuple[float, ...]
    lengths: tuple[int, ...]
    rewarded: tuple[bool, ...] = ()

    @property
    def silent(self) -> tuple[bool, ...]:
        """Per demonstration: it received no reward at all (every reward 0)."""
        return (
            tuple(not r for r in self.rewarded)
            if self.rewarded
            else tuple(r == 0 for r in self.returns)
        )


def summarise_demonstrations(
    by_seed: Iterable[tuple[int, Sequence[Any]]],
) -> tuple[TaskDemonstrations, ...]:
    """Group ``(seed, trajectories)`` pairs by seed and train task, in the order they came."""
    out: list[TaskDemonstrations] = []
    for seed, trajectories in by_seed:
        groups: dict[str, list[Any]] = {}
        for trajectory in trajectories:
            groups.setdefault(trajectory.task_id, []).append(trajectory)
        for task_id, group in groups.items():
            out.append(
                TaskDemonstrations(
                    seed,
                    task_id,
                    tuple(float(np.sum(t.rewards)) for t in group),
                    tuple(len(t) for t in group),
                    tuple(bool(np.any(np.asarray(t.rewards) != 0)) for t in group),
                )
            )
    return tuple(out)


def demonstrations_warning(
    summary: Sequence[TaskDemonstrations], asked: int | None = None
) -> str | None:
    """A warning when demonstrations score nothing (all, or every one of some train tasks).

    With ``asked`` (the spec's ``demonstrations.trajectories_per_task``), also when a train task
    kept fewer: a source dropped cut ones (``ppo_expert``'s ``min_complete``, ``scripted``,
    model-free ``q_learning``), so the options learned from fewer than the spec asked for.
    """
    if not summary:
        return None
    short = [t for t in summary if asked is not None and len(t.returns) < asked]
    if short:
        kept = ", ".join(f"{t.task_id} (seed {t.seed}): {len(t.returns)}" for t in short[:6])
        more = ", …" if len(short) > 6 else ""
        dropped = (
            f"demonstrations dropped: {len(short)} train task(s) kept fewer than the "
            f"{asked} demonstrations asked for ({kept}{more}); the source dropped cut or "
            "failed ones (its warnings are in the worker output)"
        )
        other = demonstrations_warning(summary)
        return dropped if other is None else f"{dropped}; {other}"
    silent_flags = [s for task in summary for s in task.silent]
    zero = sum(silent_flags)
    if zero == len(silent_flags):
        return (
            f"demonstrations score nothing: none of the {zero} demonstrations received any "
            "reward, so the options are learned from behaviour that does not play and say nothing "
            "about the paper's claim (train the experts longer: demonstrations.params.frames)"
        )
    silent = sorted({t.task_id for t in summary if all(t.silent)})
    if silent:
        return (
            f"demonstrations score nothing on {len(silent)} train task(s) ({', '.join(silent)}): "
            f"{zero} of {len(silent_flags)} demonstrations received no reward (train the experts "
            "longer: demonstrations.params.frames)"
        )
    return None


def demonstrations_markdown(summary: Sequence[TaskDemonstrations]) -> str:
    """A Markdown section: one row per (seed, train task); empty text when there is none."""
    if not summary:
        return ""
    lines = [
        "## Demonstrations",
        "",
        "Returns as each train task scores them (its reward scale included); length in actions.",
        "",
        "| seed | train task | demonstrations | return: mean [min, max] | returns | length: mean |",
        "|---:|---|---:|---:|---|---:|",
    ]
    for t in summary:
        returns = np.array(t.returns)
        shown = ", ".join(f"{r:.3g}" for r in t.returns[:12])
        more = ", …" if len(t.returns) > 12 else ""
        lines.append(
            f"| {t.seed} | {t.task_id} | {len(t.returns)} | {returns.mean():.3g} "
            f"[{returns.min():.3g}, {returns.max():.3g}] | {shown}{more} | "
            f"{np.mean(t.lengths):.1f} |"
        )
    return "\n".join(lines) + "\n"


@dataclasses.dataclass(frozen=True)
class DemonstrationsKept:
    """What the run's demonstrations cells kept, and what the spec asked for.

    Attributes:
      tasks: per (seed, train task), its demonstrations (:func:`summarise_demonstrations`).
      asked: the stored spec's ``demonstrations.trajectories_per_task`` (None: unset).
    """

    tasks: tuple[TaskDemonstrations, ...]
    asked: int | None = None

    def __bool__(self) -> bool:
        return bool(self.tasks)


@dataclasses.dataclass(frozen=True)
class DemonstrationsSection:
    """The "Demonstrations" part of ``leaderboard.md`` and its caveat."""

    key: str = "demonstrations"
    # Options learned from demonstrations that score nothing test nothing: said before the
    # statistics' caveats, with what the methods were given.
    caveat_place: CaveatPlace = "inputs"
    markdown_place: MarkdownPlace = "after"

    def collect(
        self, cells: Sequence[Any], methods: Sequence[str], run: StoredRun
    ) -> DemonstrationsKept:
        """The stored demonstrations of every seed that has any (empty: none)."""
        section = run.spec.demonstrations
        asked = None if section is None else section.trajectories_per_task
        return DemonstrationsKept(summarise_demonstrations(run.demonstrations().items()), asked)

    def column(self, data: DemonstrationsKept) -> Column | None:
        """None: the demonstrations are shared by every entry."""
        return None

    def markdown(self, data: DemonstrationsKept, curves: Mapping[str, LearningCurves]) -> str:
        """The "Demonstrations" table (:func:`demonstrations_markdown`)."""
        return demonstrations_markdown(data.tasks)

    def json(self, data: DemonstrationsKept) -> dict[str, Any]:
        """None: ``leaderboard.json`` has no demonstrations key (it never had)."""
        return {}

    def caveats(self, data: DemonstrationsKept) -> tuple[str, ...]:
        """:func:`demonstrations_warning`, if any."""
        warning = demonstrations_warning(data.tasks, data.asked)
        return () if warning is None else (warning,)


SECTION = DemonstrationsSection()
