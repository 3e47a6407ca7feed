"""Small hand-built TabularModels for the tabular, demonstration and learner tests.

Grid worlds in the families' "K outcomes per (s, a)" form: four moves, the intended one with
probability 1 - slip and each other one with slip / 3; bumping into a wall stays put; every step
costs ``step_reward`` and entering the goal pays ``goal_reward`` instead.
"""

from __future__ import annotations

import gymnasium
import numpy as np

from opt_suite.families.base import TabularModel, TabularModelMixin, Task, TaskFamily

MOVES = ((-1, 0), (0, 1), (1, 0), (0, -1))  # up, right, down, left

FOUR_ROOMS_11 = (
    "#############",
    "#.....#.....#",
    "#.....#.....#",
    "#...........#",
    "#.....#.....#",
    "#.....#.....#",
    "##.####.....#",
    "#.....###.###",
    "#.....#.....#",
    "#.....#.....#",
    "#...........#",
    "#.....#.....#",
    "#############",
)


def four_rooms(size: int) -> tuple[str, ...]:
    """A size x size four-rooms layout (walls around and through the middle, one door per wall)."""
    grid = [["."] * size for _ in range(size)]
    for i in range(size):
        grid[0][i] = grid[size - 1][i] = grid[i][0] = grid[i][size - 1] = "#"
    mid = size // 2
    for i in range(size):
        grid[mid][i] = grid[i][mid] = "#"
    for r, c in (
        (mid // 2, mid),
        (mid + mid // 2, mid),
        (mid, mid // 2),
        (mid, mid + mid // 2 + 1),
    ):
        grid[r][c] = "."
    return tuple("".join(row) for row in grid)


def grid_model(
    layout: tuple[str, ...],
    start: tuple[int, int],
    goal: tuple[int, int],
    slip: float = 0.0,
    step_reward: float = -1.0,
    goal_reward: float = 10.0,
) -> TabularModel:
    """The exact model of a grid layout ('#' wall, anything else open); states are open cells."""
    cells = [(r, c) for r, row in enumerate(layout) for c, ch in enumerate(row) if ch != "#"]
    index = {cell: i for i, cell in enumerate(cells)}
    S, A = len(cells), len(MOVES)
    next_state = np.zeros((S, A, A), dtype=np.int32)
    prob = np.zeros((S, A, A))
    reward = np.zeros((S, A, A))
    for s, (r, c) in enumerate(cells):
        for a in range(A):
            for k, (dr, dc) in enumerate(MOVES):
                s2 = index.get((r + dr, c + dc), s)
                next_state[s, a, k] = s2
                prob[s, a, k] = 1.0 - slip if k == a else slip / (A - 1)
                reward[s, a, k] = goal_reward if cells[s2] == goal else step_reward
    terminal = np.zeros(S, dtype=bool)
    terminal[index[goal]] = True
    return TabularModel(
        next_state,
        prob,
        reward,
        terminal,
        index[start],
        cells=np.array(cells, dtype=np.int32),
        shape=(len(layout), len(layout[0])),
    )


def corridor(length: int, slip: float = 0.0) -> TabularModel:
    """A 1-D corridor of ``length`` cells, start at the left end, goal at the right end."""
    return grid_model(
        ("#" * (length + 2), "#" + "." * length + "#", "#" * (length + 2)),
        (1, 1),
        (1, length),
        slip,
    )


class ToyFamily(TabularModelMixin, TaskFamily):
    """A family whose tasks carry their hand-built TabularModel as ``task.params``."""

    name = "toy"
    description = "hand-built tabular models for tests"
    env_id = "opt_suite/Toy-v0"
    Params = type(None)
    Variation = type(None)
    TaskParams = TabularModel

    def __init__(self) -> None:
        super().__init__(None)

    # Index observations and four moves; S is each hand-built model's own (never asked here).
    observation_space = gymnasium.spaces.Discrete(1)
    action_space = gymnasium.spaces.Discrete(4)

    def sample_tasks(self, variation, count, rng):
        raise NotImplementedError("toy tasks are built by hand")

    def make_env(self, task, **kwargs):
        raise NotImplementedError("toy tasks have no env")

    def tabular_model(self, task: Task) -> TabularModel:
        return task.params


def toy_tasks(*models: TabularModel) -> list[Task]:
    """Tasks of :class:`ToyFamily` wrapping ``models``."""
    return [Task(f"toy/test/{i}", "test", i, m) for i, m in enumerate(models)]
