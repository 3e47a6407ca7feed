"""The plain data every report is computed from: one row per (method, seed, task, episode).

Reports never read the results store directly (see :mod:`opt_suite.report.source`); they take an
:class:`EpisodeTable`, which tests build from synthetic numbers, and turn it into one
:class:`LearningCurves` grid per method entry.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = [
    "COLUMNS",
    "FRAME_POINTS",
    "EpisodeTable",
    "LearningCurves",
    "ReportDataError",
    "learning_curves",
]

# Column names of returns.csv and of the rows :meth:`EpisodeTable.from_rows` accepts. ``frames``:
# the emulator frames a run used from its start to the end of that episode (cumulative).
COLUMNS = ("method", "seed", "task", "episode", "return", "steps", "frames")


class ReportDataError(ValueError):
    """The results cannot be reported: empty, incomplete or inconsistent. The message says which."""


def label_key(label: Any) -> tuple:
    """Sort key that orders integer labels numerically and puts them before text labels."""
    if isinstance(label, int | np.integer):
        return (0, int(label), "")
    return (1, 0, str(label))


@dataclasses.dataclass(frozen=True, eq=False)
class EpisodeTable:
    """Column arrays of equal length; ``returns`` is the ``return`` column (a Python keyword).

    ``frames`` is optional: without it, every run spends one frame per primitive step and the
    column is the cumulative sum of ``steps`` over each (method, seed, task) run's episodes.
    """

    method: np.ndarray
    seed: np.ndarray
    task: np.ndarray
    episode: np.ndarray
    returns: np.ndarray
    steps: np.ndarray
    frames: np.ndarray | None = None

    def __post_init__(self) -> None:
        lengths = {
            f.name: len(getattr(self, f.name))
            for f in dataclasses.fields(self)
            if getattr(self, f.name) is not None
        }
        if len(set(lengths.values())) != 1:
            raise ReportDataError(f"episode columns have different lengths: {lengths}")
        if self.frames is None:
            object.__setattr__(self, "frames", self._cumulative_steps())

    def _cumulative_steps(self) -> np.ndarray:
        """Each run's steps summed over its episodes so far (one frame per primitive step)."""
        steps = np.asarray(self.steps, dtype=np.int64)
        frames = np.zeros(len(steps), dtype=np.int64)
        runs: dict[tuple, list[int]] = {}
        keys = zip(self.method.tolist(), self.seed.tolist(), self.task.tolist(), strict=True)
        for i, key in enumerate(keys):
            runs.setdefault(key, []).append(i)
        for rows in runs.values():
            rows.sort(key=lambda i: int(self.episode[i]))
            frames[rows] = np.cumsum(steps[rows])
        return frames

    def __len__(self) -> int:
        return len(self.returns)

    @classmethod
    def from_rows(cls, rows: Iterable[Mapping[str, Any] | Sequence[Any]]) -> EpisodeTable:
        """Build from rows: mappings with :data:`COLUMNS` keys, or tuples in that order.

        Rows may all leave out ``frames`` (then it is each run's cumulative steps).
        """
        columns: dict[str, list[Any]] = {name: [] for name in COLUMNS}
        widths = set()
        for row in rows:
            if isinstance(row, Mapping):
                values = [row[name] for name in COLUMNS if name in row or name != "frames"]
            else:
                values = list(row)
            widths.add(len(values))
            if len(values) not in (len(COLUMNS), len(COLUMNS) - 1) or len(widths) > 1:
                raise ReportDataError(
                    f"episode row {row!r} does not have the columns {COLUMNS} (or all but frames)"
                )
            for name, value in zip(COLUMNS, values, strict=False):
                columns[name].append(value)
        frames = columns["frames"]
        return cls(
            method=np.array(columns["method"], dtype=object),
            seed=np.array(columns["seed"], dtype=np.int64),
            task=np.array(columns["task"], dtype=object),
            episode=np.array(columns["episode"], dtype=np.int64),
            returns=np.array(columns["return"], dtype=np.float64),
            steps=np.array(columns["steps"], dtype=np.int64),
            frames=np.array(frames, dtype=np.int64) if frames or not columns["steps"] else None,
        )

    def methods(self) -> list[str]:
        """Method entry names in order of first appearance."""
        return list(dict.fromkeys(self.method.tolist()))


@dataclasses.dataclass(frozen=True, eq=False)
class LearningCurves:
    """One method entry's complete grid: ``returns[s, t, e]`` of seed ``seeds[s]`` on ``tasks[t]``.

    ``episodes`` holds the stored episode numbers (the grid's third axis, sorted).
    """

    method: str
    seeds: tuple[int, ...]
    tasks: tuple[Any, ...]
    episodes: tuple[int, ...]
    returns: np.ndarray
    steps: np.ndarray
    frames: np.ndarray


