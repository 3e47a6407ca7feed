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

``bc_ppo`` clones the learner's policy in each evaluation cell, so its fit is an evaluation cell's
(``EvaluationRecord.cloning_fit``): its row is a mean over seeds × test tasks, and a note under
the table says so (a run without it prints the table it always did).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from opt_suite.report.episodes import LearningCurves
from opt_suite.report.section import CaveatPlace, Column, MarkdownPlace, StoredRun, json_number
from opt_suite.store.records import ClonedFit, DiscoveryRecord, EvaluationRecord

__all__ = ["SECTION", "CloningFit", "CloningFitSection", "cloning_fits", "cloning_fit_markdown"]


@dataclasses.dataclass(frozen=True)
class CloningFit:
    """One cloning control's fit, mean over the seeds that recorded it (NaN: none did).

    Attributes:
      accuracy, log_likelihood: on the demonstrations it was cloned on.
      held_out_accuracy, held_out_log_likelihood: a second clone's, on held-out demonstrations.
      seeds: cells that recorded a fit (one per seed, or per seed and test task when the fit
        is an evaluation cell's: see ``per_task``).
      held_out_seeds: those of them that had demonstrations to hold out.
      per_task: the fit was measured in evaluation cells (``bc_ppo``), so the means are over
        seeds × test tasks, not over seeds.
    """

    accuracy: float
    log_likelihood: float
    held_out_accuracy: float
    held_out_log_likelihood: float
    seeds: int
    held_out_seeds: int
    per_task: bool = False


def cloning_fits(cells: Iterable[Any]) -> dict[str, CloningFit]:
    """Method entry -> its :class:`CloningFit`, from done cells that recorded one.

    A discovery cell's fit (``bc_option``: one per seed) or an evaluation cell's (``bc_ppo``: one
    per seed and test task); an entry with fits of both kinds keeps its discovery cells'.

    Args:
      cells: ``CellInfo``-like rows with ``kind``, ``method``, ``status`` and ``info``.
    """
    found: dict[str, list[ClonedFit]] = {}
    per_task: dict[str, list[ClonedFit]] = {}
    for cell in cells:
        if cell.status != "done" or cell.method is None:
            continue
        fit: ClonedFit | None = None
        if str(cell.kind) == "discovery":
            fit = DiscoveryRecord.from_info(cell.info or {}).cloning_fit
            kept = found
        elif str(cell.kind) == "evaluation":
            fit = EvaluationRecord.from_info(cell.info or {}).cloning_fit
            kept = per_task
        if fit is not None:
            kept.setdefault(cell.method, []).append(fit)
    fits = {method: _mean_fit(values) for method, values in found.items()}
    for method, values in per_task.items():
        fits.setdefault(method, _mean_fit(values, per_task=True))
    return fits


def _mean_fit(fits: list[ClonedFit], per_task: bool = False) -> CloningFit:
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
        per_task,
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
        if fit.per_task:
            notes.append(
                f"- **{name}**: cloned in each evaluation cell, so its row is a mean over seeds × "
                f"test tasks ({fit.seeds} cells, counted in the last column), not over seeds."
            )
        lines.append(
            f"| {name} | {_shown(fit.accuracy)} | {_shown(fit.log_likelihood)} | "
            f"{_shown(fit.held_out_accuracy)} | {_shown(fit.held_out_log_likelihood)} | "
            f"{fit.seeds} ({fit.held_out_seeds}) |"
        )
        if fit.held_out_seeds < fit.seeds:
            notes.append(
                f"- **{name}**: no held-out fit on {fit.seeds - fit.held_out_seeds} of "
                f"{fit.seeds} {'cells' if fit.per_task else 'seeds'} (held_out: 0, or fewer "
                "than 2 demonstrations): its held-out "
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
        """``cloning_fit``: method entry -> its fit (null where undefined).

        ``per_task`` is written only when true: a run without an evaluation cell's fit keeps the
        bytes its ``leaderboard.json`` always had.
        """
        return {
            self.key: {
                name: {
                    field.name: json_number(getattr(fit, field.name))
                    if isinstance(getattr(fit, field.name), float)
                    else getattr(fit, field.name)
                    for field in dataclasses.fields(fit)
                    if field.name != "per_task" or fit.per_task
                }
                for name, fit in data.items()
            }
        }

    def caveats(self, data: Any) -> tuple[str, ...]:
        """None."""
        return ()


SECTION = CloningFitSection()
