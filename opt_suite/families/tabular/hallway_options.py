"""Hand-made hallway options for grid worlds of rooms (Sutton, Precup & Singh 1999, Sec. 3, Fig. 2).

Per room, one option to each hallway of the room ("8 multi-step options ... to take the agent from
its position in one room to one of the two hallways leading out of the room"). For the option of
room R to hallway H:

- initiation set: the cells of R plus the cells of R's other hallways ("the states within the room
  plus the non-target hallway state leading into the room");
- policy mu: in each cell of the initiation set, probability :data:`GREEDY` (0.95) on the action
  of a shortest path to H inside R (ties: the first in ``up, down, left, right`` order), the rest
  spread evenly over the other actions; elsewhere uniform (never used: the option is not started
  there, and stops on arrival);
- termination beta: 0 inside R, 1 everywhere else — at H, at R's other hallways and in every other
  room ("zero for states s within the room and 1 for states outside the room, including the
  hallway states").

Shortest paths are on the deterministic grid (the intended move), measured from H's cells over R's
cells and R's hallways. Rooms and hallways come from the wall grid (:func:`.layouts.floor_plan`), so
any map made of rooms and gaps in straight walls gets its options — a wide hallway is one target.
Pure functions of the walls: the options do not depend on the task's start or goal.
"""

from __future__ import annotations

import collections

import numpy as np

from opt_suite.families.tabular import grid_dynamics, layouts
from opt_suite.options import TabularOptionSet

__all__ = ["GREEDY", "hallway_options"]

GREEDY = 0.95
"""mu of the shortest-path action (Sutton et al. 1999: a policy "following the shortest path";
0.95 leaves every action possible, so that any demonstration has a likelihood > 0)."""

_HALLWAY_SIDES = {  # four-rooms hallway names by the rooms they join, as in layouts.HALLWAYS
    frozenset({"north-west", "north-east"}): "north",
    frozenset({"north-east", "south-east"}): "east",
    frozenset({"south-west", "south-east"}): "south",
    frozenset({"north-west", "south-west"}): "west",
}


def hallway_options(walls: np.ndarray) -> TabularOptionSet:
    """The hallway options of a wall grid, tabulated over its free cells in row-major order.

    Args:
      walls: bool [rows, cols], True on walls (states are the free cells, row-major).

    Returns:
      One option per (room, hallway of that room), rooms in the order of
      :func:`.layouts.floor_plan`, named ``<room>-to-<hallway>`` (``north-west-to-north`` on a
      four-rooms map, ``room-0-to-hallway-1`` on others), with initiation sets.

    Raises:
      ValueError: the map has no rooms joined by hallways (:func:`.layouts.floor_plan`).
    """
    plan = layouts.floor_plan(walls)
    cells, index = grid_dynamics.states_of(walls)
    neighbours = grid_dynamics.neighbours(walls)  # [S, 4], deterministic moves
    S, A = len(cells), len(grid_dynamics.MOVES)
    room_names, hallway_names = _names(plan, walls.shape)
    mu_rows, beta_rows, initiation_rows, names = [], [], [], []
    for room, room_cells in enumerate(plan.rooms):
        room_states = index[room_cells[:, 0], room_cells[:, 1]]
        own = plan.room_hallways(room)
        hallway_states = {h: index[c[:, 0], c[:, 1]] for h, c in enumerate(plan.hallways)}
        for target in own:
            others = np.concatenate([hallway_states[h] for h in own if h != target] or [[]])
            start_states = np.concatenate([room_states, others]).astype(np.int64)
            allowed = np.zeros(S, dtype=bool)
            allowed[start_states] = True
            allowed[hallway_states[target]] = True
            distance = _distances(neighbours, hallway_states[target], allowed)
            mu = np.full((S, A), 1.0 / A)
            # The shortest-path action: the first move that lands one step nearer the target.
            ahead = distance[neighbours[start_states]]  # [n, A]
            best = np.argmin(ahead, axis=1)
            if np.isinf(ahead.min(axis=1)).any():
                raise ValueError(f"layout: hallway {hallway_names[target]} unreachable in a room")
            mu[start_states] = (1.0 - GREEDY) / (A - 1)
            mu[start_states, best] = GREEDY
            beta = np.ones(S)
            beta[room_states] = 0.0
            initiation = np.zeros(S, dtype=bool)
            initiation[start_states] = True
            mu_rows.append(mu)
            beta_rows.append(beta)
            initiation_rows.append(initiation)
            names.append(f"{room_names[room]}-to-{hallway_names[target]}")
    return TabularOptionSet(
        np.stack(mu_rows), np.stack(beta_rows), tuple(names), np.stack(initiation_rows)
    )


def _distances(neighbours: np.ndarray, targets: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Float [S]: moves from each allowed state to the nearest target, inf elsewhere (BFS).

    Moves are reversible on a grid (a move into a wall stays put), so a breadth-first search from
    the targets over ``neighbours`` gives every allowed state's distance to them.
    """
    distance = np.full(len(neighbours), np.inf)
    distance[targets] = 0.0
    queue = collections.deque(int(t) for t in targets)
    while queue:
        s = queue.popleft()
        for n in neighbours[s]:
            if allowed[n] and np.isinf(distance[n]):
                distance[n] = distance[s] + 1
                queue.append(int(n))
    return distance


def _names(plan: layouts.FloorPlan, shape: tuple[int, ...]) -> tuple[list[str], list[str]]:
    """Room and hallway names: quadrant names on a four-rooms map, else ``room-i``/``hallway-j``."""
    centre = (np.array(shape) - 1) / 2
    quadrants = []
    for cells in plan.rooms:
        r, c = cells.mean(axis=0) - centre
        quadrants.append(f"{'north' if r < 0 else 'south'}-{'west' if c < 0 else 'east'}")
    if len(set(quadrants)) != 4 or len(plan.rooms) != 4:
        rooms = [f"room-{i}" for i in range(len(plan.rooms))]
        return rooms, [f"hallway-{j}" for j in range(len(plan.hallways))]
    sides = [_HALLWAY_SIDES.get(frozenset(quadrants[i] for i in joins)) for joins in plan.joins]
    hallways = [side or f"hallway-{j}" for j, side in enumerate(sides)]
    return quadrants, hallways
