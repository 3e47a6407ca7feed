"""Every option set's zero-shot return: the learner's untrained policy over it, before any update.

A jump start can come from the options themselves (an imitation option that already walks to the
goal) or from learning fast with them; the zero-shot return separates the two (issue 25). Each
evaluation cell stores the returns of ``evaluation.zero_shot_episodes`` episodes of the learner's
initial policy (``Learner.zero_shot``, its own seed stream) in its info; here they become one
mean per run (seed, test task) and the mean ± s.e. over runs that the leaderboard shows: a column
of its main table and ``zero_shot_return`` in ``leaderboard.json`` (a report section,
:mod:`opt_suite.report.section`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from opt_suite.report.episodes import LearningCurves
from opt_suite.report.section import CaveatPlace, Column, MarkdownPlace, StoredRun, fmt, json_number
from opt_suite.stages import Stage
from opt_suite.store.records import EvaluationRecord

__all__ = ["SECTION", "ZeroShot", "ZeroShotSection", "zero_shot_returns"]


@dataclasses.dataclass(frozen=True)
class ZeroShot:
    """One method entry's zero-shot return: mean ± s.e. over its runs' means.

    Attributes:
      mean: mean over runs of each run's mean zero-shot return.
      se: its standard error (0 with one run).
      runs: how many (seed, test task) runs had zero-shot episodes.
      episodes: zero-shot episodes per run.
    """

    mean: float
    se: float
    runs: int
    episodes: int


def zero_shot_returns(cells: Iterable[Any], methods: Iterable[str]) -> Mapping[str, ZeroShot]:
    """Each of ``methods``' zero-shot return from its done evaluation cells' info.

    Args:
      cells: the store's cells (``CellInfo``: ``kind``, ``method``, ``status``, ``info``).
      methods: the entries to report, in order; one without zero-shot episodes is left out.
    """
    per_method: dict[str, list[np.ndarray]] = {}
    for cell in cells:
        if cell.kind != Stage.EVALUATION or cell.status != "done":
            continue
        returns = EvaluationRecord.from_info(cell.info or {}).zero_shot_returns
        if returns:
            per_method.setdefault(cell.method, []).append(np.asarray(returns, np.float64))
    found = {}
    for method in methods:
        runs = per_method.get(method)
        if not runs:
            continue
        means = np.array([r.mean() for r in runs])
        se = float(means.std(ddof=1) / np.sqrt(len(means))) if len(means) > 1 else 0.0
        found[method] = ZeroShot(float(means.mean()), se, len(means), max(len(r) for r in runs))
    return found


@dataclasses.dataclass(frozen=True)
class ZeroShotSection:
    """The zero-shot return as a report section: a main-table column and a leaderboard.json key."""

    key: str = "zero_shot_return"
    caveat_place: CaveatPlace = "outputs"  # it has no caveats
    markdown_place: MarkdownPlace = "after"

    def collect(
        self, cells: Sequence[Any], methods: Sequence[str], run: StoredRun
    ) -> Mapping[str, ZeroShot]:
        """Each entry's :class:`ZeroShot` (:func:`zero_shot_returns`)."""
        return zero_shot_returns(cells, methods)

    def column(self, data: Mapping[str, ZeroShot]) -> Column:
        """The column "zero-shot return ↑: mean ± s.e.", one cell per entry."""
        cells = {name: f"{fmt(z.mean)} ± {fmt(z.se)}" for name, z in data.items()}
        return "zero-shot return ↑: mean ± s.e.", cells

    def markdown(self, data: Mapping[str, ZeroShot], curves: Mapping[str, LearningCurves]) -> str:
        """None: the column says it all."""
        return ""

    def json(self, data: Mapping[str, ZeroShot]) -> dict[str, Any]:
        """``{"zero_shot_return": {NAME: {mean, se, runs, episodes}}}``."""
        return {
            self.key: {
                name: {
                    "mean": json_number(z.mean),
                    "se": json_number(z.se),
                    "runs": z.runs,
                    "episodes": z.episodes,
                }
                for name, z in data.items()
            }
        }

    def caveats(self, data: Any) -> tuple[str, ...]:
        """None."""
        return ()


SECTION = ZeroShotSection()
