"""Toy-text envs stepped from their table: bit-identical to stepping the env, and only where exact.

``GymnasiumTaskEnv`` steps FrozenLake and CliffWalking from their table ``P`` (see
``step_table``). Here each such env is run beside one forced onto the env's own step, with the
same seeds and actions, and everything is compared: what every call returns, the env's state,
``TimeLimit``'s counter and the env's generator.
"""

from __future__ import annotations

import itertools
import os

import gymnasium
import numpy as np
import pytest
from gymnasium.envs.toy_text.frozen_lake import FrozenLakeEnv
from gymnasium.error import ResetNeeded

from opt_suite.families.gymnasium.env import GymnasiumTaskEnv, step_table

# FrozenLake's pictures are drawn with pygame: on a machine without a display (CI) it needs its
# dummy video driver, set before the first picture is drawn.
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")

TABLE_ENVS = [
    ("FrozenLake-v1", {"map_name": "4x4", "is_slippery": True}),
    ("FrozenLake-v1", {"map_name": "4x4", "is_slippery": False}),
    ("FrozenLake-v1", {"map_name": "8x8", "is_slippery": True}),
    ("FrozenLake-v1", {"map_name": "8x8", "is_slippery": False}),
    ("CliffWalking-v1", {"is_slippery": True}),
    ("CliffWalking-v1", {"is_slippery": False}),
]
# frame_skip, start_actions, reward_scale
TASKS = list(itertools.product((1, 2), (0, 3), (1.0, 2.5)))
# Small, so that episodes are truncated as well as terminated (start actions count too).
MAX_FRAMES = 12


class SubclassedLake(FrozenLakeEnv):
    """A FrozenLake whose step may be its own: stepped as it steps."""


SUBCLASSED_ID = "OptSuiteTest/SubclassedLake-v0"
if SUBCLASSED_ID not in gymnasium.registry:  # registering twice warns
    gymnasium.register(SUBCLASSED_ID, entry_point=SubclassedLake)


def _pair(env_id, kwargs, frame_skip, start_actions, reward_scale):
    def make():
        return GymnasiumTaskEnv(
            env_id, dict(kwargs), None, MAX_FRAMES, start_actions, reward_scale, frame_skip
        )

    fast, slow = make(), make()
    assert _uses_table(fast)
    slow._inner_step = slow._env.step  # the env's own step, as for any other env
    return fast, slow


def _uses_table(env: GymnasiumTaskEnv) -> bool:
    return env._inner_step != env._env.step


def _state(env: GymnasiumTaskEnv):
    inner = env._env.unwrapped
    return (
        inner.s,
        type(inner.s),
        inner.lastaction,
        env._env._elapsed_steps,
        env._episode_frames,
        inner.np_random.bit_generator.state,
    )


def _same(fast_result, slow_result):
    assert fast_result == slow_result
    # == alone would let 1 == 1.0 == True through: the types must match too.
    assert [type(x) for x in fast_result] == [type(x) for x in slow_result]


@pytest.mark.parametrize(("env_id", "kwargs"), TABLE_ENVS)
@pytest.mark.parametrize(("frame_skip", "start_actions", "reward_scale"), TASKS)
def test_the_table_step_is_the_env_step_bit_for_bit(
    env_id, kwargs, frame_skip, start_actions, reward_scale
):
    fast, slow = _pair(env_id, kwargs, frame_skip, start_actions, reward_scale)
    rng = np.random.default_rng([frame_skip, start_actions, int(reward_scale * 2)])
    _same(fast.reset(seed=5), slow.reset(seed=5))
    ends = 0
    for i in range(2000):
        action = int(rng.integers(fast.action_space.n))
        result = fast.step(action)
        _same(result, slow.step(action))
        assert _state(fast) == _state(slow)
        ended = result[2] or result[3]
        ends += ended
        # Mostly reset at an end; sometimes step on past it (terminal states, past the cap),
        # and sometimes reset mid-episode with a new seed.
        if ended and rng.random() < 0.8:
            _same(fast.reset(), slow.reset())
            assert _state(fast) == _state(slow)
        elif rng.random() < 0.01:
            _same(fast.reset(seed=i), slow.reset(seed=i))
            assert _state(fast) == _state(slow)
    assert ends > 100  # the episodes did end (terminated or truncated), many times


def test_rgb_array_rendering_uses_the_table_and_draws_the_same_pictures():
    """The pictures read the env's ``s`` and ``lastaction``, which the table step sets."""

    def make():
        return GymnasiumTaskEnv("FrozenLake-v1", {}, None, 20, render_mode="rgb_array")

    fast, slow = make(), make()
    assert _uses_table(fast)
    slow._inner_step = slow._env.step
    fast.reset(seed=3), slow.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(60):
        action = int(rng.integers(4))
        result = fast.step(action)
        _same(result, slow.step(action))
        np.testing.assert_array_equal(fast.render(), slow.render())
        if result[2] or result[3]:
            fast.reset(), slow.reset()


def test_stepping_before_a_reset_is_refused_as_by_the_env():
    fast, slow = _pair("FrozenLake-v1", {}, 1, 0, 1.0)
    for env in (fast, slow):
        with pytest.raises(ResetNeeded):
            env.step(0)


def test_an_unknown_action_fails_as_in_the_env():
    fast, slow = _pair("FrozenLake-v1", {}, 1, 0, 1.0)
    for env in (fast, slow):
        env.reset(seed=0)
        with pytest.raises(KeyError):
            env.step(-1)


@pytest.mark.parametrize("env_id", [SUBCLASSED_ID, "Taxi-v4"])
def test_a_subclass_or_another_toy_text_env_is_stepped_by_its_own_step(env_id):
    env = GymnasiumTaskEnv(env_id, {}, None, 100)
    assert step_table(env._env) is None
    assert not _uses_table(env)
    env.reset(seed=0)
    env.step(0)


def test_other_wrappers_or_human_rendering_are_stepped_by_the_env():
    # gymnasium.make's passive checker, no wrappers at all, human rendering (its step draws).
    assert step_table(gymnasium.make("FrozenLake-v1")) is None
    assert step_table(FrozenLakeEnv()) is None
    human = gymnasium.make("FrozenLake-v1", render_mode="human", disable_env_checker=True)
    assert step_table(human) is None
    assert step_table(gymnasium.make("FrozenLake-v1", disable_env_checker=True)) is not None
