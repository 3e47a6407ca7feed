"""The normalised scores' part of the leaderboard: their table, their JSON key and their caveat.

The reference returns are an input of the statistics core (:mod:`opt_suite.report.normalise`):
they set the thresholds, the verdicts' scale and each entry's estimates on the normalised scale
(:func:`opt_suite.report.leaderboard.normalised_estimates`), which stay the core's. What is a
section is how the leaderboard *shows* those estimates:

- the caveat naming every (seed, task) pair whose normalised score is undefined and how many pairs
  remain (:func:`~opt_suite.report.normalise.normalisation_caveat`), among the statistics' own
  caveats (place ``"scale"``: right after the thresholds');
- the "Normalised scores" table, among the tables after the main one (place ``"tables"``: after the
  auc split, before the validity check and the verdicts);
- ``normalised`` in ``leaderboard.json``.

Its data is not collected from the store: the report builds it in two explicit, typed steps,
:func:`from_references` before the core runs (the caveat needs only the references) and
:func:`with_estimates` after it, from the core's :class:`~opt_suite.report.leaderboard.Leaderboard`.
The per-metric rows ``normalised_<metric>`` of ``leaderboard.csv`` are the core's estimate dump
(every estimate the core made, one row each) and stay in :mod:`opt_suite.report.tables`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from opt_suite.report.episodes import LearningCurves
from opt_suite.report.leaderboard import Estimate, Leaderboard
from opt_suite.report.normalise import References, normalisation_caveat
from opt_suite.report.section import (
    CaveatPlace,
    Column,
    MarkdownPlace,
    estimate_json,
    iqm_cell,
    markdown_table,
)

__all__ = [
    "SECTION",
    "NormalisedPart",
    "NormalisedScoresSection",
    "NormalisedTable",
    "from_references",
    "with_estimates",
]


@dataclasses.dataclass(frozen=True)
class NormalisedTable:
    """The core's estimates on the normalised scale, as the leaderboard shows them.

    Attributes:
      definition: what 0 and 1 are (:attr:`References.description`).
      tasks: the test tasks the estimates cover (every seed's pair has a scale there).
      test_tasks: the run's test tasks.
      pairs: (pairs, of pairs): the (seed, task) pairs aggregated, of all the run's.
      confidence: the intervals' confidence level.
      rows: every method entry, best first (the leaderboard's order), with its estimates per
        return metric (empty: none on this scale).
    """

    definition: str
    tasks: tuple[str, ...]
    test_tasks: int
    pairs: tuple[int, int]
    confidence: float
    rows: tuple[tuple[str, Mapping[str, Estimate]], ...]


@dataclasses.dataclass(frozen=True, eq=False)
class NormalisedPart:
    """The section's data: the run's reference returns and, once the core ran, its estimates.

    ``table`` is None before the core ran and when no test task has a scale on every seed.
    """

    references: References
    table: NormalisedTable | None = None


def from_references(references: References | None) -> NormalisedPart | None:
    """The section's data before the core runs (None: the run measured no reference returns)."""
    return None if references is None else NormalisedPart(references)


def with_estimates(part: NormalisedPart, board: Leaderboard) -> NormalisedPart:
    """``part`` with the core's normalised estimates of ``board`` (no table: none computed)."""
    if board.normalisation is None:
        return part
    table = NormalisedTable(
        definition=board.normalisation,
        tasks=tuple(board.normalised_tasks),
        test_tasks=board.tasks,
        pairs=board.normalised_pairs,
        confidence=board.confidence,
        rows=tuple((row.method, dict(row.normalised)) for row in board.rows),
    )
    return dataclasses.replace(part, table=table)


@dataclasses.dataclass(frozen=True)
class NormalisedScoresSection:
    """The normalised scores' table, JSON key and caveat (see the module docstring)."""

    key: str = "normalised"
    caveat_place: CaveatPlace = "scale"
    markdown_place: MarkdownPlace = "tables"

    def column(self, data: NormalisedPart) -> Column | None:
        """None: the scores have a table of their own."""
        return None

    def markdown(self, data: NormalisedPart, curves: Mapping[str, LearningCurves]) -> str:
        """The "Normalised scores" table ("" without estimates)."""
        t = data.table
        if t is None:
            return ""
        pct = round(100 * t.confidence)
        # The metrics the first entry with any has: every entry's are the same return metrics.
        names = list(next((found for _, found in t.rows if found), {}))
        header = ["method"] + [f"{k} ↑: IQM [{pct}% CI seeds] [tasks]" for k in names]
        rows = [
            [method] + [iqm_cell(found[k], 2) if k in found else "—" for k in names]
            for method, found in t.rows
        ]
        pairs, of_pairs = t.pairs
        title = (
            f"Normalised scores ({t.definition}; {len(t.tasks)} of {t.test_tasks} test tasks,"
            f" n = {pairs} of {of_pairs} (seed, task) pairs)"
        )
        return "\n".join([f"**{title}**", "", *markdown_table(header, rows)])

    def json(self, data: NormalisedPart) -> dict[str, Any]:
        """``normalised``: ``{definition, tasks, pairs, of_pairs, methods: {NAME: {METRIC}}}``."""
        t = data.table
        if t is None:
            return {}
        return {
            "normalised": {
                "definition": t.definition,
                "tasks": list(t.tasks),
                "pairs": t.pairs[0],
                "of_pairs": t.pairs[1],
                "methods": {
                    method: {k: estimate_json(e) for k, e in found.items()}
                    for method, found in t.rows
                    if found
                },
            }
        }

    def caveats(self, data: NormalisedPart) -> tuple[str, ...]:
        """The pairs without a scale and how many remain (none when every pair has one)."""
        caveat = normalisation_caveat(data.references)
        return () if caveat is None else (caveat,)


SECTION = NormalisedScoresSection()
