"""The report's sections, in the order ``leaderboard.md`` shows them, and the loops over them.

One list, :data:`SECTIONS`, and the tables render each one's column, Markdown, JSON keys and
caveats in its order (:mod:`opt_suite.report.tables`, :mod:`opt_suite.report.build`). The report
collects those of :data:`STORE_SECTIONS` from the store's cells and recorded files
(:mod:`opt_suite.report.source`); the normalised scores render the statistics core's own
estimates, which the report hands them (:mod:`opt_suite.report.normalised_section`). What a
section is: :mod:`opt_suite.report.section`. A new per-cell quantity adds its module and one line
here.
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
    normalised_section,
    option_usage_section,
    zero_shot,
)
from opt_suite.report.episodes import LearningCurves
from opt_suite.report.section import (
    CaveatPlace,
    Column,
    MarkdownPlace,
    RenderedSection,
    Section,
    StoredRun,
)

__all__ = [
    "SECTIONS",
    "STORE_SECTIONS",
    "collect_sections",
    "section_caveats",
    "section_columns",
    "section_json",
    "section_markdown",
]

#: The sections collected from the store, in the order the leaderboard shows them.
STORE_SECTIONS: tuple[Section, ...] = (
    zero_shot.SECTION,
    discovery_cost.SECTION,
    cloning_fit.SECTION,
    cpu_seconds.SECTION,
    option_usage_section.SECTION,
    demonstrations.SECTION,
    degenerate.SECTION,
)

#: Every section, in the order the leaderboard shows them: the normalised scores first (their
#: JSON key before the others', as before they were a section).
SECTIONS: tuple[RenderedSection, ...] = (normalised_section.SECTION, *STORE_SECTIONS)


def collect_sections(
    cells: Iterable[Any], methods: Iterable[str], run: StoredRun
) -> dict[str, Any]:
    """Section key -> its data from the store's cells and ``run``'s files, where the run has any."""
    cells, methods = list(cells), list(methods)
    found = {}
    for section in STORE_SECTIONS:
        data = section.collect(cells, methods, run)
        if data:  # nothing recorded (e.g. a store written before the quantity existed): no section
            found[section.key] = data
    return found


def section_columns(collected: Mapping[str, Any]) -> list[Column]:
    """The main table's extra columns, in :data:`SECTIONS` order."""
    columns = (s.column(collected[s.key]) for s in SECTIONS if s.key in collected)
    return [c for c in columns if c is not None]


def section_markdown(
    collected: Mapping[str, Any], curves: Mapping[str, LearningCurves], place: MarkdownPlace
) -> list[str]:
    """The sections' parts of ``leaderboard.md`` that go at ``place``, empty ones left out."""
    parts = (
        s.markdown(collected[s.key], curves)
        for s in SECTIONS
        if s.key in collected and s.markdown_place == place
    )
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
