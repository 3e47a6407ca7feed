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
24 of 24.

P is computed on the raw metric: within one task every run shares the task's scale, so normalising
would change nothing when X and Y ran the same seeds, and a ``references: measure`` run's per-seed
experts would otherwise mix a seed's luck into the comparison.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from opt_suite.report.baseline import Baseline
from opt_suite.report.leaderboard import Improvement, improvement, oriented, rng_for
from opt_suite.report.metrics import METRICS

__all__ = ["EntryComparison", "compare_entries"]


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

    @property
    def tasks(self) -> int:
        """The test tasks compared."""
        return self.tasks_won + self.tasks_tied + self.tasks_lost

    def verdict(self) -> str:
        """Beats, loses to or ties: whether P's task interval lies above, below or across 0.5.

        The task interval is the wider one: it also covers the choice of test tasks.
        """
        p = self.improvement
        if p.task_ci_low > 0.5:
            return "beats"
        if p.task_ci_high < 0.5:
            return "loses to"
        return "ties"


def compare_entries(
    runs: Baseline, x: str, y: str, metric: str = "auc", reps: int = 2000
) -> EntryComparison:
    """X's runs against Y's in ``runs`` (a loaded ``runs.json``) on ``metric``.

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
    p = improvement(metric, vx, vy, reps, rng_for(x, metric, "vs", y))
    paired = None
    if rx.seeds == ry.seeds:
        paired = improvement(metric, vx, vy, reps, rng_for(x, metric, "paired vs", y), True)
    ox, oy = oriented(metric, vx), oriented(metric, vy)
    # per task: the share of (run of X, run of Y) pairs X wins, ties counting half (rliable's P)
    per_task = np.mean(
        (ox[:, None, :] > oy[None, :, :]) + 0.5 * (ox[:, None, :] == oy[None, :, :]), axis=(0, 1)
    )
    return EntryComparison(
        x,
        y,
        metric,
        p,
        paired,
        tasks_won=int(np.sum(per_task > 0.5)),
        tasks_tied=int(np.sum(per_task == 0.5)),
        tasks_lost=int(np.sum(per_task < 0.5)),
    )
