"""Discovery cost on the same axis as learning cost: frames spent finding options, then using them.

A method that steps an environment to find its options (option-critic, covering options on a
random walk, Laplacian options) has spent frames before its learner takes its first step; a
method that reads demonstrations has spent the experts' steps. The leaderboard's returns hide
both. Per method entry, from its discovery cells' records (``DiscoveryRecord.env_frames``: what
the runner's counting envs saw, whatever the method reports; ``demonstration_steps``: the steps
of the demonstrations it was given), mean over seeds:

- ``leaderboard.md`` gains a "Discovery cost" table: discovery env frames and demonstration steps
  beside the learning frames (the frames a run of the test-time learner took, mean over runs);
- ``curves_with_discovery.png`` draws the learning curves against discovery frames + learning
  frames, so a method that paid for its options starts to the right (drawn only when some entry
  stepped an env during discovery). One discovery serves every test task of a seed; the whole of
  it is charged to each run (the cost of the first task solved with these options).

The table is a report section (:mod:`opt_suite.report.section`): :data:`SECTION`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from opt_suite.report.curves import write_curves_png
from opt_suite.report.episodes import LearningCurves
from opt_suite.report.section import CaveatPlace, Column, MarkdownPlace, StoredRun
from opt_suite.store.records import DiscoveryRecord

__all__ = [
    "SECTION",
    "DiscoveryCost",
    "DiscoveryCostSection",
    "discovery_costs",
    "discovery_cost_markdown",
    "write_discovery_axis_png",
]


@dataclasses.dataclass(frozen=True)
class DiscoveryCost:
    """One method entry's discovery cost, mean over its seeds' discovery cells.

    Attributes:
      env_frames: emulator frames its envs counted during discovery.
      demonstration_steps: steps of the demonstrations it was given.
      seeds: how many discovery cells the means are over.
    """

    env_frames: float
    demonstration_steps: float
    seeds: int


def discovery_costs(cells: Iterable[Any]) -> dict[str, DiscoveryCost]:
    """Method entry -> its :class:`DiscoveryCost`, from the store's cells (done discoveries only).

    Args:
      cells: ``CellInfo``-like rows with ``kind``, ``method``, ``status`` and ``info``.
    """
    found: dict[str, list[tuple[float, float]]] = {}
    for cell in cells:
        if str(cell.kind) != "discovery" or cell.status != "done" or cell.method is None:
            continue
        record = DiscoveryRecord.from_info(cell.info or {})
        # The frames the budget-counting envs saw; a method that steps the exact model instead
        # (option-critic on a tabular family: no env is made, so nothing is counted) pays its
        # own env_steps, which the method contract checks against the interaction budget.
        demonstrated = float(record.demonstration_steps or 0)
        found.setdefault(cell.method, []).append((record.env_frames, demonstrated))
    return {
        method: DiscoveryCost(
            float(np.mean([f for f, _ in costs])), float(np.mean([d for _, d in costs])), len(costs)
        )
        for method, costs in found.items()
    }


def learning_frames(curves: LearningCurves) -> float:
    """Frames one run of the learner took, mean over the ``seeds x tasks`` runs."""
    return float(np.mean(curves.frames[..., -1]))


def discovery_cost_markdown(
    costs: Mapping[str, DiscoveryCost], curves: Mapping[str, LearningCurves]
) -> str:
    """The "Discovery cost" section of ``leaderboard.md`` ("" when no entry has a cost)."""
    if not any(c.env_frames or c.demonstration_steps for c in costs.values()):
        return ""
    lines = [
        "## Discovery cost",
        "",
        "Frames spent finding the options beside the frames spent using them (means over seeds; "
        "learning frames per run of the test-time learner).",
        "",
        "| method | discovery env frames | demonstration steps | learning frames |",
        "|---|---:|---:|---:|",
    ]
    for name, c in curves.items():
        cost = costs.get(name, DiscoveryCost(0.0, 0.0, 0))
        lines.append(
            f"| {name} | {cost.env_frames:,.0f} | {cost.demonstration_steps:,.0f} | "
            f"{learning_frames(c):,.0f} |"
        )
    return "\n".join(lines) + "\n"


@dataclasses.dataclass(frozen=True)
class DiscoveryCostSection:
    """The "Discovery cost" table of ``leaderboard.md`` as a report section."""

    key: str = "discovery_cost"
    caveat_place: CaveatPlace = "outputs"  # it has no caveats
    markdown_place: MarkdownPlace = "after"

    def collect(
        self, cells: Sequence[Any], methods: Sequence[str], run: StoredRun
    ) -> dict[str, DiscoveryCost]:
        """The reported entries' :func:`discovery_costs`."""
        return {m: c for m, c in discovery_costs(cells).items() if m in methods}

    def column(self, data: Mapping[str, DiscoveryCost]) -> Column | None:
        """None: the costs have a table of their own."""
        return None

    def markdown(
        self, data: Mapping[str, DiscoveryCost], curves: Mapping[str, LearningCurves]
    ) -> str:
        """:func:`discovery_cost_markdown`."""
        return discovery_cost_markdown(data, curves)

    def json(self, data: Mapping[str, DiscoveryCost]) -> dict[str, Any]:
        """None: leaderboard.json has never held the costs."""
        return {}

    def caveats(self, data: Any) -> tuple[str, ...]:
        """None."""
        return ()


SECTION = DiscoveryCostSection()


def write_discovery_axis_png(
    curves: Mapping[str, LearningCurves],
    costs: Mapping[str, DiscoveryCost],
    path: Path,
    title: str,
) -> Path | None:
    """Learning curves against discovery + learning frames; None (nothing drawn) without costs."""
    if not any(c.env_frames for c in costs.values()):
        return None
    offsets = {name: cost.env_frames for name, cost in costs.items()}
    return write_curves_png(curves, path, title, discovery_frames=offsets)
