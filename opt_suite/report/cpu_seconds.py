"""Each method entry's CPU seconds: what its discovery and evaluation cells cost the machine.

The runner measures ``time.process_time()`` around each cell's job in the process that ran it
(each stage record's ``cpu_seconds``: :mod:`opt_suite.store.records`); here they are summed
per method entry and stage, and ``leaderboard.md`` gains a "CPU seconds" table. A store written
before the runner measured them has none: no table. The numbers are measurements, so unlike every
other number of the leaderboard they change from rerun to rerun and machine to machine; they stay
out of ``leaderboard.json``, which is a function of the results alone.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from opt_suite.report.episodes import LearningCurves
from opt_suite.report.section import CaveatPlace, Column, MarkdownPlace, StoredRun
from opt_suite.store.records import record_from_info

__all__ = ["SECTION", "CpuSeconds", "CpuSecondsSection"]

#: The stages whose cells belong to a method entry (demonstrations are shared by all entries).
STAGES = ("discovery", "evaluation")


@dataclasses.dataclass(frozen=True)
class CpuSeconds:
    """One method entry's CPU seconds, summed over its done cells that recorded them.

    Attributes:
      discovery: over its discovery cells (one per seed).
      evaluation: over its evaluation cells (one per seed and test task).
      cells: its done cells that recorded CPU seconds.
      of_cells: its done cells.
    """

    discovery: float
    evaluation: float
    cells: int
    of_cells: int


@dataclasses.dataclass(frozen=True)
class CpuSecondsSection:
    """The "CPU seconds" table of ``leaderboard.md``."""

    key: str = "cpu_seconds"
    caveat_place: CaveatPlace = "outputs"  # it has no caveats
    markdown_place: MarkdownPlace = "after"

    def collect(
        self, cells: Sequence[Any], methods: Sequence[str], run: StoredRun
    ) -> dict[str, CpuSeconds]:
        """Each entry's :class:`CpuSeconds`; empty when no cell recorded any."""
        sums = {m: dict.fromkeys(STAGES, 0.0) for m in methods}
        measured, done = dict.fromkeys(methods, 0), dict.fromkeys(methods, 0)
        for cell in cells:
            kind = str(cell.kind)
            if cell.status != "done" or cell.method not in sums or kind not in STAGES:
                continue
            done[cell.method] += 1
            seconds = record_from_info(kind, cell.info or {}).cpu_seconds
            if seconds is not None:
                sums[cell.method][kind] += float(seconds)
                measured[cell.method] += 1
        if not any(measured.values()):
            return {}
        return {
            m: CpuSeconds(sums[m]["discovery"], sums[m]["evaluation"], measured[m], done[m])
            for m in methods
        }

    def column(self, data: Mapping[str, CpuSeconds]) -> Column | None:
        """None: the seconds have a table of their own."""
        return None

    def markdown(self, data: Mapping[str, CpuSeconds], curves: Mapping[str, LearningCurves]) -> str:
        """The "CPU seconds" section of ``leaderboard.md``."""
        lines = [
            "## CPU seconds",
            "",
            "CPU time of each method entry's cells, summed over its seeds (discovery) and its seeds"
            " and test tasks (evaluation): `time.process_time()` around each cell's job in the"
            " process that ran it. Measured, so it changes from rerun to rerun and machine to"
            " machine, unlike the numbers above; a cell reused from an earlier run keeps its"
            " first measurement.",
            "",
            "| method | discovery CPU s | evaluation CPU s | cells measured |",
            "|---|---:|---:|---:|",
        ]
        for name, c in data.items():
            lines.append(
                f"| {name} | {c.discovery:,.2f} | {c.evaluation:,.2f} | {c.cells} of {c.of_cells} |"
            )
        return "\n".join(lines) + "\n"

    def json(self, data: Mapping[str, CpuSeconds]) -> dict[str, Any]:
        """None: leaderboard.json stays a function of the results (see the module docstring)."""
        return {}

    def caveats(self, data: Any) -> tuple[str, ...]:
        """None."""
        return ()


SECTION = CpuSecondsSection()
