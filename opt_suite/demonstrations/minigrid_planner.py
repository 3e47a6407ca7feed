"""Shortest-path demonstrations on MiniGrid navigation envs, computed from the env's own grid.

A planner for the ``scripted`` demonstration source (``function:
"opt_suite.demonstrations.minigrid_planner:shortest_path"``). MiniGrid (pip install
'opt-suite[minigrid]') envs expose their grid, the agent's cell and its heading; the agent turns
left (action 0), right (1) or moves forward (2), so the shortest action sequence to the goal is a
breadth-first search over (cell, heading). Walls block; lava is avoided; a closed door is opened
with ``toggle`` (5); a locked door needs the key of its colour, picked up (``pickup``, 3) first —
DoorKey's task: go to the key, pick it up, go to the door, open it, go to the goal (a key the
agent already carries, e.g. picked up by a task's random start actions, is not fetched again).
Anything else (boxes, several keys to choose between) is an error naming what the planner does
not handle.

The suite's sub-goal env (:mod:`opt_suite.families.gymnasium.minigrid_subgoals`: a ``subgoals``
sequence of key, door, ball and goal, balls collected by ``pickup``) is planned sub-goal by
sub-goal: each the shortest route from where the previous one ended
(:func:`opt_suite.options.subgoal_grid.subgoal_plan`, the routes its scripted options take), on
the encoded grid the agent sees, advanced by each route's actions
(:func:`~opt_suite.options.subgoal_grid.after`).

Ties between shortest paths go to the first found (actions tried in the order left, right,
forward), so a task's demonstrations are the same for the same start: MiniGrid's starts vary with
the reset seed, which the source draws from the spec.
"""

from __future__ import annotations

import collections
from typing import Any

from opt_suite.options.subgoal_grid import after, subgoal_plan

__all__ = ["shortest_path", "unplannable", "PlannerError"]

LEFT, RIGHT, FORWARD, PICKUP, TOGGLE = 0, 1, 2, 3, 5
#: MiniGrid's headings: 0 east, 1 south, 2 west, 3 north (``DIR_TO_VEC``).
_STEP = ((1, 0), (0, 1), (-1, 0), (0, -1))


class PlannerError(ValueError):
    """The grid holds something the planner cannot solve (no path, an unsupported object)."""


def _passable(grid: Any, x: int, y: int, opened: set) -> bool:
    cell = grid.get(x, y)
    if cell is None or (x, y) in opened:
        return True
    return cell.type != "lava" and cell.can_overlap()


def _route(grid: Any, start: tuple, goal: Any, opened: set) -> tuple[list[int], tuple]:
    """Turns and moves from ``start`` (x, y, heading) to a state ``goal(x, y, heading)`` accepts."""
    parents: dict[tuple, tuple | None] = {start: None}
    queue = collections.deque([start])
    while queue:
        state = queue.popleft()
        if goal(*state):
            actions = []
            while parents[state] is not None:
                state, action = parents[state]  # type: ignore[misc]
                actions.append(action)
            return actions[::-1], _last(parents, start, goal)
        x, y, d = state
        dx, dy = _STEP[d]
        moves = [((x, y, (d - 1) % 4), LEFT), ((x, y, (d + 1) % 4), RIGHT)]
        if 0 <= x + dx < grid.width and 0 <= y + dy < grid.height:
            if _passable(grid, x + dx, y + dy, opened):
                moves.append(((x + dx, y + dy, d), FORWARD))
        for nxt, action in moves:
            if nxt not in parents:
                parents[nxt] = (state, action)
                queue.append(nxt)
    raise PlannerError("no path")


def _last(parents: dict, start: tuple, goal: Any) -> tuple:
    """The first state ``goal`` accepts, in the search's order (where the route ends)."""
    return next(s for s in parents if goal(*s))


def _find(grid: Any, kind: str) -> list[tuple[int, int, Any]]:
    return [
        (x, y, cell)
        for x in range(grid.width)
        for y in range(grid.height)
        if (cell := grid.get(x, y)) is not None and cell.type == kind
    ]


def _facing(target: tuple[int, int]) -> Any:
    def ahead(x: int, y: int, d: int) -> bool:
        return (x + _STEP[d][0], y + _STEP[d][1]) == target

    return ahead


