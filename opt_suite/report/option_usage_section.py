"""How the test-time learner used each method entry's options, from the counts the run recorded.

A learner that counts its choices (``counts_usage``: ``smdp_q_learning``, ``tf_agents``) keeps
each evaluation cell's counts in ``cells/<id>/option_usage.npz``. This section reads those
recorded counts only (:func:`opt_suite.report.usage_replay.recorded_counts`) -- it never
replays a cell; ``opt-suite option-usage`` does that for older runs and writes the per-option,
per-run detail -- and pools them per method entry with
:func:`opt_suite.report.option_usage.totals` (ratios of sums: every decision weighs the same): the
share of decisions that chose an option over all episodes and over the last
``report.final_fraction`` of them, the share of primitive steps taken inside options and the
mean option length (steps per call). It explains a win or a loss: options that the learner
stops choosing cannot be what made an entry better.

``leaderboard.md`` gains an "Option usage" table and ``leaderboard.json`` ``option_usage``. A run
that recorded no counts (a learner that does not count, a store written before the runner kept
them) has no section, so its leaderboard is as before; entries without options on any counted
run (primitives) are left out of the table.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

from opt_suite.report.episodes import LearningCurves
from opt_suite.report.option_usage import RunUsage, UsageTotals, run_usage, totals
from opt_suite.report.section import (
    CaveatPlace,
    Column,
    MarkdownPlace,
    StoredRun,
    fmt,
    json_number,
    markdown_table,
)
from opt_suite.report.usage_replay import recorded_counts

__all__ = ["SECTION", "EntryUsage", "OptionUsageSection", "recorded_usage"]


@dataclasses.dataclass(frozen=True)
class EntryUsage:
    """One method entry's option usage, pooled over its evaluation runs that recorded counts.

    Attributes:
      all: the counts summed over every episode of those runs.
      last: over each run's last ``fraction`` of its episodes (the final return's window).
      runs: the entry's done evaluation cells that recorded counts.
      of_runs: its done evaluation cells.
      fraction: the fraction of episodes ``last`` covers.
    """

    all: UsageTotals
    last: UsageTotals
    runs: int
    of_runs: int
    fraction: float


def recorded_usage(
    cells: Sequence[Any], methods: Sequence[str], run: StoredRun
) -> tuple[dict[str, list[RunUsage]], dict[str, int]]:
    """Per entry, the counts its done evaluation cells recorded, and how many cells are done.

    The counts are the learner's own, read back from each cell's ``option_usage.npz`` (digest
    checked by the store); a cell without one is counted as done but contributes no counts.
    """
    found: dict[str, list[RunUsage]] = {m: [] for m in methods}
    done = dict.fromkeys(methods, 0)
    for cell in cells:
        if cell.status != "done" or str(cell.kind) != "evaluation" or cell.method not in found:
            continue
        done[cell.method] += 1
        usage = recorded_counts(run.store, cell.cell_id)
        if usage is not None:
            # The store's cells do not say which test task a cell ran; the pooled totals need
            # none (the per-task detail is `opt-suite option-usage`'s).
            found[cell.method].append(run_usage(cell.method, cell.seed, None, usage))
    return found, done


@dataclasses.dataclass(frozen=True)
class OptionUsageSection:
    """The "Option usage" table of ``leaderboard.md`` and ``option_usage`` of its JSON."""

    key: str = "option_usage"
    caveat_place: CaveatPlace = "outputs"  # it has no caveats
    markdown_place: MarkdownPlace = "after"

    def collect(
        self, cells: Sequence[Any], methods: Sequence[str], run: StoredRun
    ) -> dict[str, EntryUsage]:
        """Each entry with options on some counted run: its :class:`EntryUsage` (empty: none)."""
        found, done = recorded_usage(cells, methods, run)
        fraction = run.spec.report.final_fraction
        return {
            m: EntryUsage(
                totals(runs, "all", fraction),
                totals(runs, "last", fraction),
                len(runs),
                done[m],
                fraction,
            )
            for m, runs in found.items()
            if any(r.option_names for r in runs)
        }

    def column(self, data: Mapping[str, EntryUsage]) -> Column | None:
        """None: the usage has a table of its own."""
        return None

    def markdown(self, data: Mapping[str, EntryUsage], curves: Mapping[str, LearningCurves]) -> str:
        """The "Option usage" section of ``leaderboard.md``."""
        last = f"{100 * next(iter(data.values())).fraction:g}%"
        header = [
            "method",
            "decisions per episode",
            "decisions that chose an option",
            f"… in the last {last} of episodes",
            "primitive steps inside options",
            "mean option length (steps per call)",
            "runs counted",
        ]
        rows = [
            [
                name,
                fmt(u.all.decisions_per_episode, 1),
                _percent(u.all.option_fraction),
                _percent(u.last.option_fraction),
                _percent(u.all.option_step_share),
                fmt(u.all.mean_option_length, 2),
                f"{u.runs} of {u.of_runs}",
            ]
            for name, u in data.items()
        ]
        lines = [
            "## Option usage",
            "",
            "How the test-time learner used each entry's options, from the counts its evaluation"
            " cells recorded (pooled over runs as ratios of sums). A *decision* is one choice of"
            " the policy over options (a primitive action or an option); an option runs for"
            " several primitive steps until it terminates. Per option and per run:"
            " `opt-suite option-usage`.",
            "",
            *markdown_table(header, rows),
        ]
        return "\n".join(lines) + "\n"

    def json(self, data: Mapping[str, EntryUsage]) -> dict[str, Any]:
        """``option_usage``: ``{NAME: {decisions_per_episode, option_fraction, ...}}``."""
        return {
            "option_usage": {
                name: {
                    "decisions_per_episode": json_number(u.all.decisions_per_episode),
                    "option_fraction": json_number(u.all.option_fraction),
                    "option_fraction_last": json_number(u.last.option_fraction),
                    "last_fraction": u.fraction,
                    "option_step_share": json_number(u.all.option_step_share),
                    "mean_option_length": json_number(u.all.mean_option_length),
                    "runs": u.runs,
                    "of_runs": u.of_runs,
                }
                for name, u in data.items()
            }
        }

    def caveats(self, data: Any) -> tuple[str, ...]:
        """None."""
        return ()


def _percent(x: float) -> str:
    """A share as a percentage, ``n/a`` when undefined (no decisions, no steps)."""
    return "n/a" if math.isnan(x) else f"{100 * x:.1f}%"


SECTION = OptionUsageSection()
