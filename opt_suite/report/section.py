"""A report section: one per-cell quantity collected from the store and rendered, in one module.

A section (zero-shot returns, discovery cost, CPU seconds, ...) is a small object with a ``key``
and four methods; :mod:`opt_suite.report.sections` lists them, and the report calls each in turn:

- ``collect(cells, methods)``: its typed frozen data from the store's cells (``CellInfo``: kind,
  method, seed, status, info) of the reported method entries; empty (falsy) when the run has none,
  which leaves the section out everywhere (a store written before the quantity existed);
- ``column(data)``: a column of the main leaderboard table (header, method entry -> cell text), or
  None;
- ``markdown(data, curves)``: its own part of ``leaderboard.md`` after the main table ("" none);
  ``curves`` are the learning curves, for a section that sets its numbers beside them;
- ``json(data)``: its top-level keys of ``leaderboard.json`` (empty: none).

The section's module owns its data class, its reader of the cells' records and its rendering, so
a new per-cell number is that module, one line in the registry, and where the runner measures it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from opt_suite.report.episodes import LearningCurves

__all__ = ["Column", "Section", "fmt", "json_number"]

#: A main-table column: its header and each method entry's cell (an entry left out shows "—").
Column = tuple[str, Mapping[str, str]]


class Section(Protocol):
    """What the report asks of a section (see the module docstring)."""

    @property
    def key(self) -> str:
        """Its name in ``ReportInputs.sections`` (and, where it has one, ``leaderboard.json``)."""
        ...

    def collect(self, cells: Sequence[Any], methods: Sequence[str]) -> Any:
        """Its data from the store's cells of ``methods`` (falsy: the run has none)."""
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


def fmt(x: float | None, digits: int = 2) -> str:
    """A number for people: fixed decimals, ``n/a`` when undefined."""
    return "n/a" if x is None or not np.isfinite(x) else f"{x:.{digits}f}"


def json_number(x: float | None) -> float | None:
    """JSON has no NaN: an undefined number (e.g. the s.e. of a single run) becomes null."""
    return None if x is None or math.isnan(x) else x