def unplannable(env: Any) -> str | None:
    """Why :func:`shortest_path` cannot plan on ``env`` (unwrapped, not MiniGrid), else None."""
    if getattr(env, "grid", None) is None or not all(
        hasattr(env, key) for key in ("agent_pos", "agent_dir")
    ):
        return (
            f"shortest_path plans on MiniGrid envs (grid, agent_pos, agent_dir); got "
            f"{type(env).__name__}"
        )
    return None


def shortest_path(env: Any) -> list[int]:
    """The shortest action sequence from the agent's state to the goal of a MiniGrid ``env``.

    Args:
      env: a MiniGrid env (``MiniGridEnv``, unwrapped) just after its reset.

    Raises:
      PlannerError: not a MiniGrid env, no goal, a goal out of reach, or a locked door without
        its key.
    """
    problem = unplannable(env)
    if problem is not None:
        raise PlannerError(problem)
    if getattr(env, "subgoals", None) is not None:
        return _subgoal_path(env)
    grid = env.grid
    goals = _find(grid, "goal")
    if not goals:
        raise PlannerError("the grid has no goal cell")
    goal_cells = {(x, y) for x, y, _ in goals}
    start = (int(env.agent_pos[0]), int(env.agent_pos[1]), int(env.agent_dir))
    plan: list[int] = []
    opened: set = set()
    state = start
    # Closed doors that are not locked open with one toggle: route to face each on the way.
    for x, y, door in _find(grid, "door"):
        if not door.is_open and not door.is_locked:
            opened.add((x, y))
    doors = [(x, y, d) for x, y, d in _find(grid, "door") if d.is_locked]
    try:
        if doors:
            if len(doors) > 1:
                raise PlannerError(f"{len(doors)} locked doors (one is supported: DoorKey)")
            dx, dy, door = doors[0]
            # The task's random start actions can pick the key up (pickup is one of DoorKey's
            # seven actions): then it is carried, not on the grid, and the route skips it.
            carried = getattr(env, "carrying", None)
            has_key = carried is not None and carried.type == "key" and carried.color == door.color
            if not has_key:
                keys = [(x, y) for x, y, k in _find(grid, "key") if k.color == door.color]
                if len(keys) != 1:
                    raise PlannerError(f"a locked {door.color} door with {len(keys)} matching keys")
                actions, state = _route(grid, state, _facing(keys[0]), opened)
                plan += [*actions, PICKUP]
                opened.add(keys[0])  # picked up: the cell is free
            actions, state = _route(grid, state, _facing((dx, dy)), opened)
            plan += [*actions, TOGGLE]
            opened.add((dx, dy))
        actions, _ = _route(grid, state, lambda x, y, d: (x, y) in goal_cells, opened)
    except PlannerError as exc:
        raise PlannerError(f"shortest_path: {exc} from the agent at {start[:2]}") from None
    return _with_toggles(plan + actions, start, grid)


def _subgoal_path(env: Any) -> list[int]:
    """The sub-goal env's plan: each sub-goal's shortest route in the task's order."""
    grid = env.gen_obs()["image"]
    plan: list[int] = []
    for subgoal in env.subgoals:
        actions, done = subgoal_plan(grid, subgoal)
        if done is None:
            at = tuple(int(v) for v in env.agent_pos)
            raise PlannerError(
                f"shortest_path: sub-goal {subgoal!r} of {'-'.join(env.subgoals)!r} cannot be "
                f"reached (agent started at {at})"
            )
        grid = after(grid, actions)
        plan += actions
    return plan


def _with_toggles(actions: list[int], start: tuple, grid: Any) -> list[int]:
    """Insert a ``toggle`` before each forward move into a closed, unlocked door."""
    out: list[int] = []
    x, y, d = start
    opened: set = set()
    for action in actions:
        if action == FORWARD:
            nx, ny = x + _STEP[d][0], y + _STEP[d][1]
            cell = grid.get(nx, ny)
            if (
                cell is not None
                and cell.type == "door"
                and not cell.is_open
                and not cell.is_locked
                and (nx, ny) not in opened
            ):
                out.append(TOGGLE)
                opened.add((nx, ny))
            x, y = nx, ny
        elif action == LEFT:
            d = (d - 1) % 4
        elif action == RIGHT:
            d = (d + 1) % 4
        out.append(action)
    return out
