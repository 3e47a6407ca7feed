"""Any two method entries of a run, compared as the leaderboard compares one with its baseline.

A leaderboard gives P(X > baseline) for one baseline (``report.baseline``). The question a
reviewer asks first of a method with controls -- "does X beat *each* other use of the same
demonstrations?" -- needs X against several entries. :func:`compare_entries` answers it from a run's
``runs.json`` (:func:`opt_suite.report.load_baseline`) with the leaderboard's own statistics
(:func:`opt_suite.report.leaderboard.improvement`: rliable's P over all pairs of runs per task, and
the paired P over (seed, task) where both entries ran every pair, each with its seed and task
intervals), its confidence level, and a generator seeded by the leaderboard's rule
(:func:`opt_suite.report.leaderboard.rng_for`), so a results page's numbers are reproducible to the
digit. It adds one count the leaderboard lacks: on how many test tasks X wins the majority of
the run pairs (per-task P > 0.5), ties (= 0.5) and loses: "P = 0.60" can be 15 of 24 tasks or
24 of 24. When each seed drew its own test tasks (``settings.test_tasks: per_seed``), a task
index names a different task on every seed, so the count is over the (seed, task) pairs: X's run
against Y's run of the same seed and task.

P is computed on the raw metric: within one task every run shares the task's scale, so normalising
would change nothing when X and Y ran the same seeds. The verdict is the suite's one rule
(:func:`opt_suite.report.verdicts.entry_verdict`): better / equivalent / worse / inconclusive from
an interval that resamples seeds as the unit, on the normalised scale where the run measured
references, with the spec's equivalence margin and a Bonferroni level over the page's comparisons.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from opt_suite import stats
from opt_suite.report.baseline import Baseline
from opt_suite.report.leaderboard import Improvement, improvement, oriented, rng_for
from opt_suite.report.metrics import METRICS
from opt_suite.report.normalise import References
from opt_suite.report.verdicts import Design, margins_of, runs_verdict, verdict_cell
from opt_suite.verdict import Margins, Verdict, familywise_statement

__all__ = [
    "EntryComparison",
    "compare_entries",
    "comparison_markdown",
    "comparison_rows",
]


@dataclasses.dataclass(frozen=True)
class EntryComparison:
    """X against Y on one metric: P with intervals, the paired P where defined, per-task tallies."""

    x: str
    y: str
    metric: str
    improvement: Improvement
    paired: Improvement | None  # None: X and Y did not run the same (seed, task) pairs
    tasks_won: int
    tasks_tied: int
    tasks_lost: int
    #: the tallies count (seed, task) pairs: the test tasks were drawn per seed
    per_seed_pairs: bool = False
    #: the one verdict rule's (:mod:`opt_suite.verdict`); None: X and Y ran different seeds
    decision: Verdict | None = None

    @property
    def tasks(self) -> int:
        """The test tasks (or, drawn per seed, the (seed, task) pairs) compared."""
        return self.tasks_won + self.tasks_tied + self.tasks_lost

    def verdict(self) -> str:
        """Better / equivalent / worse / inconclusive (:mod:`opt_suite.verdict`); "—" unpaired."""
        return "—" if self.decision is None else self.decision.outcome


def compare_entries(
    runs: Baseline,
    x: str,
    y: str,
    metric: str = "auc",
    reps: int = 2000,
    baseline: str | None = None,
    design: Design | None = None,
) -> EntryComparison:
    """X's runs against Y's in ``runs`` (a loaded ``runs.json``) on ``metric``.

    ``baseline``: the run's ``report.baseline``; when Y is it, the generator is the leaderboard's
    own, so that with the leaderboard's ``reps`` every number equals the leaderboard's.
    ``design``: the verdict's references, margins and family (:class:`Design`; None: no
    references, the default margins, a family of one).

    Raises:
        KeyError: an entry or metric the file does not hold (the message names it).
        ValueError: X and Y ran different test tasks.
    """
    if metric not in METRICS:
        raise KeyError(f"unknown metric {metric!r}; expected one of {', '.join(METRICS)}")
    for name in (x, y):
        if name not in runs.methods:
            raise KeyError(
                f"{runs.path}: no method entry {name!r}; it holds {', '.join(sorted(runs.methods))}"
            )
    rx, ry = runs.methods[x], runs.methods[y]
    if tuple(map(str, rx.tasks)) != tuple(map(str, ry.tasks)):
        raise ValueError(f"{runs.path}: {x!r} and {y!r} ran different test tasks")
    vx, vy = rx.metrics[metric], ry.metrics[metric]
    tag = () if y == baseline else ("vs", y)  # the leaderboard's streams against its baseline
    p = improvement(metric, vx, vy, reps, rng_for(x, metric, "poi", *tag))
    paired, decision = None, None
    if rx.seeds == ry.seeds:
        paired = improvement(metric, vx, vy, reps, rng_for(x, metric, "paired", *tag), True)
        design = design or Design(None, Margins(), runs.tasks_per_seed, 1, reps)
        decision = runs_verdict(runs, x, y, metric, design, rng_for(x, metric, "verdict", y))
    ox, oy = oriented(metric, vx), oriented(metric, vy)
    per_seed = runs.tasks_per_seed and paired is not None
    if per_seed:  # each (seed, task) is its own task: X's run against Y's run of it
        per_task = stats.paired_wins(ox, oy).ravel()
    else:  # per task: the share of (run of X, run of Y) pairs X wins, ties half (rliable's P)
        per_task = stats.per_task_probability_of_improvement(ox, oy)
    return EntryComparison(
        x,
        y,
        metric,
        p,
        paired,
        tasks_won=int(np.sum(per_task > 0.5)),
        tasks_tied=int(np.sum(per_task == 0.5)),
        tasks_lost=int(np.sum(per_task < 0.5)),
        per_seed_pairs=per_seed,
        decision=decision,
    )


def _interval(e: Improvement | None) -> dict[str, float] | None:
    return None if e is None else dataclasses.asdict(e)


def comparison_rows(
    runs: Baseline,
    leaderboard: dict[str, Any],
    x: str,
    others: Sequence[str],
    metric: str = "auc",
    comparisons: int | None = None,
    references: References | None = None,
) -> list[dict[str, Any]]:
    """X against each of ``others``: one JSON-ready row per entry, for a results page's table.

    Each row holds the entry's IQM of ``metric`` as its leaderboard (``leaderboard.json``) gives
    it -- on the normalised scale when the leaderboard has one, else raw (``scale`` says which) --
    and X against it (:func:`compare_entries`): P, the paired P, the task tallies and the verdict
    (its fields under ``decision``). ``comparisons``: the verdicts of the whole page, sharing one
    family-wise error rate (default: these rows). ``references``: the run's reference returns
    (:func:`opt_suite.report.verdicts.load_references`), for verdicts on the normalised scale.
    """
    normalised = leaderboard.get("normalised") or {}
    scale = "normalised" if normalised.get("methods") else "raw"
    table = normalised["methods"] if scale == "normalised" else leaderboard["methods"]
    reps = int(leaderboard.get("protocol", {}).get("bootstrap", 2000))
    baseline = (leaderboard.get("probability_of_improvement") or {}).get("baseline")
    family = len(others) if comparisons is None else comparisons
    margins = margins_of(leaderboard.get("protocol", {}))
    design = Design(references, margins, runs.tasks_per_seed, family, reps)
    rows = []
    for y in others:
        c = compare_entries(runs, x, y, metric, reps, baseline, design)
        rows.append(
            {
                "x": x,
                "entry": y,
                "metric": metric,
                "scale": scale,
                "x_iqm": table[x][metric],
                "entry_iqm": table[y][metric],
                "p": _interval(c.improvement),
                "paired_p": _interval(c.paired),
                "tasks_won": c.tasks_won,
                "tasks_tied": c.tasks_tied,
                "tasks_lost": c.tasks_lost,
                "tallied": "(seed, task) pairs" if c.per_seed_pairs else "test tasks",
                "verdict": c.verdict(),
                "decision": None if c.decision is None else c.decision.as_dict(),
            }
        )
    return rows


def _fmt_iqm(e: Mapping[str, float]) -> str:
    return (
        f"{e['iqm']:.2f} [{e['ci_low']:.2f}, {e['ci_high']:.2f}]"
        f" [{e['task_ci_low']:.2f}, {e['task_ci_high']:.2f}]"
    )


def _fmt_p(p: Mapping[str, float] | None) -> str:
    if p is None:
        return "—"
    return (
        f"{p['probability']:.2f} [{p['ci_low']:.2f}, {p['ci_high']:.2f}]"
        f" [{p['task_ci_low']:.2f}, {p['task_ci_high']:.2f}]"
    )


def comparison_markdown(rows: Sequence[Mapping[str, Any]]) -> str:
    """The rows of :func:`comparison_rows` as a Markdown table (one X, one metric)."""
    if not rows:
        return ""
    x, metric, scale = rows[0]["x"], rows[0]["metric"], rows[0]["scale"]
    tallied = rows[0].get("tallied", "test tasks")
    lines = [
        f"| {x} against | {metric} IQM ({scale}) [seeds] [tasks] | {x}: {metric} IQM"
        f" | P({x} > entry) [seeds] [tasks] | paired P [seeds] [tasks]"
        f" | {tallied} won / tied / lost | verdict: {x} against the entry |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['entry']} | {_fmt_iqm(r['entry_iqm'])} | {_fmt_iqm(r['x_iqm'])}"
            f" | {_fmt_p(r['p'])} | {_fmt_p(r['paired_p'])}"
            f" | {r['tasks_won']} / {r['tasks_tied']} / {r['tasks_lost']}"
            f" | {verdict_cell(r.get('decision'))} |"
        )
    won = (
        "A (seed, task) pair is won when X's run beats the entry's run (the test tasks were drawn"
        " per seed: a task index names a different task on every seed, so [seeds] resamples seeds"
        " and their tasks together within each task slot)."
        if tallied != "test tasks"
        else "A task is won when its own P > 0.5."
    )
    decided = [r["decision"] for r in rows if r.get("decision")]
    family = decided[0]["comparisons"] if decided else len(rows)
    lines += [
        "",
        f"P({x} > entry): per test task, the share of all pairs (run of {x}, run of the entry)"
        f" that {x} wins, ties counting half, averaged over tasks (rliable's probability of"
        " improvement, on the raw metric). Paired P: the share of (seed, task) pairs won, where"
        " both ran the same seeds (common random numbers). [seeds]: 95% percentile bootstrap"
        " resampling seeds within each task; [tasks]: resampling test tasks, then seeds within"
        f" them; both describe, neither decides. {won}",
        "",
        f"Verdict: the suite's one rule (docs/results-and-gate.md, Verdicts): better / worse when"
        " the interval, which resamples the seed as the unit, lies clear of no difference;"
        " equivalent when it lies within the margin the spec declared; otherwise inconclusive,"
        f" with the smallest difference the design could have detected."
        f" {familywise_statement(family)}",
    ]
    return "\n".join(lines) + "\n"
