"""A report section: one per-cell quantity collected from the store and rendered, in one module.

A section (zero-shot returns, discovery cost, CPU seconds, demonstrations kept, degenerate
options, ...) is a small object with a ``key``, a ``caveat_place`` and five methods;
:mod:`opt_suite.report.sections` lists them, and the report calls each in turn:

- ``collect(cells, methods, run)``: its typed frozen data from the store's cells (``CellInfo``:
  kind, method, seed, status, info) of the reported method entries and, where a cell's info is
  not all it needs, the files the run recorded (:class:`StoredRun`: the store and the stored
  spec); empty (falsy) when the run has none, which leaves the section out everywhere (a store
  written before the quantity existed);
- ``column(data)``: a column of the main leaderboard table (header, method entry -> cell text), or
  None;
- ``markdown(data, curves)``: its own part of ``leaderboard.md`` after the main table ("" none);
  ``curves`` are the learning curves, for a section that sets its numbers beside them;
- ``json(data)``: its top-level keys of ``leaderboard.json`` (empty: none);
- ``caveats(data)``: its warnings of the leaderboard (empty: none), shown where ``caveat_place``
  says: ``"inputs"`` (about what the methods were given, e.g. demonstrations that score nothing)
  before the statistics' own caveats (thresholds, normalisation), ``"outputs"`` (about what they
  produced, e.g. an option that is a primitive under another name) after them.

The section's module owns its data class, its reader of the cells' records and its rendering, so
a new per-cell number is that module, one line in the registry, and where the runner measures it.

What is not a section: the statistics core's inputs (episodes, reference returns, the frame
unit), which every metric, threshold and verdict is computed from, stay in
:class:`opt_suite.report.inputs.ReportInputs`; a section only adds to what the core produced.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol

import numpy as np

from opt_suite.report.episodes import LearningCurves
from opt_suite.spec.stored import StoredSpec

__all__ = ["CaveatPlace", "Column", "Section", "StoredRun", "fmt", "json_number"]

#: A main-table column: its header and each method entry's cell (an entry left out shows "—").
Column = tuple[str, Mapping[str, str]]

#: Where a section's caveats go among the leaderboard's warnings (see the module docstring).
CaveatPlace = Literal["inputs", "outputs"]


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


class Section(Protocol):
    """What the report asks of a section (see the module docstring)."""

    @property
    def key(self) -> str:
        """Its name in ``ReportInputs.sections`` (and, where it has one, ``leaderboard.json``)."""
        ...

    @property
    def caveat_place(self) -> CaveatPlace:
        """Where its caveats go among the leaderboard's warnings (see the module docstring)."""
        ...

    def collect(self, cells: Sequence[Any], methods: Sequence[str], run: StoredRun) -> Any:
        """Its data from the store's cells of ``methods`` and the run's files (falsy: none)."""
        ...

    def column(self, data: Any) -> Column | None:
        """Its column of the main table, or None."""
        ...

    def markdown(self, data: Any, curves: Mapping[str, LearningCurves]) -> str:
        """Its part of ``leaderboard.md`` after the main table ("" for none)."""
        ...

    def json(self, data: Any) -> dict[str, Any]:
        """Its top-level keys of ``leaderboard.json`` (empty for none)."""
        ...

    def caveats(self, data: Any) -> tuple[str, ...]:
        """Its warnings of the leaderboard (empty for none)."""
        ...


def fmt(x: float | None, digits: int = 2) -> str:
    """A number for people: fixed decimals, ``n/a`` when undefined."""
    return "n/a" if x is None or not np.isfinite(x) else f"{x:.{digits}f}"


def json_number(x: float | None) -> float | None:
    """JSON has no NaN: an undefined number (e.g. the s.e. of a single run) becomes null."""
    return None if x is None or math.isnan(x) else x
