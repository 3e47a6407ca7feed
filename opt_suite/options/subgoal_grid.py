"""Shortest routes to one sub-goal on a fully observed MiniGrid grid, read from its encoding.

The sub-goal MiniGrid family (:mod:`opt_suite.families.gymnasium.minigrid_subgoals`) shows the
agent the whole grid as MiniGrid encodes it (``Grid.encode``: [x, y] -> (object, colour, state)),
with the agent's own cell written as (``AGENT``, ``KEY`` if it carries the key else 0, heading),
every number times :data:`CODE_SCALE` (:func:`decode` undoes it).
Everything a sub-goal needs is in that array, so its shortest route is a pure function of one
observation: the scripted sub-goal options (:mod:`opt_suite.options.subgoals`) act on it, and the
demonstration planner (:mod:`opt_suite.demonstrations.minigrid_planner`) chains the same routes.

Pure NumPy and the standard library: no MiniGrid import (the object codes below are MiniGrid
3.2's ``OBJECT_TO_IDX``; a test checks them against it).
"""

from __future__ import annotations

import collections
from collections.abc import Callable

import numpy as np

__all__ = [
    "AGENT",
    "BALL",
    "DOOR",
    "GOAL",
    "KEY",
    "SUBGOALS",
    "CODE_SCALE",
    "after",
    "decode",
    "agent_state",
    "subgoal_plan",
]

# MiniGrid 3.2's OBJECT_TO_IDX (minigrid.core.constants).
EMPTY, WALL, FLOOR, DOOR, KEY, BALL, BOX, GOAL, LAVA, AGENT = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10
#: MiniGrid's door states (``Door.encode``).
DOOR_OPEN, DOOR_CLOSED, DOOR_LOCKED = 0, 1, 2
#: MiniGrid's actions.
LEFT, RIGHT, FORWARD, PICKUP, DROP, TOGGLE, DONE = 0, 1, 2, 3, 4, 5, 6
#: MiniGrid's headings: 0 east, 1 south, 2 west, 3 north (``DIR_TO_VEC``).
STEP = ((1, 0), (0, 1), (-1, 0), (0, -1))

#: The sub-goals, in the order of the family's options: pick up the key, open the door,
#: pick up the ball, reach the goal.
SUBGOALS = ("key", "door", "ball", "goal")

State = tuple[int, int, int]

#: The observation holds MiniGrid's codes times this: the networks scale uint8 frames by 1/255,
#: and MiniGrid's codes (0-10) would reach them as 0-0.04, too faint for a small PPO budget.
CODE_SCALE = 20


def decode(observation: np.ndarray) -> np.ndarray:
    """MiniGrid's codes [x, y, (object, colour, state)] of an observation (int64)."""
    return np.asarray(observation, np.int64) // CODE_SCALE


def agent_state(grid: np.ndarray) -> tuple[State, bool] | None:
    """((x, y, heading), carries the key) of MiniGrid's codes; None without an agent in it."""
    found = np.argwhere(grid[:, :, 0] == AGENT)
    if len(found) == 0:
        return None
    x, y = (int(v) for v in found[0])
    heading = int(grid[x, y, 2])
    if not 0 <= heading < len(STEP):  # not a grid the env drew (a learner's probe frame)
        return None
    return (x, y, heading), int(grid[x, y, 1]) == KEY


def _passable(grid: np.ndarray, x: int, y: int) -> bool:
    kind = int(grid[x, y, 0])
    if kind == DOOR:
        return int(grid[x, y, 2]) == DOOR_OPEN
    return kind in (EMPTY, FLOOR, GOAL, AGENT)


def _route(grid: np.ndarray, start: State, arrived: Callable[[int, int, int], bool]) -> list[int]:
    """Shortest turns and moves from ``start`` to a state ``arrived`` accepts; [] if none."""
    parents: dict[State, tuple[State, int] | None] = {start: None}
    queue = collections.deque([start])
    width, height = grid.shape[:2]
    while queue:
        state = queue.popleft()
        if arrived(*state):
            actions = []
            while (link := parents[state]) is not None:
                state, action = link
                actions.append(action)
            return actions[::-1]
        x, y, d = state
        dx, dy = STEP[d]
        moves = [((x, y, (d - 1) % 4), LEFT), ((x, y, (d + 1) % 4), RIGHT)]
        if 0 <= x + dx < width and 0 <= y + dy < height and _passable(grid, x + dx, y + dy):
            moves.append(((x + dx, y + dy, d), FORWARD))
        for nxt, action in moves:
            if nxt not in parents:
                parents[nxt] = (state, action)
                queue.append(nxt)
    return []


