"""A report section: one per-cell quantity collected from the store and rendered, in one module.

A section (zero-shot returns, discovery cost, CPU seconds, demonstrations kept, degenerate
options, ...) is a small object with a ``key``, a ``caveat_place``, a ``markdown_place`` and five
methods; :mod:`opt_suite.report.sections` lists them, and the report calls each in turn:

- ``collect(cells, methods, run)``: its typed frozen data from the store's cells (``CellInfo``:
  kind, method, seed, status, info) of the reported method entries and, where a cell's info is
  not all it needs, the files the run recorded (:class:`StoredRun`: the store and the stored
  spec); empty (falsy) when the run has none, which leaves the section out everywhere (a store
  written before the quantity existed);
- ``column(data)``: a column of the main leaderboard table (header, method entry -> cell text), or
  None;
- ``markdown(data, curves)``: its own part of ``leaderboard.md`` ("" none), shown where
  ``markdown_place`` says: ``"after"`` the leaderboard's text (a section with a heading of its
  own), or among the ``"tables"`` after the main one (a bold-titled table that sits beside the
  core's estimates: after the auc split, before the validity check and the verdicts); ``curves``
  are the learning curves, for a section that sets its numbers beside them (empty at
  ``"tables"``: the tables are rendered from the leaderboard alone);
- ``json(data)``: its top-level keys of ``leaderboard.json`` (empty: none);
- ``caveats(data)``: its warnings of the leaderboard (empty: none), shown where ``caveat_place``
  says: ``"inputs"`` (about what the methods were given, e.g. demonstrations that score nothing)
  before the statistics' own caveats (thresholds), ``"scale"`` (about the scale the estimates
  are on, e.g. reference returns that give no normalised score) right after the thresholds',
  ``"outputs"`` (about what they produced, e.g. an option that is a primitive under another name)
  after them.

The section's module owns its data class, its reader of the cells' records and its rendering, so
a new per-cell number is that module, one line in the registry, and where the runner measures it.

What is not a section: the statistics core's inputs (episodes, reference returns, the frame
unit), which every metric, threshold and verdict is computed from, stay in
:class:`opt_suite.report.inputs.ReportInputs`; a section only adds to what the core produced.

Most sections collect from the store (:class:`Section`: ``collect(cells, methods, run)``). A
section that renders what the core computed (the normalised scores,
:mod:`opt_suite.report.normalised_section`) is a :class:`RenderedSection` only: the report hands
it the core's own typed results explicitly, never through the store or string keys.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol

import numpy as np

from opt_suite.report.episodes import LearningCurves
from opt_suite.report.leaderboard import Estimate
from opt_suite.spec.stored import StoredSpec

__all__ = [
    "CaveatPlace",
    "Column",
    "ESTIMATE_FIELDS",
    "MarkdownPlace",
    "RenderedSection",
    "Section",
    "StoredRun",
    "estimate_json",
    "fmt",
    "iqm_cell",
    "json_number",
    "markdown_table",
]

#: A main-table column: its header and each method entry's cell (an entry left out shows "—").
Column = tuple[str, Mapping[str, str]]

#: Where a section's caveats go among the leaderboard's warnings (see the module docstring).
CaveatPlace = Literal["inputs", "scale", "outputs"]

#: Where a section's part of ``leaderboard.md`` goes (see the module docstring).
MarkdownPlace = Literal["tables", "after"]


@dataclasses.dataclass(frozen=True, eq=False)
class StoredRun:
    """The viewed run beyond its cells' info, for the sections that read recorded files.

    Attributes:
      store: the run's results store (:class:`opt_suite.store.ResultsStore`, viewing this run):
        ``seeds()``, ``demonstrations(seed)``, ``option_set_file(method, seed)``,
        ``recorded_file(cell_id, name)``.
      spec: the stored spec's own sections, typed (:func:`opt_suite.spec.stored.stored_sections`).
    """

    store: Any
    spec: StoredSpec
    _read: dict[str, Any] = dataclasses.field(default_factory=dict, repr=False)

    def demonstrations(self) -> Mapping[int, Any]:
        """Seed -> its demonstrations, for the seeds that have any.

        Read from the store once and shared by every section that needs them (the demonstrations
        kept, the degenerate options' visited states): on Atari they are frames, costly to read.
        """
        if "demonstrations" not in self._read:
            self._read["demonstrations"] = {
                seed: demos
                for seed in self.store.seeds()
                if (demos := self.store.demonstrations(seed))
            }
        found: Mapping[int, Any] = self._read["demonstrations"]
        return found


class RenderedSection(Protocol):
    """What the report asks of every section to show its data (see the module docstring)."""

    @property
    def key(self) -> str:
        """Its name in ``ReportInputs.sections`` (and, where it has one, ``leaderboard.json``)."""
        ...

    @property
    def caveat_place(self) -> CaveatPlace:
        """Where its caveats go among the leaderboard's warnings (see the module docstring)."""
        ...

    @property
    def markdown_place(self) -> MarkdownPlace:
        """Where its part of ``leaderboard.md`` goes (see the module docstring)."""
        ...

    def column(self, data: Any) -> Column | None:
        """Its column of the main table, or None."""
        ...

    def markdown(self, data: Any, curves: Mapping[str, LearningCurves]) -> str:
        """Its part of ``leaderboard.md`` at ``markdown_place`` ("" for none)."""
        ...

    def json(self, data: Any) -> dict[str, Any]:
        """Its top-level keys of ``leaderboard.json`` (empty for none)."""
        ...

    def caveats(self, data: Any) -> tuple[str, ...]:
        """Its warnings of the leaderboard (empty for none)."""
        ...


class Section(RenderedSection, Protocol):
    """A section collected from the store's cells and the run's files (see the module docstring)."""

    def collect(self, cells: Sequence[Any], methods: Sequence[str], run: StoredRun) -> Any:
        """Its data from the store's cells of ``methods`` and the run's files (falsy: none)."""
        ...


def fmt(x: float | None, digits: int = 2) -> str:
    """A number for people: fixed decimals, ``n/a`` when undefined."""
    return "n/a" if x is None or not np.isfinite(x) else f"{x:.{digits}f}"


def json_number(x: float | None) -> float | None:
    """JSON has no NaN: an undefined number (e.g. the s.e. of a single run) becomes null."""
    return None if x is None or math.isnan(x) else x


#: An estimate's fields in ``leaderboard.json`` and ``leaderboard.csv``, in their order.
ESTIMATE_FIELDS = tuple(f.name for f in dataclasses.fields(Estimate))


def estimate_json(e: Estimate) -> dict[str, float | None]:
    """An estimate in ``leaderboard.json``: its fields, an undefined one null."""
    return {f: json_number(getattr(e, f)) for f in ESTIMATE_FIELDS}


def iqm_cell(e: Estimate, digits: int) -> str:
    """An estimate as the tables show it: ``IQM [seeds CI] [tasks CI]``."""
    return (
        f"{fmt(e.iqm, digits)} [{fmt(e.ci_low, digits)}, {fmt(e.ci_high, digits)}]"
        f" [{fmt(e.task_ci_low, digits)}, {fmt(e.task_ci_high, digits)}]"
    )


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A Markdown table's lines: the first column left-aligned, the others right-aligned."""
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|",
    ]
    return lines + ["| " + " | ".join(cells) + " |" for cells in rows]
