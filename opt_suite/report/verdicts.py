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

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from opt_suite.report.metrics import HIGHER_IS_BETTER, RETURN_METRICS
from opt_suite.report.normalise import References, normalised_scores
from opt_suite.verdict import Margins, Verdict, compare

__all__ = ["entry_verdict", "load_references", "margins_json", "margins_of", "verdict_cell"]


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


def entry_verdict(
    metric: str,
    seeds: Sequence[int],
    tasks: Sequence[Any],
    x: Mapping[str, np.ndarray],
    y: Mapping[str, np.ndarray],
    *,
    references: References | None,
    margins: Margins,
    tasks_per_seed: bool,
    comparisons: int,
    reps: int,
    rng: np.random.Generator,
) -> Verdict:
    """X against Y on ``metric``: both entries' ``{metric: [seeds, tasks]}`` on the same pairs.

    On the normalised scale (IQM difference) when ``references`` cover some test task and the
    metric is a return; otherwise the paired P of the raw metric (scale-free: only which run of a
    pair is higher counts).
    """
    if references is not None and metric in RETURN_METRICS:
        nx = normalised_scores(seeds, tasks, x, references, (metric,))
        ny = normalised_scores(seeds, tasks, y, references, (metric,))
        if nx is not None and ny is not None:
            return compare(
                nx.values[metric],
                ny.values[metric],
                normalised=True,
                margin=margins.on(True),
                tasks_per_seed=tasks_per_seed,
                comparisons=comparisons,
                reps=reps,
                rng=rng,
            )
    sign = 1.0 if HIGHER_IS_BETTER[metric] else -1.0
    return compare(
        sign * np.asarray(x[metric], dtype=np.float64),
        sign * np.asarray(y[metric], dtype=np.float64),
        normalised=False,
        margin=margins.on(False),
        tasks_per_seed=tasks_per_seed,
        comparisons=comparisons,
        reps=reps,
        rng=rng,
    )


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
