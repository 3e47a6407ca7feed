"""A family with image observations and no model: a corridor seen as a 1 x L x 1 picture.

The agent is the bright pixel; actions are left / right; reaching the right end pays 1 and ends the
episode. It stands in for Atari in tests of the model-free paths (no exact model, Box observations).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import gymnasium
import numpy as np

from opt_suite.families.base import Task, TaskFamily
from opt_suite.learners.base import EpisodeLog, Learner, LearnerContext


@dataclasses.dataclass(frozen=True)
class PixelParams:
    length: int = 5


@dataclasses.dataclass(frozen=True)
class PixelVariation:
    pass


@dataclasses.dataclass(frozen=True)
class PixelTask:
    start: int = 0


class PixelCorridorEnv(gymnasium.Env):
    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, length: int = 5, start: int = 0) -> None:
        self.length, self.start = length, start
        self.observation_space = gymnasium.spaces.Box(0, 255, (1, length, 1), np.uint8)
        self.action_space = gymnasium.spaces.Discrete(2)
        self.cell = start

    def _obs(self) -> np.ndarray:
        frame = np.zeros((1, self.length, 1), np.uint8)
        frame[0, self.cell, 0] = 255
        return frame

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.cell = self.start
        return self._obs(), {}

    def step(self, action):
        self.cell = int(np.clip(self.cell + (1 if action == 1 else -1), 0, self.length - 1))
        done = self.cell == self.length - 1
        return self._obs(), float(done), done, False, {}


class PixelCorridor(TaskFamily):
    """Image observations, discrete actions, no exact model."""

    name = "pixels"
    description = "a corridor seen as pixels (tests)"
    env_id = "pixel_toys/PixelCorridor-v0"
    Params = PixelParams
    Variation = PixelVariation
    TaskParams = PixelTask

    def __init__(self, params: PixelParams | None = None) -> None:
        super().__init__(PixelParams() if params is None else params)

    @property
    def observation_space(self) -> gymnasium.spaces.Box:
        return gymnasium.spaces.Box(0, 255, (1, self.params.length, 1), np.uint8)

    @property
    def action_space(self) -> gymnasium.spaces.Discrete:
        return gymnasium.spaces.Discrete(2)

    def sample_tasks(self, variation, count, rng):
        return [PixelTask(int(rng.integers(self.params.length - 1))) for _ in range(count)]

    def make_env(self, task: Task, **kwargs: Any) -> gymnasium.Env:
        env = PixelCorridorEnv(self.params.length, task.params.start)
        return gymnasium.wrappers.TimeLimit(env, max_episode_steps=50)


class RandomOverOptions(Learner):
    """Picks uniformly among primitives + options; runs an option by calling the option set.

    Not a learner worth benchmarking: it exercises acting through ``OptionSet.probabilities`` on
    image observations, batched over the runs.
    """

    name = "random_over_options"
    description = "uniform over primitives + options (tests)"

    @dataclasses.dataclass(frozen=True)
    class Params:
        pass

    def run(self, context: LearnerContext):
        family, runs, options = context.family, context.runs, context.options
        episodes, max_steps = context.episodes, context.max_steps
        logs = []
        A, m = family.action_space.n, len(options)
        for r in runs:
            rng = np.random.default_rng(r.seed)
            env = family.make_env(r.task)
            returns, steps = np.zeros(episodes), np.zeros(episodes, np.int64)
            for e in range(episodes):
                obs, _ = env.reset(seed=int(rng.integers(2**31)))
                option, done, t = None, False, 0
                while not done and t < max_steps:
                    if option is None:
                        choice = int(rng.integers(A + m))
                        option = choice - A if choice >= A else None
                        action = choice if choice < A else None
                    if option is not None:
                        mu, _ = options.probabilities(obs[None])
                        action = int(rng.choice(A, p=mu[0, option] / mu[0, option].sum()))
                    obs, reward, terminated, truncated, _ = env.step(action)
                    returns[e] += reward
                    t += 1
                    done = terminated or truncated
                    if option is not None:
                        _, beta = options.probabilities(obs[None])
                        if rng.uniform() < beta[0, option]:
                            option = None
                steps[e] = t
            logs.append(EpisodeLog(returns, steps))
        return logs


@dataclasses.dataclass(frozen=True)
class ShapeParams:
    """The observation shape: ``[H, W, C]`` or ``[H, W]`` (an image) or ``[d]`` (a vector)."""

    shape: tuple[int, ...] = (10, 10, 4)


class ShapeCorridorEnv(gymnasium.Env):
    """Left / right along ``cells`` cells to the last one (pays 1), seen as an array of ``shape``.

    An image lights one pixel per cell (row-major over [H, W], channel 0); a vector is one-hot.
    """

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, shape: tuple[int, ...], start: int = 0) -> None:
        self.shape, self.start = tuple(shape), start
        image = len(self.shape) >= 2
        self.cells = min(6, self.shape[0] * self.shape[1] if image else self.shape[0])
        dtype, high = (np.uint8, 255) if image else (np.float32, 1.0)
        self.observation_space = gymnasium.spaces.Box(0, high, self.shape, dtype)
        self.action_space = gymnasium.spaces.Discrete(2)
        self.cell = start

    def _obs(self) -> np.ndarray:
        obs = np.zeros(self.shape, self.observation_space.dtype)
        flat = obs.reshape(-1) if len(self.shape) < 3 else obs[..., 0].reshape(-1)
        flat[self.cell] = self.observation_space.high.flat[0]
        return obs

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.cell = self.start
        return self._obs(), {}

    def step(self, action):
        self.cell = int(np.clip(self.cell + (1 if action == 1 else -1), 0, self.cells - 1))
        done = self.cell == self.cells - 1
        return self._obs(), float(done), done, False, {}


class ShapeCorridor(TaskFamily):
    """A corridor whose observations have any shape: small images, [H, W] images, vectors."""

    name = "shapes"
    description = "a corridor seen as an array of any shape (tests)"
    env_id = "shape_toys/ShapeCorridor-v0"
    Params = ShapeParams
    Variation = PixelVariation
    TaskParams = PixelTask

    def __init__(self, params: ShapeParams | None = None) -> None:
        super().__init__(ShapeParams() if params is None else params)

    @property
    def observation_space(self) -> gymnasium.spaces.Box:
        return ShapeCorridorEnv(self.params.shape).observation_space

    @property
    def action_space(self) -> gymnasium.spaces.Discrete:
        return gymnasium.spaces.Discrete(2)

    def sample_tasks(self, variation, count, rng):
        cells = ShapeCorridorEnv(self.params.shape).cells
        return [PixelTask(int(rng.integers(cells - 1))) for _ in range(count)]

    def make_env(self, task: Task, **kwargs: Any) -> gymnasium.Env:
        env = ShapeCorridorEnv(self.params.shape, task.params.start)
        return gymnasium.wrappers.TimeLimit(env, max_episode_steps=50)
