"""A run's entries judged by the one verdict rule (:func:`opt_suite.verdict.compare`).

The report-side half of the rule: it picks the scale -- a return metric on the normalised scale
when the run measured reference returns (:mod:`opt_suite.report.normalise`), otherwise the paired
P of the raw metric, oriented so that higher is better -- and hands the (seed, task) pairs to the
statistics. Every caller (the leaderboard, :mod:`opt_suite.report.pairwise`, the results pages'
``collect.py``) goes through :func:`entry_verdict`, so one pair of entries gets one verdict
everywhere. The margins and the family size are the caller's: the spec's ``report`` section
declares the margins (a run's ``leaderboard.json`` records them, :func:`margins_of`), the page or
report says how many comparisons share the family-wise error rate.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from opt_suite.report.metrics import HIGHER_IS_BETTER, RETURN_METRICS
from opt_suite.report.normalise import References, normalised_scores
from opt_suite.verdict import Margins, Verdict, compare

if TYPE_CHECKING:  # baseline.py imports the report's builder, which imports this module
    from opt_suite.report.baseline import Baseline

__all__ = [
    "Design",
    "design_of",
    "entry_verdict",
    "load_references",
    "margins_json",
    "margins_of",
    "runs_verdict",
    "verdict_cell",
]


def margins_json(margins: Margins) -> dict[str, float]:
    """The margins as ``leaderboard.json``'s ``protocol.equivalence`` records them."""
    return {"normalised": margins.normalised, "p": margins.p}


def margins_of(protocol: Mapping[str, Any]) -> Margins:
    """The margins a run declared (``protocol.equivalence``); the defaults for older reports.

    A report written before the margins existed ran a spec that could not declare any: its spec
    holds the defaults, so they are the margins it declared.
    """
    found = protocol.get("equivalence") or {}
    default = Margins()
    return Margins(
        float(found.get("normalised", default.normalised)), float(found.get("p", default.p))
    )


def load_references(runs_json: Path) -> References | None:
    """A ``runs.json``'s reference returns (the normalised scale's 0 and 1); None: not measured."""
    refs = json.loads(runs_json.read_text()).get("references")
    if refs is None:
        return None
    return References(
        tuple(refs["seeds"]),
        tuple(refs["tasks"]),
        np.asarray(refs["random"]),
        np.asarray(refs["expert_returns"]),
        refs["expert"],
    )


@dataclasses.dataclass(frozen=True, eq=False)
class Design:
    """What the verdicts of one report or page share, besides the two entries' scores.

    Attributes:
        references: the run's reference returns (None: not measured; the paired P then).
        margins: the equivalence margins the spec declared.
        tasks_per_seed: each seed drew its own test tasks (hierarchical resampling).
        comparisons: the verdicts of the report or page (one Bonferroni family).
        reps: bootstrap resamples.
    """

    references: References | None
    margins: Margins
    tasks_per_seed: bool
    comparisons: int
    reps: int


def design_of(runs: Baseline, protocol: Mapping[str, Any], comparisons: int) -> Design:
    """The design of a committed run (``runs``, a loaded ``runs.json``) for ``comparisons``.

    Its reference returns, and the margins and resamples its leaderboard's ``protocol`` recorded.
    """
    return Design(
        references=load_references(runs.path),
        margins=margins_of(protocol),
        tasks_per_seed=runs.tasks_per_seed,
        comparisons=comparisons,
        reps=int(protocol["bootstrap"]),
    )


def entry_verdict(
    metric: str,
    seeds: Sequence[int],
    tasks: Sequence[Any],
    x: Mapping[str, np.ndarray],
    y: Mapping[str, np.ndarray],
    design: Design,
    rng: np.random.Generator,
) -> Verdict:
    """X against Y on ``metric``: both entries' ``{metric: [seeds, tasks]}`` on the same pairs.

    On the normalised scale (IQM difference) when the design's references cover some test task
    and the metric is a return; otherwise the paired P of the raw metric, oriented so that higher
    is better (scale-free: only which run of a pair is higher counts).
    """
    sign = 1.0 if HIGHER_IS_BETTER[metric] else -1.0
    found = (sign * np.asarray(x[metric]), sign * np.asarray(y[metric]))
    normalised, unscaled = False, False
    if design.references is not None and metric in RETURN_METRICS:
        nx = normalised_scores(seeds, tasks, x, design.references, (metric,))
        ny = normalised_scores(seeds, tasks, y, design.references, (metric,))
        if nx is not None and ny is not None:
            found, normalised = (nx.values[metric], ny.values[metric]), True
        else:
            unscaled = True
    decided = compare(
        *found,
        normalised=normalised,
        margin=design.margins.on(normalised),
        tasks_per_seed=design.tasks_per_seed,
        comparisons=design.comparisons,
        reps=design.reps,
        rng=rng,
    )
    if unscaled:  # said beside the verdict: its scale is not the one the run was measured for
        said = "NO NORMALISED SCALE: no test task's references define one; judged on the paired P"
        caveat = f"{said}; {decided.caveat}" if decided.caveat else said
        decided = dataclasses.replace(decided, caveat=caveat)
    return decided


def runs_verdict(
    runs: Baseline, x: str, y: str, metric: str, design: Design, rng: np.random.Generator
) -> Verdict:
    """:func:`entry_verdict` of two entries of a loaded ``runs.json`` (same seeds and tasks)."""
    rx, ry = runs.methods[x], runs.methods[y]
    if (rx.seeds, rx.tasks) != (ry.seeds, ry.tasks):
        raise ValueError(f"{runs.path}: {x!r} and {y!r} ran different seeds or tasks (no pairs)")
    return entry_verdict(metric, rx.seeds, rx.tasks, rx.metrics, ry.metrics, design, rng)


def verdict_cell(decision: Mapping[str, Any] | None) -> str:
    """A verdict as one table cell (its outcome first); "—" where there is none."""
    if decision is None:
        return "—"
    text = (
        f"**{decision['outcome']}**: {decision['effect']:.2f}"
        f" [{decision['ci_low']:.2f}, {decision['ci_high']:.2f}] {decision['interval']},"
        f" {'IQM difference' if decision['scale'] == 'normalised' else 'paired P'};"
        f" margin {decision['margin_text']}"
    )
    if decision.get("detectable") is not None:
        text += f"; detectable ≥ {decision['detectable']:.2f}"
    if decision.get("caveat"):
        text += f"; {decision['caveat']}"
    return text
