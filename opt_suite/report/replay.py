"""Exact replay: which (method, seed, task) cells of a run equal a baseline's to the last bit.

On one CPU model a rerun of the same code reproduces every number bit for bit
(docs/reliability-numbers.md), so before any statistics the gate can say something stronger than
"not significantly worse": *identical*, or *changed* and where. A refactor that must not change
numbers is then proven not to, and a change that does is named cell by cell even when it is not a
regression. The same comparison tells whoever refreshes a baseline what moved.

A cell is identical when every metric the baseline stores for it (auc, final return, episodes to
threshold, jump start, improvement -- all functions of the cell's returns) is equal, NaN equal to
NaN. A baseline keeps the metrics, not the returns, so "identical" means "every stored metric
equal"; a change of returns that leaves all five metrics unchanged to the last bit goes unseen.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from opt_suite.report.baseline import BaselineRuns

__all__ = ["Replay", "format_replay", "listed", "replay"]


@dataclasses.dataclass(frozen=True)
class Replay:
    """The cells of the old grid found in the new one, and which of them changed."""

    compared: int
    #: (method entry, seed, task) of every cell whose stored metrics differ
    changed: tuple[tuple[str, Any, Any], ...]
    #: per method entry: (cells compared, cells changed, old mean, new mean) of ``metric``
    methods: Mapping[str, tuple[int, int, float, float]]
    metric: str

    @property
    def identical(self) -> bool:
        """Every compared cell equal (and at least one compared)."""
        return not self.changed and self.compared > 0


def replay(
    new: Mapping[str, BaselineRuns], old: Mapping[str, BaselineRuns], metric: str = "auc"
) -> Replay:
    """Compare every cell of ``old`` that ``new`` also holds; cells only one side has are skipped.

    Seeds and tasks are matched as text (a baseline stores them through JSON). A run's metrics
    (:class:`~opt_suite.report.metrics.MethodMetrics`) go in as ``BaselineRuns(m.seeds, m.tasks,
    m.values)``.
    """
    changed: list[tuple[str, Any, Any]] = []
    methods: dict[str, tuple[int, int, float, float]] = {}
    compared = 0
    for name, before in old.items():
        after = new.get(name)
        if after is None:
            continue
        where_s = {str(k): i for i, k in enumerate(after.seeds)}
        where_t = {str(k): i for i, k in enumerate(after.tasks)}
        old_s = [k for k, s in enumerate(before.seeds) if str(s) in where_s]
        old_t = [k for k, t in enumerate(before.tasks) if str(t) in where_t]
        new_s = [where_s[str(before.seeds[k])] for k in old_s]
        new_t = [where_t[str(before.tasks[k])] for k in old_t]

        def pick(grid: BaselineRuns, rows: list[int], cols: list[int], key: str) -> np.ndarray:
            return np.asarray(grid.metrics[key], dtype=np.float64)[np.ix_(rows, cols)]

        moved = np.zeros((len(old_s), len(old_t)), dtype=bool)
        for key in (k for k in before.metrics if k in after.metrics):
            a, b = pick(after, new_s, new_t, key), pick(before, old_s, old_t, key)
            moved |= ~((a == b) | (np.isnan(a) & np.isnan(b)))
        for s_at, t_at in zip(*np.nonzero(moved), strict=True):
            changed.append((name, before.seeds[old_s[s_at]], before.tasks[old_t[t_at]]))
        cells = moved.size
        compared += cells
        means = (float("nan"), float("nan"))
        if metric in before.metrics and metric in after.metrics and cells:
            means = (
                float(np.mean(pick(before, old_s, old_t, metric))),
                float(np.mean(pick(after, new_s, new_t, metric))),
            )
        methods[name] = (cells, int(moved.sum()), *means)
    return Replay(compared, tuple(changed), methods, metric)


def listed(values: Iterable[Any]) -> str:
    """``[0, 1, 2, 5]`` as ``0-2, 5`` (seed and task lists are often ranges)."""
    items = list(dict.fromkeys(values))
    if not all(isinstance(v, int) for v in items):
        return ", ".join(map(str, items))
    parts, ordered = [], sorted(items)
    start = prev = ordered[0]
    for v in [*ordered[1:], None]:
        if v is not None and v == prev + 1:
            prev = v
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if v is not None:
            start = prev = v
    return ", ".join(parts)


def format_replay(r: Replay, against: str = "the baseline") -> str:
    """One line when identical; otherwise the changed cells, grouped by method entry and seed."""
    if r.compared == 0:
        return f"replay: no cell of the run is in {against}: nothing to compare exactly"
    if r.identical:
        return (
            f"replay: identical: all {r.compared} (method, seed, task) cells equal {against} to"
            " the last bit (every stored metric)"
        )
    lines = [f"replay: changed: {len(r.changed)} of {r.compared} cells differ from {against}:"]
    by_method: dict[str, dict[Any, list[Any]]] = {}
    for name, seed, task in r.changed:
        by_method.setdefault(name, {}).setdefault(seed, []).append(task)
    for name, (cells, moved, before, after) in r.methods.items():
        if not moved:
            lines.append(f"  {name}: unchanged ({cells} cells)")
            continue
        seeds = "; ".join(
            f"seed {seed} task{'s' if len(tasks) > 1 else ''} {listed(tasks)}"
            for seed, tasks in by_method[name].items()
        )
        lines.append(
            f"  {name}: {moved} of {cells} cells changed ({seeds}); mean {r.metric}"
            f" {before:.4g} -> {after:.4g}"
        )
    return "\n".join(lines)
