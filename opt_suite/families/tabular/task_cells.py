"""Where four-rooms tasks are drawn: a region's cells, a held-out room's split, goal then start.

Pure functions of a :class:`~opt_suite.families.tabular.layouts.Layout` and the ``tasks.vary``
fields, so that :class:`~opt_suite.families.tabular.fourrooms.FourRooms` keeps to its env and
model. A held-out room (``held_out_room``) sends the train goals to the three other rooms and the
test goals to it, and keeps every start outside it.
"""

from __future__ import annotations

import numpy as np

from opt_suite.families.tabular.layouts import ROOMS, Layout, region_cells

__all__ = ["draw", "goal_cells", "held_out_problems", "in_room", "start_cells"]

Cell = tuple[int, int]


def _cells(layout: Layout, fixed: Cell | None, region: str) -> np.ndarray:
    return np.array([fixed]) if fixed is not None else region_cells(layout, region)


def in_room(layout: Layout, cells: np.ndarray, room: str) -> np.ndarray:
    """Bool [n]: which of ``cells`` (int [n, 2]) lie in ``room``."""
    inside = np.zeros(layout.shape, dtype=bool)
    inside[tuple(layout.rooms[room].T)] = True
    return inside[tuple(np.asarray(cells).T)]


def goal_cells(
    layout: Layout, fixed: Cell | None, region: str, held_out: str | None, test: bool
) -> np.ndarray:
    """Int [n, 2] goals: the fixed cell or region; with a held-out room, by split."""
    if held_out is None:
        return _cells(layout, fixed, region)
    if test:
        return layout.rooms[held_out]
    return np.concatenate([layout.rooms[room] for room in ROOMS if room != held_out])


def start_cells(
    layout: Layout, fixed: Cell | None, region: str, held_out: str | None
) -> np.ndarray:
    """Int [n, 2] starts: the fixed cell or region, outside a held-out room."""
    starts = _cells(layout, fixed, region)
    if held_out is None:
        return starts
    starts = starts[~in_room(layout, starts, held_out)]
    if len(starts) == 0:
        raise ValueError(
            f"tasks.vary: no start cell of {region!r} lies outside the held-out room {held_out!r}"
        )
    return starts


def draw(
    goals: np.ndarray, starts: np.ndarray, count: int, rng: np.random.Generator
) -> list[tuple[Cell, Cell]]:
    """``count`` (start, goal) pairs: a goal uniformly, then a start among the other starts."""
    pairs = []
    for _ in range(count):
        goal = goals[rng.integers(len(goals))]
        others = starts[(starts != goal).any(axis=1)]
        if len(others) == 0:
            raise ValueError(f"tasks.vary: no start cell differs from the goal {tuple(goal)}")
        start = others[rng.integers(len(others))]
        pairs.append(((int(start[0]), int(start[1])), (int(goal[0]), int(goal[1]))))
    return pairs


def held_out_problems(
    held_out: str, goal: Cell | None, goal_region: str, start_region: str
) -> list[tuple[str, str]]:
    """``tasks.vary`` fields that contradict a held-out room, as ``(field, message)``."""
    problems = []
    if goal is not None or goal_region != "anywhere":
        problems.append(
            (
                "held_out_room",
                "a held-out room draws the goals itself (train: the other rooms, test: this "
                "one); expected goal null and goal_region anywhere, got goal "
                f"{goal} and goal_region {goal_region!r}",
            )
        )
    if start_region == held_out:
        problems.append(
            (
                "start_region",
                f"starts are drawn outside the held-out room {held_out!r}, so start_region "
                "cannot be that room (expected another region or anywhere)",
            )
        )
    return problems
