"""The option-augmented env: SMDP steps, γ^k discounts, the termination bump, frames, resets."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

from opt_suite.learners.option_env import OptionAugmentedEnv

SKIP = 3  # frames per step the toy env reports
GAMMA = 0.9


class Corridor(gymnasium.Env):
    """Positions 0..length-1; 0 = left, 1 = right; reward 1 on reaching the end (terminated)."""

    def __init__(self, length=30, max_steps=100, start=0):
        self.length, self.max_steps, self.start = length, max_steps, start
        self.observation_space = gymnasium.spaces.Box(0, 255, (1,), np.uint8)
        self.action_space = gymnasium.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos, self.t = self.start, 0
        return np.array([self.pos], np.uint8), {"frames": 2}  # a reset uses frames too

    def step(self, action):
        self.pos = max(0, self.pos + (1 if action == 1 else -1))
        self.t += 1
        terminated = self.pos == self.length - 1
        truncated = not terminated and self.t >= self.max_steps
        return (
            np.array([self.pos], np.uint8),
            float(terminated),
            terminated,
            truncated,
            {"frames": SKIP},
        )


def right_until(stop_at):
    """One option: always 'right'; β = 1 at positions in ``stop_at``, else 0."""

    def probabilities(obs, option):
        assert np.all(option == 0)
        mu = np.tile([[0.0, 1.0]], (len(obs), 1))
        return mu, np.isin(obs[:, 0], list(stop_at)).astype(float)

    return probabilities


def make(envs, probabilities, m=1, bump=0.0, seed=0):
    seeds = np.random.SeedSequence(seed).spawn(len(envs))
    return OptionAugmentedEnv(envs, probabilities, m, GAMMA, bump, seeds)


def test_specs_and_first_time_step():
    env = make([Corridor(), Corridor()], right_until({3}))
    assert env.batch_size == 2 and env.action_spec().maximum == 2  # 2 primitives + 1 option
    first = env.reset()
    assert first.step_type.tolist() == [0, 0] and first.observation[:, 0].tolist() == [0, 0]
    assert env.frames == 4  # two resets of 2 frames


def test_an_option_is_one_smdp_step_with_gamma_k_discount():
    env = make([Corridor(length=6), Corridor()], right_until({3}))
    env.reset()
    # env 0: the option runs 0 -> 3 (3 steps); env 1: primitive 'right' (1 step)
    step = env.step(np.array([2, 1]))
    assert step.observation[:, 0].tolist() == [3, 1]
    np.testing.assert_allclose(step.discount, [GAMMA**3, GAMMA])
    assert step.step_type.tolist() == [1, 1] and step.reward.tolist() == [0.0, 0.0]
    assert env.frames == 4 + SKIP * (3 + 1) and env.primitive_steps == 4
    # env 0 runs on to the goal at 5: reward 1 on the 2nd step, discounted once; terminated -> 0.
    step = env.step(np.array([2, 0]))
    assert step.step_type.tolist() == [2, 1]
    np.testing.assert_allclose(step.reward, [GAMMA, 0.0])
    np.testing.assert_allclose(step.discount, [0.0, GAMMA])
    assert [(e.env, e.ret, e.steps) for e in env.episodes] == [(0, 1.0, 5)]
    # frames of all sub-envs when it ended: resets, 4 steps, then env 0, env 1, env 0 (its end)
    assert env.episodes[0].frames == 4 + SKIP * (4 + 3)
    # the next step resets env 0 (action ignored): FIRST, reward 0, discount 1
    step = env.step(np.array([1, 1]))
    assert step.step_type.tolist() == [0, 1] and step.observation[0, 0] == 0
    assert step.reward[0] == 0.0 and step.discount[0] == 1.0


def test_termination_bump_stops_an_option_within_20_steps():
    env = make([Corridor(length=200, max_steps=500)], right_until(set()), bump=0.05)
    env.reset()
    lengths = []
    for _ in range(30):
        before = env.primitive_steps
        env.step(np.array([2]))
        lengths.append(env.primitive_steps - before)
    assert max(lengths) <= 20 and min(lengths) >= 1
    assert np.mean(lengths) < 10  # β + 0.05 j: mostly far shorter than 20
    never = make([Corridor(length=200, max_steps=500)], right_until(set()), bump=0.0)
    never.reset()
    never.step(np.array([2]))
    assert never.primitive_steps == 199  # without the bump, β = 0 runs to the goal


def test_truncation_ends_the_option_and_bootstraps():
    env = make([Corridor(length=50, max_steps=4)], right_until(set()))
    env.reset()
    step = env.step(np.array([2]))
    assert step.step_type.tolist() == [2]  # LAST by truncation
    np.testing.assert_allclose(step.discount, [GAMMA**4])  # a cut, not an end: bootstrap


def test_option_draws_come_from_each_sub_envs_seed():
    def noisy(obs, option):
        return np.full((len(obs), 2), 0.5), np.full(len(obs), 0.3)

    def trace(seed, n):
        env = make([Corridor(length=100, max_steps=1000) for _ in range(n)], noisy, seed=seed)
        env.reset()
        return [env.step(np.full(n, 2)).observation[:, 0].tolist() for _ in range(5)]

    assert trace(1, 2) == trace(1, 2)
    assert trace(1, 2) != trace(2, 2)


def test_bad_actions_are_refused():
    env = make([Corridor()], right_until({3}))
    env.reset()
    with pytest.raises(ValueError, match=r"\[0, 3\)"):
        env.step(np.array([3]))