def _cells(grid: np.ndarray, kind: int, state: int | None = None) -> set[tuple[int, int]]:
    hit = grid[:, :, 0] == kind
    if state is not None:
        hit &= grid[:, :, 2] == state
    return {(int(x), int(y)) for x, y in np.argwhere(hit)}


def subgoal_plan(observation: np.ndarray, subgoal: str) -> tuple[list[int], bool | None]:
    """The shortest actions that reach ``subgoal`` from an observation, and whether it is done.

    Returns ``(actions, False)`` with the route and its last action (``pickup`` for the key and
    the ball, ``toggle`` for the door); ``([], True)`` when the sub-goal is already reached (the
    key carried, no locked or closed door, no ball left, the agent on the goal);
    ``([], None)`` when it cannot be reached from here (no agent, nothing to reach, no path, or
    the door without the key).

    Raises:
      ValueError: an unknown sub-goal.
    """
    if subgoal not in SUBGOALS:
        raise ValueError(f"unknown sub-goal {subgoal!r} (expected one of {list(SUBGOALS)})")
    grid = decode(observation)
    found = agent_state(grid)
    if found is None:
        return [], None
    start, carries = found
    if subgoal == "goal":
        goals = _cells(grid, GOAL)
        if not goals:  # the agent stands on it (its cell shows the agent), or there is none
            return [], True
        route = _route(grid, start, lambda x, y, d: (x, y) in goals)
        return (route, False) if route else ([], None)
    if subgoal == "key" and carries:
        return [], True
    if subgoal == "door":
        targets = _cells(grid, DOOR, DOOR_LOCKED) | _cells(grid, DOOR, DOOR_CLOSED)
        if not targets:
            return [], True
        if not carries and not _cells(grid, DOOR, DOOR_CLOSED):
            return [], None  # only a locked door, and no key in hand
        last = TOGGLE
    else:
        targets = _cells(grid, KEY if subgoal == "key" else BALL)
        if not targets:
            return [], True if subgoal == "ball" else None
        last = PICKUP

    def facing(x: int, y: int, d: int) -> bool:
        return (x + STEP[d][0], y + STEP[d][1]) in targets

    if facing(*start):
        return [last], False
    route = _route(grid, start, facing)
    return (route + [last], False) if route else ([], None)


def after(observation: np.ndarray, actions: list[int]) -> np.ndarray:
    """The observation after ``actions``, as the sub-goal env changes its grid (a new array).

    Turns and moves carry the agent's cell (what it stood on comes back when it leaves);
    ``pickup`` facing the key carries it, facing the ball collects it; ``toggle`` facing a
    locked door with the key opens it and uses the key up, facing a closed door opens it.
    """
    grid = decode(observation)
    found = agent_state(grid)
    if found is None:
        raise ValueError("after: no agent in the grid")
    (x, y, d), carries = found
    under = np.array([EMPTY, 0, 0], grid.dtype)
    for action in actions:
        fx, fy = x + STEP[d][0], y + STEP[d][1]
        kind, state = int(grid[fx, fy, 0]), int(grid[fx, fy, 2])
        if action in (LEFT, RIGHT):
            d = (d + (1 if action == RIGHT else -1)) % 4
        elif action == FORWARD and _passable(grid, fx, fy):
            grid[x, y] = under
            under = grid[fx, fy].copy()
            x, y = fx, fy
        elif action == PICKUP and (kind == BALL or (kind == KEY and not carries)):
            grid[fx, fy] = (EMPTY, 0, 0)
            carries = carries or kind == KEY
        elif action == TOGGLE and kind == DOOR and state != DOOR_OPEN:
            if state == DOOR_CLOSED or carries:
                grid[fx, fy, 2] = DOOR_OPEN
                carries = carries and state == DOOR_CLOSED
        grid[x, y] = (AGENT, KEY if carries else 0, d)
    return (grid * CODE_SCALE).astype(np.asarray(observation).dtype)
