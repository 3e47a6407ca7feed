"""A tiny image family to test image methods and learners against, without Atari's cost.

``PixelGrid`` is a gridworld seen as pixels: an N x N room of cells (default 5 x 5), each drawn as
``scale`` x ``scale`` pixels (default 4: a 20 x 20 picture, the smallest the paper's conv options
accept), in two uint8 channels like Atari's frame stack — channel 0 lights the goal, channel 1 the
agent. Four actions move up, right, down and left (a move into the border stays put); reaching the
goal pays 1 and ends the episode, every other step pays 0. Moves are deterministic, so replaying a
demonstration's actions from its reset reproduces it exactly. It has **no exact model**: it offers
discrete actions and image observations, as Atari does, and nothing else.

``PixelGridExpert`` is its own demonstration source: a shortest path to the goal, choosing among
the moves that shorten it with the source's seeded generator (so the seed matters, and the same
seed gives the same trajectories).

Neither is registered under an entry point (``opt-suite list`` stays the suite's own list): tests
build them directly::

    from opt_suite.testing.image_family import PixelGrid, image_method_setting

    class TestMyConvMethodContract(MethodContract):
        method_class, params = MyConvMethod, MyConvMethod.Params()

        def setting(self):
            return image_method_setting()
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, ClassVar

import gymnasium
import numpy as np

from opt_suite.demonstrations.base import (
    DemonstrationError,
    DemonstrationSource,
    SourceContext,
    child_seed,
)
from opt_suite.families.base import Task, TaskFamily
from opt_suite.families.capabilities import DISCRETE_ACTIONS, IMAGE_OBSERVATIONS
from opt_suite.params import param
from opt_suite.trajectory import Trajectory

__all__ = [
    "PixelGrid",
    "PixelGridEnv",
    "PixelGridExpert",
    "image_method_setting",
    "image_learner_setting",
]

Cell = tuple[int, int]
MOVES = ((-1, 0), (0, 1), (1, 0), (0, -1))  # up, right, down, left


@dataclasses.dataclass(frozen=True)
class GridParams:
    """The room and its picture."""

    size: int = param(5, doc="cells per side of the square room", ge=2, le=16)
    scale: int = param(4, doc="pixels per cell side (size * scale >= 20 for conv options)", ge=1)
    max_episode_steps: int = param(50, doc="episodes are truncated after this many steps", ge=1)


@dataclasses.dataclass(frozen=True)
class GridVariation:
    """Tasks draw a start and a distinct goal uniformly over the room."""


@dataclasses.dataclass(frozen=True)
class GridTask:
    """One task: its start and goal cells ``(row, col)``."""

    start: Cell = param((0, 0), doc="start cell (row, col)")
    goal: Cell = param((4, 4), doc="goal cell (row, col)")


class PixelGridEnv(gymnasium.Env):
    """The room as a gymnasium env (see the module docstring)."""

    metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012 (gymnasium declares it so)

    def __init__(self, params: GridParams, start: Cell, goal: Cell) -> None:
        self.params, self.start, self.goal = params, tuple(start), tuple(goal)
        side = params.size * params.scale
        self.observation_space = gymnasium.spaces.Box(0, 255, (side, side, 2), np.uint8)
        self.action_space = gymnasium.spaces.Discrete(len(MOVES))
        self.cell = self.start

    def _frame(self) -> np.ndarray:
        s = self.params.scale
        side = self.params.size * s
        frame = np.zeros((side, side, 2), np.uint8)
        for channel, (row, col) in enumerate((self.goal, self.cell)):
            frame[row * s : (row + 1) * s, col * s : (col + 1) * s, channel] = 255
        return frame

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.cell = self.start
        return self._frame(), {}

    def step(self, action):
        dr, dc = MOVES[int(action)]
        last = self.params.size - 1
        self.cell = (min(max(self.cell[0] + dr, 0), last), min(max(self.cell[1] + dc, 0), last))
        done = self.cell == self.goal
        return self._frame(), float(done), done, False, {}


class PixelGrid(TaskFamily):
    """A gridworld seen as pixels: image observations, discrete actions, no exact model."""

    name: ClassVar[str] = "pixel_grid"
    description: ClassVar[str] = "a small room seen as 2-channel pixels (opt_suite.testing)"
    env_id: ClassVar[str] = "opt_suite_testing/PixelGrid-v0"
    Params: ClassVar[type] = GridParams
    Variation: ClassVar[type] = GridVariation
    TaskParams: ClassVar[type] = GridTask

    def __init__(self, params: GridParams | None = None) -> None:
        super().__init__(GridParams() if params is None else params)

    @property
    def observation_space(self) -> gymnasium.spaces.Box:
        side = self.params.size * self.params.scale
        return gymnasium.spaces.Box(0, 255, (side, side, 2), np.uint8)

    @property
    def action_space(self) -> gymnasium.spaces.Discrete:
        return gymnasium.spaces.Discrete(len(MOVES))

    @property
    def instance_name(self) -> str:
        return f"{self.name}-{self.params.size}x{self.params.size}"

    def default_task(self) -> GridTask:
        last = self.params.size - 1
        return GridTask((0, 0), (last, last))

    def sample_tasks(self, variation: Any, count: int, rng: np.random.Generator) -> list[Any]:
        n = self.params.size
        tasks = []
        for _ in range(count):
            start, goal = rng.choice(n * n, size=2, replace=False)
            tasks.append(GridTask(divmod(int(start), n), divmod(int(goal), n)))
        return tasks

    def check_task(self, task_params: Any) -> list[tuple[str, str]]:
        n, problems = self.params.size, []
        for field in ("start", "goal"):
            row, col = getattr(task_params, field)
            if not (0 <= row < n and 0 <= col < n):
                problems.append((field, f"cell {(row, col)} is off the {n}x{n} room"))
        if tuple(task_params.start) == tuple(task_params.goal):
            problems.append(("goal", "the goal is the start cell"))
        return problems

    def make_env(self, task: Task, **kwargs: Any) -> gymnasium.Env:
        env = PixelGridEnv(self.params, task.params.start, task.params.goal)
        return gymnasium.wrappers.TimeLimit(env, max_episode_steps=self.params.max_episode_steps)


@dataclasses.dataclass(frozen=True)
class ExpertParams:
    """The expert has nothing to tune."""


class PixelGridExpert(DemonstrationSource):
    """Shortest paths to the goal, ties between shortening moves broken by the seeded generator."""

    name: ClassVar[str] = "pixel_grid_expert"
    description: ClassVar[str] = "shortest paths on PixelGrid (opt_suite.testing)"
    Params: ClassVar[type] = ExpertParams
    requires: ClassVar[frozenset[str]] = frozenset({DISCRETE_ACTIONS, IMAGE_OBSERVATIONS})

    def collect(self, context: SourceContext) -> list[Trajectory]:
        family, train_tasks = context.family, context.train_tasks
        trajectories_per_task = context.trajectories_per_task
        max_steps, seed = context.max_steps, context.seed
        if not isinstance(family, PixelGrid):
            raise DemonstrationError(f"{self.name} demonstrates PixelGrid only, not {family.name}")
        out = []
        for t, task in enumerate(train_tasks):
            for k in range(trajectories_per_task):
                rng = np.random.default_rng(child_seed(seed, t, k))
                out.append(self._walk(family, task, int(rng.integers(2**31)), rng, max_steps))
        return out

    @staticmethod
    def _walk(
        family: PixelGrid, task: Task, reset_seed: int, rng: np.random.Generator, max_steps: int
    ) -> Trajectory:
        env = family.make_env(task)
        obs, _ = env.reset(seed=reset_seed)
        frames: list[np.ndarray] = [obs]
        actions: list[int] = []
        rewards: list[float] = []
        cell, goal, terminated = tuple(task.params.start), tuple(task.params.goal), False
        while not terminated:
            if len(actions) == max_steps:
                distance = abs(goal[0] - cell[0]) + abs(goal[1] - cell[1])
                raise DemonstrationError(
                    f"{task.task_id}: the goal is {len(actions) + distance} steps away, more "
                    f"than demonstrations.max_steps = {max_steps}"
                )
            closer = [
                a
                for a, (dr, dc) in enumerate(MOVES)
                if abs(goal[0] - cell[0] - dr) + abs(goal[1] - cell[1] - dc)
                < abs(goal[0] - cell[0]) + abs(goal[1] - cell[1])
            ]
            action = int(rng.choice(closer))
            obs, reward, terminated, _, _ = env.step(action)
            cell = (cell[0] + MOVES[action][0], cell[1] + MOVES[action][1])
            frames.append(obs)
            actions.append(action)
            rewards.append(float(reward))
        env.close()
        return Trajectory(
            task.task_id,
            np.stack(frames),
            np.asarray(actions, np.int64),
            np.asarray(rewards, np.float64),
            reset_seed=reset_seed,
        )


@functools.cache
def _tasks(train: int, test: int) -> tuple[PixelGrid, list[Task], list[Task]]:
    family = PixelGrid()
    tr, te = family.make_tasks(GridVariation(), (), train + test, train, test, seed=0)
    return family, tr, te


def image_method_setting() -> Any:
    """A :class:`~opt_suite.testing.Setting` on PixelGrid: 2 train tasks, 2 demonstrations each."""
    from opt_suite.testing.method_checks import Setting

    family, train, _ = _tasks(2, 1)
    demos = PixelGridExpert().collect(
        SourceContext(family, train, 2, 100, np.random.SeedSequence(0))
    )
    return Setting(family, tuple(train), tuple(demos))


def image_learner_setting() -> Any:
    """A :class:`~opt_suite.testing.LearnerSetting` on PixelGrid: 2 test tasks, 2 conv options."""
    from opt_suite.option_networks.initial import initial_frame_options
    from opt_suite.options.network import NetworkOptionSet
    from opt_suite.testing.learner_checks import LearnerSetting

    family, _, test = _tasks(1, 2)
    options = initial_frame_options(family, test[0], 2, np.random.SeedSequence(0))
    empty = NetworkOptionSet.empty(int(family.action_space.n), family.observation_space.shape)
    return LearnerSetting(family, tuple(test), options, empty)
