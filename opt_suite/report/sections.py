"""The report's sections, in the order ``leaderboard.md`` shows them, and the loops over them.

One list, :data:`SECTIONS`; the report collects each from the store's cells and recorded files
(:mod:`opt_suite.report.source`), and the tables render each one's column, Markdown, JSON keys and
caveats (:mod:`opt_suite.report.tables`, :mod:`opt_suite.report.build`). What a section is:
:mod:`opt_suite.report.section`. A new per-cell quantity adds its module and one line here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from opt_suite.report import (
    cloning_fit,
    cpu_seconds,
    degenerate,
    demonstrations,
    discovery_cost,
    zero_shot,
)
from opt_suite.report.episodes import LearningCurves
from opt_suite.report.section import CaveatPlace, Column, Section, StoredRun

__all__ = [
    "SECTIONS",
    "collect_sections",
    "section_caveats",
    "section_columns",
    "section_json",
    "section_markdown",
]

SECTIONS: tuple[Section, ...] = (
    zero_shot.SECTION,
    discovery_cost.SECTION,
    cloning_fit.SECTION,
    cpu_seconds.SECTION,
    demonstrations.SECTION,
    degenerate.SECTION,
)


def collect_sections(
    cells: Iterable[Any], methods: Iterable[str], run: StoredRun
) -> dict[str, Any]:
    """Section key -> its data from the store's cells and ``run``'s files, where the run has any."""
    cells, methods = list(cells), list(methods)
    found = {}
    for section in SECTIONS:
        data = section.collect(cells, methods, run)
        if data:  # nothing recorded (e.g. a store written before the quantity existed): no section
            found[section.key] = data
    return found


def section_columns(collected: Mapping[str, Any]) -> list[Column]:
    """The main table's extra columns, in :data:`SECTIONS` order."""
    columns = (s.column(collected[s.key]) for s in SECTIONS if s.key in collected)
    return [c for c in columns if c is not None]


def section_markdown(
    collected: Mapping[str, Any], curves: Mapping[str, LearningCurves]
) -> list[str]:
    """Each section's part of ``leaderboard.md`` after the main table, empty ones left out."""
    parts = (s.markdown(collected[s.key], curves) for s in SECTIONS if s.key in collected)
    return [p for p in parts if p]


def section_json(collected: Mapping[str, Any]) -> dict[str, Any]:
    """The sections' top-level keys of ``leaderboard.json``."""
    found: dict[str, Any] = {}
    for section in SECTIONS:
        if section.key in collected:
            found.update(section.json(collected[section.key]))
    return found


def section_caveats(collected: Mapping[str, Any], place: CaveatPlace) -> list[str]:
    """The sections' warnings of the leaderboard that go at ``place``, in :data:`SECTIONS` order."""
    return [
        line
        for s in SECTIONS
        if s.key in collected and s.caveat_place == place
        for line in s.caveats(collected[s.key])
    ]
