"""Tiny exact models for the baseline tests, built with the families' own table code."""

from __future__ import annotations

import gymnasium
import numpy as np

from opt_suite.families.base import TabularModel, TabularModelMixin, Task, TaskFamily
from opt_suite.families.tabular import grid_dynamics, layouts
from opt_suite.families.tabular.task import goal_model


def grid(text: str, start: int, goal: int, slip: float = 0.0, **rewards: float) -> TabularModel:
    """The model of a text map ('#' wall, '.' free) with the paper's slip dynamics."""
    walls = layouts.parse(text)
    next_state, prob = grid_dynamics.slip_table(walls, slip)
    cells, _ = grid_dynamics.states_of(walls)
    return goal_model(
        next_state,
        prob,
        start=start,
        goals=[goal],
        step_reward=rewards.get("step_reward", -1.0),
        goal_reward=rewards.get("goal_reward", 10.0),
        cells=cells,
        shape=walls.shape,
    )


class ModelFamily(TabularModelMixin, TaskFamily):
    """A family whose tasks *are* given models (task.params is the TabularModel)."""

    name = "model-family"
    description = "hand-built models"
    env_id = "none"
    Params = dict
    Variation = dict
    TaskParams = TabularModel

    def __init__(self) -> None:
        super().__init__({})

    # Index observations and four moves; S is each hand-built model's own (never asked here).
    observation_space = gymnasium.spaces.Discrete(1)
    action_space = gymnasium.spaces.Discrete(4)

    def sample_tasks(self, variation, count, rng):
        raise NotImplementedError

    def make_env(self, task, **kwargs):
        raise NotImplementedError

    def tabular_model(self, task: Task) -> TabularModel:
        return task.params


def tasks_of(*models: TabularModel) -> list[Task]:
    return [Task(f"model/train/{i}", "train", i, m) for i, m in enumerate(models)]


def corridor_models(length: int = 5) -> list[TabularModel]:
    """Two deterministic corridor tasks with goals at either end (so every row is known)."""
    text = "." * length
    return [grid(text, start=0, goal=length - 1), grid(text, start=length - 1, goal=0)]


def seed(n: int) -> np.random.SeedSequence:
    return np.random.SeedSequence(n)


class _ModelEnv(gymnasium.Env):
    """Samples a TabularModel's transitions from its start state (for methods that walk)."""

    def __init__(self, model: TabularModel) -> None:
        self.model = model
        self.observation_space = gymnasium.spaces.Discrete(model.num_states)
        self.action_space = gymnasium.spaces.Discrete(model.num_actions)
        self._state = model.start

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self._state = self.model.start
        return self._state, {}

    def step(self, action):
        s, a = self._state, int(action)
        k = self.np_random.choice(self.model.prob.shape[-1], p=self.model.prob[s, a])
        self._state = int(self.model.next_state[s, a, k])
        terminated = bool(self.model.terminal[self._state])
        return self._state, float(self.model.reward[s, a, k]), terminated, False, {}


class WalkFamily(ModelFamily):
    """A ModelFamily of one layout whose envs can be stepped (random-walk methods)."""

    def __init__(self, num_states: int) -> None:
        super().__init__()
        self.observation_space = gymnasium.spaces.Discrete(num_states)

    def make_env(self, task, **kwargs):
        return _ModelEnv(task.params)


def room(rows: int, cols: int, slip: float = 0.0) -> TabularModel:
    """An open rows x cols room without a goal (nothing terminates): for random walks."""
    walls = layouts.parse("\n".join("." * cols for _ in range(rows)))
    next_state, prob = grid_dynamics.slip_table(walls, slip)
    cells, _ = grid_dynamics.states_of(walls)
    return goal_model(
        next_state, prob, start=0, goals=[], step_reward=0.0, goal_reward=0.0, cells=cells,
        shape=walls.shape,
    )  # fmt: skip
