"""How well each cloning control cloned: its fit to the demonstrations, in and out of sample.

A control that imitates the demonstrations (``bc_option``) is only as strong as its clone: one that
fits them badly loses to the learned options for a reason that has nothing to do with temporal
abstraction (issue 35). Its discovery cells record the fit in their ``info`` — ``fit_accuracy`` and
``fit_log_likelihood`` on the demonstrations it was cloned on, ``held_out_accuracy`` and
``held_out_log_likelihood`` of a second clone on demonstrations it did not see — and
``leaderboard.md`` gains a "Cloning fit" table of their means over seeds (and
``leaderboard.json`` a ``cloning_fit`` key; a report section, :mod:`.section`), beside the zero-shot
column of the main table (the clone's return before any learning). Accuracy: the share of
demonstrated steps whose action is the clone's most probable one; log-likelihood: the mean of
log μ(a_t | s_t) over them.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from opt_suite.report.episodes import LearningCurves
from opt_suite.report.section import CaveatPlace, Column, MarkdownPlace, StoredRun, json_number
from opt_suite.store.records import ClonedFit, DiscoveryRecord

__all__ = ["SECTION", "CloningFit", "CloningFitSection", "cloning_fits", "cloning_fit_markdown"]


@dataclasses.dataclass(frozen=True)
class CloningFit:
    """One cloning control's fit, mean over the seeds that recorded it (NaN: none did).

    Attributes:
      accuracy, log_likelihood: on the demonstrations it was cloned on.
      held_out_accuracy, held_out_log_likelihood: a second clone's, on held-out demonstrations.
      seeds: discovery cells that recorded a fit.
      held_out_seeds: those of them that had demonstrations to hold out.
    """

    accuracy: float
    log_likelihood: float
    held_out_accuracy: float
    held_out_log_likelihood: float
    seeds: int
    held_out_seeds: int


def cloning_fits(cells: Iterable[Any]) -> dict[str, CloningFit]:
    """Method entry -> its :class:`CloningFit`, from done discovery cells that recorded one.

    Args:
      cells: ``CellInfo``-like rows with ``kind``, ``method``, ``status`` and ``info``.
    """
    found: dict[str, list[ClonedFit]] = {}
    for cell in cells:
        if str(cell.kind) != "discovery" or cell.status != "done" or cell.method is None:
            continue
        fit = DiscoveryRecord.from_info(cell.info or {}).cloning_fit
        if fit is not None:
            found.setdefault(cell.method, []).append(fit)
    return {method: _mean_fit(fits) for method, fits in found.items()}


def _mean_fit(fits: list[ClonedFit]) -> CloningFit:
    def mean(values: Iterable[float | None]) -> float:
        kept = [v for v in values if v is not None]
        return float(np.mean(kept)) if kept else math.nan

    held = sum(f.held_out_accuracy is not None for f in fits)
    return CloningFit(
        mean(f.accuracy for f in fits),
        mean(f.log_likelihood for f in fits),
        mean(f.held_out_accuracy for f in fits),
        mean(f.held_out_log_likelihood for f in fits),
        len(fits),
        held,
    )


def _shown(value: float) -> str:
    return "—" if math.isnan(value) else f"{value:.3f}"


def cloning_fit_markdown(fits: Mapping[str, CloningFit]) -> str:
    """The "Cloning fit" section of ``leaderboard.md`` ("" when no entry recorded a fit)."""
    if not fits:
        return ""
    lines = [
        "## Cloning fit",
        "",
        "How well each cloning control imitates the demonstrations (means over seeds): accuracy "
        "is the share of demonstrated steps whose action is the clone's most probable one, "
        "log-likelihood the mean log μ(a | s) over them; held out: a second clone, on the "
        "other demonstrations, scored on those it did not see. Its zero-shot return is the "
        "main table's zero-shot column.",
        "",
        "| method | accuracy | log-likelihood | held-out accuracy | held-out log-likelihood "
        "| seeds (held out) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    notes = []
    for name, fit in fits.items():
        lines.append(
            f"| {name} | {_shown(fit.accuracy)} | {_shown(fit.log_likelihood)} | "
            f"{_shown(fit.held_out_accuracy)} | {_shown(fit.held_out_log_likelihood)} | "
            f"{fit.seeds} ({fit.held_out_seeds}) |"
        )
        if fit.held_out_seeds < fit.seeds:
            notes.append(
                f"- **{name}**: no held-out fit on {fit.seeds - fit.held_out_seeds} of "
                f"{fit.seeds} seeds (held_out: 0, or fewer than 2 demonstrations): its held-out "
                "columns are over the others only."
            )
    return "\n".join([*lines, *([""] + notes if notes else [])]) + "\n"


@dataclasses.dataclass(frozen=True)
class CloningFitSection:
    """The "Cloning fit" table of ``leaderboard.md`` as a report section."""

    key: str = "cloning_fit"
    caveat_place: CaveatPlace = "outputs"  # it has no caveats
    markdown_place: MarkdownPlace = "after"

    def collect(
        self, cells: Sequence[Any], methods: Sequence[str], run: StoredRun
    ) -> dict[str, CloningFit]:
        """The reported entries' :func:`cloning_fits` (empty: no cloning control recorded one)."""
        return {m: f for m, f in cloning_fits(cells).items() if m in methods}

    def column(self, data: Mapping[str, CloningFit]) -> Column | None:
        """None: the fits have a table of their own."""
        return None

    def markdown(self, data: Mapping[str, CloningFit], curves: Mapping[str, LearningCurves]) -> str:
        """:func:`cloning_fit_markdown`."""
        return cloning_fit_markdown(data)

    def json(self, data: Mapping[str, CloningFit]) -> dict[str, Any]:
        """``cloning_fit``: method entry -> its fit (null where undefined)."""
        return {
            self.key: {
                name: {
                    field.name: json_number(getattr(fit, field.name))
                    if isinstance(getattr(fit, field.name), float)
                    else getattr(fit, field.name)
                    for field in dataclasses.fields(fit)
                }
                for name, fit in data.items()
            }
        }

    def caveats(self, data: Any) -> tuple[str, ...]:
        """None."""
        return ()


SECTION = CloningFitSection()