def _grid(table: EpisodeTable, mask: np.ndarray, name: str) -> LearningCurves:
    seed, task, episode = table.seed[mask], table.task[mask], table.episode[mask]
    seeds = tuple(sorted({int(s) for s in seed}))
    tasks = tuple(sorted(set(task.tolist()), key=label_key))
    episodes = tuple(sorted({int(e) for e in episode}))
    shape = (len(seeds), len(tasks), len(episodes))
    s_idx = np.searchsorted(np.array(seeds), seed)
    t_pos = {t: i for i, t in enumerate(tasks)}
    t_idx = np.array([t_pos[t] for t in task.tolist()], dtype=np.int64)
    e_idx = np.searchsorted(np.array(episodes), episode)
    flat = np.ravel_multi_index((s_idx, t_idx, e_idx), shape)
    counts = np.bincount(flat, minlength=int(np.prod(shape))).reshape(shape)
    if np.any(counts > 1):
        s, t, e = np.argwhere(counts > 1)[0]
        raise ReportDataError(
            f"method {name!r}: seed {seeds[s]}, task {tasks[t]}, episode {episodes[e]} is recorded"
            f" {counts[s, t, e]} times (expected once)"
        )
    if np.any(counts == 0):
        missing = np.argwhere(counts == 0)
        s, t, e = missing[0]
        raise ReportDataError(
            f"method {name!r}: results are incomplete ({len(missing)} of {counts.size} episodes"
            f" missing), e.g. seed {seeds[s]}, task {tasks[t]}, episode {episodes[e]}; every"
            f" (seed, task) run needs the same episodes {episodes[0]}..{episodes[-1]}"
        )
    returns = np.empty(shape)
    steps = np.empty(shape, dtype=np.int64)
    frames = np.empty(shape, dtype=np.int64)
    returns.flat[flat] = table.returns[mask]
    steps.flat[flat] = table.steps[mask]
    frames.flat[flat] = table.frames[mask]
    return LearningCurves(name, seeds, tasks, episodes, returns, steps, frames)


#: Points of the frame axis on which runs with a frame budget are compared (see learning_curves).
FRAME_POINTS = 100


def _frame_grid(
    table: EpisodeTable, mask: np.ndarray, name: str, budget: int, points: int
) -> LearningCurves:
    """A method's runs resampled onto ``points`` evenly spaced frames in (0, budget].

    Point k (frame ``budget * (k + 1) / points``) holds the return (and cumulative primitive
    steps) of the run's latest episode that had ended by that frame; points before the run's
    first episode ended hold that first episode's.
    """
    seed, task, episode = table.seed[mask], table.task[mask], table.episode[mask]
    returns_all, steps_all, frames_all = table.returns[mask], table.steps[mask], table.frames[mask]
    seeds = tuple(sorted({int(s) for s in seed}))
    tasks = tuple(sorted(set(task.tolist()), key=label_key))
    axis = budget * np.arange(1, points + 1, dtype=np.float64) / points
    shape = (len(seeds), len(tasks), points)
    returns = np.empty(shape)
    steps = np.empty(shape, dtype=np.int64)
    task_list = task.tolist()
    for i, s in enumerate(seeds):
        for j, t in enumerate(tasks):
            rows = np.flatnonzero((seed == s) & np.array([x == t for x in task_list], bool))
            if len(rows) == 0:
                raise ReportDataError(
                    f"method {name!r}: results are incomplete: seed {s} has no episodes on task "
                    f"{t}; every (seed, task) run is needed"
                )
            rows = rows[np.argsort(episode[rows], kind="stable")]
            if len(set(episode[rows].tolist())) != len(rows):
                raise ReportDataError(
                    f"method {name!r}: seed {s}, task {t} records an episode twice (expected once)"
                )
            ends = frames_all[rows]
            if np.any(np.diff(ends) < 0):
                raise ReportDataError(
                    f"method {name!r}: seed {s}, task {t}: frames decrease between episodes"
                )
            latest = np.maximum(np.searchsorted(ends, axis, side="right") - 1, 0)
            returns[i, j] = returns_all[rows][latest]
            steps[i, j] = np.cumsum(steps_all[rows])[latest]
    frames = np.broadcast_to(np.rint(axis).astype(np.int64), shape).copy()
    return LearningCurves(name, seeds, tasks, tuple(range(points)), returns, steps, frames)


def learning_curves(
    table: EpisodeTable,
    methods: Sequence[str] | None = None,
    frame_budget: int | None = None,
    points: int = FRAME_POINTS,
) -> dict[str, LearningCurves]:
    """Group the table into one complete grid per method entry.

    With a budget in episodes every run has the same episodes, and the grid's last axis is the
    episode. With a ``frame_budget`` (the spec's ``evaluation.frames``) runs end different numbers
    of episodes within the same frames, so each run becomes a step function of the frames — the
    return of its latest finished episode — sampled at ``points`` evenly spaced frames up to the
    budget (see :func:`_frame_grid`): every metric then averages over the frame axis (``auc`` is
    the area under the return-vs-frames curve divided by the budget, ``final_return`` the last
    ``final_fraction`` of the frames) and runs with long and short episodes weigh alike.

    Args:
        table: the episodes.
        methods: the order of method entries (the spec's); None keeps the table's order. A
            method named here with no episodes is an error; one in the table but not named here
            is appended.
        frame_budget: the frames each run had (None: a budget in episodes).
        points: points of the frame axis (with a frame budget).

    Raises:
        ReportDataError: the table is empty, a named method has no episodes, or a method's
            (seed, task, episode) grid has a hole or a duplicate.
    """
    if len(table) == 0:
        raise ReportDataError("there are no episodes to report")
    present = table.methods()
    order = list(methods) if methods is not None else []
    order += [m for m in present if m not in order]
    absent = [m for m in order if m not in present]
    if absent:
        raise ReportDataError(f"no episodes recorded for method entries {absent}")
    if not np.all(np.isfinite(table.returns)):
        raise ReportDataError("some recorded returns are NaN or infinite")
    if frame_budget is not None:
        return {
            name: _frame_grid(table, table.method == name, name, frame_budget, points)
            for name in order
        }
    return {name: _grid(table, table.method == name, name) for name in order}
