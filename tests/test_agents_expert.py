"""PPO experts on Atari: frame budgets, seeded training, checkpoints reused, demonstrations."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from opt_suite.agents.expert import checkpoint_key, train_expert
from opt_suite.agents.params import ExpertParams, NetworkParams, PPOParams
from opt_suite.demonstrations.agent_sampling import (
    CutDemonstration,
    collect_agent_demonstrations,
    cut_message,
    reports_lives,
    sample_demonstration,
)
from opt_suite.families.atari.family import Atari, Variation

FAMILY = Atari()
TRAIN, _ = FAMILY.make_tasks(Variation(), (), 3, 2, 1, seed=0)
TINY = ExpertParams(
    frames=500,
    ppo=PPOParams(
        num_envs=2,
        steps_per_iteration=16,
        epochs=1,
        network=NetworkParams(
            conv_filters=(4,), conv_kernels=(8,), conv_strides=(4,), fc_units=(16,)
        ),
    ),
)


@pytest.fixture(scope="module")
def expert(tmp_path_factory):
    path = tmp_path_factory.mktemp("experts") / "expert-0.npz"
    return train_expert(FAMILY, TRAIN[0], TINY, seed=3, checkpoint=path), path


def _iteration_frames(task) -> int:
    return TINY.ppo.num_envs * TINY.ppo.steps_per_iteration * task.params.frame_skip


def test_training_spends_the_frame_budget(expert):
    trained, _ = expert
    assert not trained.reused
    # Checked between iterations: at least the budget, at most one iteration (plus the
    # resets' random start actions) beyond it.
    start_frames = TINY.ppo.num_envs * TRAIN[0].params.start_actions * TRAIN[0].params.frame_skip
    assert TINY.frames <= trained.frames < TINY.frames + _iteration_frames(TRAIN[0]) + start_frames
    probs = trained.action_probabilities(np.zeros((3, 84, 84, 2), np.uint8))
    assert probs.shape == (3, 4)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)


def test_training_is_seeded(expert):
    trained, _ = expert
    again = train_expert(FAMILY, TRAIN[0], TINY, seed=3)
    for a, b in zip(trained.actor.get_weights(), again.actor.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)
    other = train_expert(FAMILY, TRAIN[0], TINY, seed=4)
    assert any(
        not np.array_equal(a, b)
        for a, b in zip(trained.actor.get_weights(), other.actor.get_weights(), strict=True)
    )


def test_checkpoint_is_reused_and_keyed(expert):
    trained, path = expert
    assert path.exists()
    reloaded = train_expert(FAMILY, TRAIN[0], TINY, seed=3, checkpoint=path)
    assert reloaded.reused and reloaded.key == trained.key and reloaded.frames == trained.frames
    for a, b in zip(trained.actor.get_weights(), reloaded.actor.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(reloaded.episode_returns, trained.episode_returns)
    # Anything that changes the weights changes the key: another budget, task or seed.
    bigger = dataclasses.replace(TINY, frames=TINY.frames + 1)
    assert checkpoint_key(FAMILY, TRAIN[0], bigger, 3) != trained.key
    assert checkpoint_key(FAMILY, TRAIN[1], TINY, 3) != trained.key
    assert checkpoint_key(FAMILY, TRAIN[0], TINY, 4) != trained.key


def test_a_demonstration_is_a_real_episode_until_a_life_is_lost(expert):
    trained, _ = expert
    task = TRAIN[0]
    trajectory, cut = sample_demonstration(FAMILY, task, trained, np.random.default_rng(5), 5000)
    assert not cut
    T = len(trajectory)
    assert trajectory.observations.shape == (T + 1, 84, 84, 2)
    assert trajectory.observations.dtype == np.uint8
    assert trajectory.task_id == task.task_id
    # Replaying its actions from the same reset seed gives the same frames, rewards and a life
    # lost exactly at the last step.
    env = FAMILY.make_env(task)
    obs, info = env.reset(seed=int(np.random.default_rng(5).integers(2**31 - 1)))
    np.testing.assert_array_equal(obs, trajectory.observations[0])
    lives = [info["lives"]]
    for t, action in enumerate(trajectory.actions):
        obs, reward, *_, info = env.step(int(action))
        np.testing.assert_array_equal(obs, trajectory.observations[t + 1])
        assert reward == trajectory.rewards[t]
        lives.append(info["lives"])
    assert lives[-1] < lives[0] and len(set(lives[:-1])) == 1


def test_collect_demonstrations_is_deterministic_and_reuses_experts(tmp_path):
    seed = np.random.SeedSequence(11)
    first = collect_agent_demonstrations(FAMILY, TRAIN, TINY, 2, 5000, seed, tmp_path)
    assert [t.task_id for t in first.trajectories] == [TRAIN[0].task_id] * 2 + [
        TRAIN[1].task_id
    ] * 2
    names = sorted(p.name for p in tmp_path.iterdir())
    assert len(names) == 4 and all(n.startswith("expert-") for n in names)
    assert sum(n.endswith(".npz") for n in names) == 2  # each with its digest sidecar
    again = collect_agent_demonstrations(FAMILY, TRAIN, TINY, 2, 5000, seed, tmp_path)
    assert all(expert.reused for expert in again.experts)
    for a, b in zip(first.trajectories, again.trajectories, strict=True):
        np.testing.assert_array_equal(a.observations, b.observations)
        np.testing.assert_array_equal(a.actions, b.actions)
    for trajectory, task in zip(first.trajectories[::2], TRAIN, strict=True):
        scale = task.params.reward_scale  # rewards are the task's scaled (unclipped) rewards
        raw = trajectory.rewards / scale
        np.testing.assert_allclose(raw, np.round(raw), atol=1e-9)


def test_a_cut_demonstration_is_counted_or_an_error(expert, tmp_path):
    trained, path = expert
    _, cut = sample_demonstration(FAMILY, TRAIN[0], trained, np.random.default_rng(5), 3)
    assert cut
    seed = np.random.SeedSequence(11)
    kept = collect_agent_demonstrations(FAMILY, TRAIN[:1], TINY, 2, 3, seed, tmp_path)
    assert kept.cut == 2 and all(len(t) == 3 for t in kept.trajectories)
    with pytest.raises(CutDemonstration, match=f"demonstration on {TRAIN[0].task_id} was cut"):
        collect_agent_demonstrations(FAMILY, TRAIN[:1], TINY, 2, 3, seed, tmp_path, allow_cut=False)


def test_cut_messages_speak_of_lives_only_where_envs_have_lives():
    from image_toys import PixelCorridor, PixelVariation

    atari = cut_message(TRAIN[0].task_id, 3, 3, reports_lives(FAMILY, TRAIN[0]))
    assert f"demonstration on {TRAIN[0].task_id} was cut after 3 steps before a life was lost" in (
        atari
    )
    assert "max_episode_frames" in atari
    pixels = PixelCorridor()
    task = pixels.make_tasks(PixelVariation(), (), 2, 1, 1, seed=0)[0][0]
    assert not reports_lives(pixels, task)
    other = cut_message(task.task_id, 3, 3, lives=False)
    assert "before the episode ended" in other and "episode cap" in other
    assert "life" not in other and "max_episode_frames" not in other
