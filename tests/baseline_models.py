"""Tiny exact models for the baseline tests, built with the families' own table code."""

from __future__ import annotations

import gymnasium
import numpy as np

from opt_suite.families import grid_dynamics, layouts
from opt_suite.families.base import TabularModel, TabularModelMixin, Task, TaskFamily
from opt_suite.families.tabular_task import goal_model


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
