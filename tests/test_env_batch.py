"""Env batches: Atari's C++-threaded batch is the same task as ``AtariTaskEnv``, step for step.

The option-augmented env steps any subset of its sub-envs per tick; on Atari it does so through
``AtariThreadBatch`` (one single-env ``AtariVectorEnv`` per sub-env). These tests drive it and the
plain gymnasium envs (``SequentialBatch`` of ``TimeLimit(AtariTaskEnv)``) with the same seeds,
subsets and actions, and require identical observations, rewards, flags and frames — resets and
episode caps included — and then an identical option-augmented env on top of each.
"""

from __future__ import annotations

import numpy as np
import pytest

from opt_suite.families.atari.family import Atari, Params, TaskParams
from opt_suite.families.env_batch import SequentialBatch, make_env_batch, step_rows
from opt_suite.learners.option_env import OptionAugmentedEnv


def _pair(family, task, count, max_steps):
    import gymnasium

    threaded = family.make_env_batch(task, count, max_steps)
    plain = SequentialBatch(
        [
            gymnasium.wrappers.TimeLimit(family.make_env(task), max_episode_steps=max_steps)
            for _ in range(count)
        ]
    )
    return threaded, plain


@pytest.mark.parametrize(
    "family, task, max_steps",
    [
        (Atari(), TaskParams(start_actions=4, reward_scale=2.5, frame_skip=3), 90),
        (Atari(Params(game="amidar", max_episode_frames=400)), TaskParams(7, 0.5, 5), 10**6),
        (Atari(Params(action_set="full")), TaskParams(0, 1.0, 1), 100),
    ],
)
def test_thread_batch_is_the_task_env_step_for_step(family, task, max_steps):
    count = 3
    threaded, plain = _pair(family, task, count, max_steps)
    assert threaded.single_action_space == plain.single_action_space
    assert threaded.single_observation_space == plain.single_observation_space
    for i in range(count):
        a_obs, a_frames = threaded.reset_at(i, 50 + i)
        b_obs, b_frames = plain.reset_at(i, 50 + i)
        np.testing.assert_array_equal(a_obs, b_obs)
        assert a_frames == b_frames == task.start_actions * task.frame_skip
    draws = np.random.default_rng(0)
    endings = 0
    for _ in range(400):
        rows = np.flatnonzero(draws.random(count) < 0.6)
        if not len(rows):
            continue
        actions = draws.integers(threaded.single_action_space.n, size=len(rows))
        a, b = step_rows(threaded, rows, actions), step_rows(plain, rows, actions)
        np.testing.assert_array_equal(a.observations, b.observations)
        np.testing.assert_array_equal(a.rewards, b.rewards)
        np.testing.assert_array_equal(a.terminated, b.terminated)
        np.testing.assert_array_equal(a.truncated, b.truncated)
        np.testing.assert_array_equal(a.frames, b.frames)
        for i in rows[a.terminated | a.truncated]:
            endings += 1
            a_obs, a_frames = threaded.reset_at(int(i), None)
            b_obs, b_frames = plain.reset_at(int(i), None)
            np.testing.assert_array_equal(a_obs, b_obs)
            assert a_frames == b_frames
    threaded.close()
    plain.close()
    assert endings >= 1, "no episode ended: the resets were not compared"


def test_make_env_batch_uses_the_familys_own_batch_else_sequential():
    from opt_suite.families.atari.threads import AtariThreadBatch
    from opt_suite.families.tabular.chain import Chain

    family = Atari()
    batch = make_env_batch(family, TaskParams(), 2, 100)
    assert isinstance(batch, AtariThreadBatch) and batch.num_envs == 2
    batch.close()
    chain = Chain()
    task = chain.make_tasks(chain.Variation(), (), 1, 1, 0, seed=0)[0][0]
    sequential = make_env_batch(chain, task, 2, 5)
    assert isinstance(sequential, SequentialBatch)
    sequential.reset_at(0, 0)
    steps = [step_rows(sequential, np.array([0]), np.array([0])) for _ in range(5)]
    assert [bool(s.truncated[0] or s.terminated[0]) for s in steps][-1]  # cut at 5 steps
    with pytest.raises(ValueError, match="max_steps >= 1"):
        make_env_batch(chain, task, 2, 0)


def _random_options(num_actions, count=2):
    """Options as fixed functions of the frame: μ from pixel sums, β from a pixel's value."""

    def probabilities(observations, which):
        sums = observations.reshape(len(observations), -1).sum(axis=1)
        logits = np.outer(sums % 7, np.arange(num_actions)) + which[:, None]
        mu = np.exp(-(logits % 5))
        beta = (observations[:, 40, 40, 1] % 3) / 4.0
        return mu / mu.sum(axis=1, keepdims=True), beta

    return count, probabilities


def test_option_env_on_the_thread_batch_equals_it_on_task_envs():
    family, task = Atari(), TaskParams(start_actions=3, reward_scale=2.0, frame_skip=4)
    count = 4
    envs = []
    for batch in _pair(family, task, count, 120):
        m, probabilities = _random_options(4)
        seeds = np.random.SeedSequence(7).spawn(count)
        envs.append(OptionAugmentedEnv(batch, probabilities, m, 0.99, 0.05, seeds))
    decisions = np.random.default_rng(1)
    steps = [env.reset() for env in envs]
    for _ in range(150):
        action = decisions.integers(4 + 2, size=count)
        steps = [env.step(action) for env in envs]
        for field in ("step_type", "reward", "discount", "observation"):
            np.testing.assert_array_equal(getattr(steps[0], field), getattr(steps[1], field))
    threaded, plain = envs
    assert threaded.frames == plain.frames and threaded.option_calls == plain.option_calls > 0
    assert threaded.episodes == plain.episodes and len(threaded.episodes) >= 1
    for env in envs:
        env.close()


def test_an_episode_the_start_actions_end_is_truncated_by_both_back_ends():
    # A frame cap (30) below the start actions' frames (20 x 4): the episode ends during the
    # starts. Its next step must say truncated (bootstrap), not terminated, in both back ends;
    # the thread batch plays no frame of the ended episode (see atari_threads' docstring).
    family = Atari(Params(max_episode_frames=30))
    task = TaskParams(start_actions=20, reward_scale=1.0, frame_skip=4)
    threaded, plain = _pair(family, task, 1, 1000)
    for batch in (threaded, plain):
        _, frames = batch.reset_at(0, 3)
        assert frames == 30
        batch.send_at(0, 1)
        step = batch.recv_at(0)
        assert (step.terminated, step.truncated, step.reward) == (False, True, 0.0)
        batch.close()
