"""Breakout frames for the conv-option tests, straight from ale-py (no opt_suite family needed).

84x84 grayscale by nearest-pixel sampling of the 210x160 screen, the last two frames stacked on the
last axis (uint8 [84, 84, 2], the layout the Atari family's observations have). Demonstrations are
played by a seeded random policy that presses FIRE at the start and end when a life is lost, as the
paper's demonstrations do.
"""

from __future__ import annotations

import functools

import numpy as np

from opt_suite.trajectory import Trajectory

ROWS = np.linspace(0, 209, 84).round().astype(int)
COLS = np.linspace(0, 159, 84).round().astype(int)


@functools.cache
def _env():
    import ale_py
    import gymnasium

    gymnasium.register_envs(ale_py)
    return gymnasium.make(
        "ALE/Breakout-v5", obs_type="grayscale", frameskip=4, repeat_action_probability=0.0
    )


def _small(screen: np.ndarray) -> np.ndarray:
    return screen[ROWS][:, COLS]


def _tracking_action(ram: np.ndarray, rng: np.random.Generator) -> int:
    """A scripted player: FIRE to serve, else move the paddle under the ball (10% random)."""
    ball_x, ball_y, paddle = int(ram[99]), int(ram[101]), int(ram[72])
    if ball_y == 0:
        return 1
    if rng.random() < 0.1:
        return int(rng.integers(4))
    return 2 if ball_x > paddle + 10 else (3 if ball_x < paddle + 4 else 0)


def breakout_demonstrations(
    count: int, max_steps: int = 40, seed: int = 0, policy: str = "random"
) -> list[Trajectory]:
    """``count`` trajectories, each ending when a life is lost or at ``max_steps``.

    ``policy``: ``"random"`` play, or ``"track"`` — a scripted player that follows the ball (a
    stand-in for a trained expert: its lives last hundreds of steps, as an expert's do).
    """
    env = _env()
    rng = np.random.default_rng(seed)
    demos = []
    for i in range(count):
        screen, info = env.reset(seed=seed + i)
        lives = info["lives"]
        previous = current = _small(screen)
        observations, actions, rewards = [np.stack([previous, current], -1)], [], []
        for t in range(max_steps):
            if policy == "track":
                action = _tracking_action(env.unwrapped.ale.getRAM(), rng)
            else:
                action = 1 if t == 0 else int(rng.integers(4))
            screen, reward, terminated, truncated, info = env.step(action)
            previous, current = current, _small(screen)
            observations.append(np.stack([previous, current], -1))
            actions.append(action)
            rewards.append(reward)
            if terminated or truncated or info["lives"] < lives:
                break
        demos.append(
            Trajectory(
                f"breakout/{i}",
                np.array(observations, np.uint8),
                np.array(actions, np.int64),
                np.array(rewards, np.float64),
            )
        )
    return demos


class BreakoutFrames:
    """A gymnasium env of Breakout whose observations are the last two 84x84 frames (uint8).

    ``info["frames"]``: emulator frames the step used (frame skip 4), as the Atari family reports.
    """

    def __new__(cls, max_steps: int = 10_000):
        import ale_py
        import gymnasium

        gymnasium.register_envs(ale_py)

        class _Env(gymnasium.Env):
            def __init__(self):
                self._ale = gymnasium.make(
                    "ALE/Breakout-v5", obs_type="grayscale", frameskip=4,
                    repeat_action_probability=0.0, max_episode_steps=max_steps,
                )  # fmt: skip
                self.action_space = self._ale.action_space
                self.observation_space = gymnasium.spaces.Box(0, 255, (84, 84, 2), np.uint8)

            def reset(self, *, seed=None, options=None):
                screen, info = self._ale.reset(seed=seed)
                self._last = _small(screen)
                return np.stack([self._last, self._last], -1), {"frames": 0}

            def step(self, action):
                screen, reward, terminated, truncated, info = self._ale.step(action)
                previous, self._last = self._last, _small(screen)
                obs = np.stack([previous, self._last], -1)
                return obs, reward, terminated, truncated, {"frames": 4, "lives": info["lives"]}

            def close(self):
                self._ale.close()

        return _Env()


class BreakoutFamily:
    """Just enough of a task family for the frame tests: ``make_env`` of one Breakout task."""

    name = "breakout-frames"

    def make_env(self, task, **kwargs):
        return BreakoutFrames(**kwargs)
