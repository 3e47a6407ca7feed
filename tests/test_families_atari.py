"""The Atari family: env contract (headless), the paper's three variations, pinned ALE options."""

from __future__ import annotations

import subprocess
import sys
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from opt_suite import registry
from opt_suite.families.atari.family import (
    Atari,
    AtariTaskEnv,
    Params,
    TaskParams,
    Variation,
    installed_games,
)
from opt_suite.testing import spec_round_trip

BREAKOUT = Atari()  # the default game
TASK = TaskParams(start_actions=5, reward_scale=2.5, frame_skip=3)


def rollout(env, seed: int, steps: int = 150, actions_seed: int = 12345) -> list:
    actions = np.random.default_rng(actions_seed)
    obs, info = env.reset(seed=seed)
    out = [(obs.tobytes(), info["frames"])]
    for _ in range(steps):
        action = int(actions.integers(env.action_space.n))
        obs, reward, terminated, truncated, info = env.step(action)
        out.append((obs.tobytes(), reward, terminated, truncated, info["frames"], info["lives"]))
        if terminated or truncated:
            obs, info = env.reset()
            out.append((obs.tobytes(), info["frames"]))
    return out


# Registration and the env contract ---------------------------------------------------------


def test_registered_family_and_env_id():
    assert registry.load(registry.FAMILIES, "atari") is Atari
    assert Atari.env_id in gymnasium.registry
    env = gymnasium.make("opt_suite/Atari-v0")  # a documented default task: Breakout
    assert env.unwrapped.params == Params() and env.unwrapped.task_params == TaskParams()


def test_module_does_not_import_tensorflow():
    code = "import sys, opt_suite.families.atari.family; print('tensorflow' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("render_mode", [None, "rgb_array"])
def test_check_env_headless(render_mode):
    env = BREAKOUT.make_env(TASK, render_mode=render_mode)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)
    obs, _ = env.reset(seed=0)
    assert env.observation_space == gymnasium.spaces.Box(0, 255, (84, 84, 2), np.uint8)
    assert obs.shape == (84, 84, 2) and obs.dtype == np.uint8 and obs.max() > 0
    picture = env.render()
    if render_mode == "rgb_array":
        assert picture.shape == (210, 160, 3) and picture.dtype == np.uint8
    else:
        assert picture is None


def test_seeded_determinism_and_seeds_matter():
    env = BREAKOUT.make_env(TASK)
    first = rollout(env, seed=7)
    assert first == rollout(BREAKOUT.make_env(TASK), seed=7)
    assert rollout(env, seed=7) == first  # reseeding the same env replays it too
    assert rollout(env, seed=8) != first  # the random start actions depend on the seed


def test_an_episode_end_is_reachable_with_random_actions():
    env = BREAKOUT.make_env(TaskParams(start_actions=1, reward_scale=1.0, frame_skip=4))
    env.reset(seed=0)
    rng, lives = np.random.default_rng(0), []
    for _ in range(5000):
        _, _, terminated, truncated, info = env.step(int(rng.integers(env.action_space.n)))
        lives.append(info["lives"])
        if terminated or truncated:
            break
    assert terminated and not truncated and lives[-1] == 0
    assert lives[0] == 5 and all(b <= a for a, b in zip(lives, lives[1:], strict=False))


# Pinned ALE options -----------------------------------------------------------------------


def test_sticky_actions_are_pinned_off():
    env = BREAKOUT.make_env(TaskParams(start_actions=0, reward_scale=1.0, frame_skip=4))
    assert env.unwrapped.ale.getFloat("repeat_action_probability") == 0.0
    # Each seed reseeds ALE's RNG (which sticky actions would draw from); without start actions
    # two seeds then give the same frames for the same actions: nothing random is left.
    assert rollout(env, seed=1, steps=300) == rollout(env, seed=2, steps=300)


def test_rewards_are_scaled_never_clipped():
    # The same seed and actions on scale 1 and scale 2.5: every reward is exactly 2.5 times the
    # raw one, and scaled rewards above 1 appear (clipping to [-1, 1] would forbid them).
    raw_env = BREAKOUT.make_env(TaskParams(5, 1.0, 3))
    scaled_env = BREAKOUT.make_env(TaskParams(5, 2.5, 3))
    raw = [step[1] for step in rollout(raw_env, seed=1, steps=1500) if len(step) > 2]
    scaled = [step[1] for step in rollout(scaled_env, seed=1, steps=1500) if len(step) > 2]
    assert np.count_nonzero(raw) >= 1, "no reward in 1500 random steps: pick another seed"
    np.testing.assert_array_equal(np.array(scaled), 2.5 * np.array(raw))
    assert max(scaled) >= 2.5


# The three variations ----------------------------------------------------------------------


def test_frame_skip_is_the_frames_per_step():
    for skip in (1, 2, 5):
        env = BREAKOUT.make_env(TaskParams(start_actions=3, reward_scale=1.0, frame_skip=skip))
        _, info = env.reset(seed=0)
        assert info["frames"] == info["episode_frames"] == 3 * skip  # the start actions' frames
        for step in range(1, 11):
            _, _, _, _, info = env.step(0)
            assert info["frames"] == skip
            assert info["episode_frames"] == (3 + step) * skip


def test_start_actions_change_the_initial_state_distribution():
    # With no start actions every reset is the same state; with some, resets differ by seed.
    still = BREAKOUT.make_env(TaskParams(start_actions=0, reward_scale=1.0, frame_skip=4))
    starts = {still.reset(seed=s)[0].tobytes() for s in range(4)}
    assert len(starts) == 1
    moving = BREAKOUT.make_env(TaskParams(start_actions=20, reward_scale=1.0, frame_skip=4))
    starts = {moving.reset(seed=s)[0].tobytes() for s in range(6)}
    assert len(starts) > 1


def test_episode_cap_counts_frames():
    family = Atari(Params(max_episode_frames=50))
    env = family.make_env(TaskParams(start_actions=2, reward_scale=1.0, frame_skip=4))
    _, info = env.reset(seed=0)
    total, truncated, steps = info["frames"], False, 0
    while not truncated:
        _, _, terminated, truncated, info = env.step(0)
        total, steps = total + info["frames"], steps + 1
        assert not terminated
    assert total == info["episode_frames"] == 50  # the last step is cut to the cap: 8 + 10*4 + 2
    assert info["frames"] == 2 and steps == 11


def test_sample_tasks_follow_the_paper():
    tasks = BREAKOUT.sample_tasks(Variation(), 2000, np.random.default_rng(0))
    starts = np.array([t.start_actions for t in tasks])
    scales = np.array([t.reward_scale for t in tasks])
    skips = np.array([t.frame_skip for t in tasks])
    assert set(starts) == set(range(1, 21))
    assert scales.min() > 0 and scales.max() <= 10 and abs(scales.mean() - 5) < 0.3
    assert set(skips) == {2, 3, 4}
    fixed = BREAKOUT.sample_tasks(
        Variation(start_actions=(3, 3), reward_scale=(1.0, 1.0), frame_skip=(4,)),
        3,
        np.random.default_rng(0),
    )
    assert fixed == [TaskParams(3, 1.0, 4)] * 3


def test_make_tasks_deterministic_readable_and_round_trips_through_a_spec():
    train, test = BREAKOUT.make_tasks(Variation(), (), 8, 3, 5, seed=0)
    again = BREAKOUT.make_tasks(Variation(), (), 8, 3, 5, seed=0)
    assert (train, test) == again
    assert [t.task_id for t in train] == [f"atari-breakout/train/{i}" for i in range(3)]
    assert len({t.params for t in train + test}) == 8
    spec, _ = spec_round_trip(BREAKOUT, Variation(), [t.params for t in train])
    assert spec.family.params == BREAKOUT.params
    assert spec.tasks.list == tuple(t.params for t in train)


def test_minimal_and_full_action_sets():
    assert BREAKOUT.make_env(TASK).action_space.n == 4
    assert Atari(Params(action_set="full")).make_env(TASK).action_space.n == 18
    assert Atari(Params(game="amidar")).make_env(TASK).action_space.n == 10


def test_vector_env_sub_env_i_is_the_single_env_seeded_s_plus_i():
    vector = BREAKOUT.make_vector_env(TASK, 2)
    obs, info = vector.reset(seed=10)
    assert obs.shape == (2, 84, 84, 2)
    for i in range(2):
        single_obs, single_info = BREAKOUT.make_env(TASK).reset(seed=10 + i)
        np.testing.assert_array_equal(obs[i], single_obs)
        assert info["frames"][i] == single_info["frames"]


@pytest.mark.parametrize(
    "game, skip, start_actions, cap",
    [("breakout", 4, 5, 108_000), ("breakout", 1, 0, 108_000), ("breakout", 3, 3, 300),
     ("amidar", 5, 2, 1001)],
)  # fmt: skip
def test_frames_are_bit_identical_to_ale_vector_env(game, skip, start_actions, cap):
    # Our preprocessing (pool, OpenCV's INTER_AREA in float32, zero-started stack, skips cut
    # short by the game's end or the frame cap) against ale-py's C++ one, frame for frame: the
    # threaded back end is built on AtariVectorEnv, so one task must look the same through both.
    from ale_py.vector_env import AtariVectorEnv
    from gymnasium.utils import seeding

    vector = AtariVectorEnv(
        game, 1, frameskip=skip, repeat_action_probability=0.0, reward_clipping=False,
        stack_num=2, noop_max=0, use_fire_reset=False, num_threads=1,
        max_num_frames_per_episode=cap,
    )  # fmt: skip
    env = AtariTaskEnv(game=game, start_actions=start_actions, frame_skip=skip,
                       max_episode_frames=cap)  # fmt: skip
    actions = np.random.default_rng(0)
    steps = 0
    for episode in range(2):
        obs, _ = env.reset(seed=100 + episode)
        draws, _ = seeding.np_random(100 + episode)  # the env's own draws: emulator seed, starts
        v_obs, _ = vector.reset(seed=np.array([int(draws.integers(2**31 - 1))]))
        for _ in range(start_actions):
            v_obs, *_ = vector.step(np.array([int(draws.integers(env.action_space.n))]))
        np.testing.assert_array_equal(v_obs[0].transpose(1, 2, 0), obs)
        done = False
        while not done and steps < 700:
            action = int(actions.integers(env.action_space.n))
            v_obs, v_reward, v_term, v_trunc, v_info = vector.step(np.array([action]))
            obs, reward, terminated, truncated, info = env.step(action)
            np.testing.assert_array_equal(v_obs[0].transpose(1, 2, 0), obs)
            assert (v_reward[0], v_term[0], v_trunc[0]) == (reward, terminated, truncated)
            assert v_info["episode_frame_number"][0] == info["episode_frames"]
            steps, done = steps + 1, terminated or truncated
    vector.close()
    assert steps >= 150  # the 300-frame cap: two episodes of 97 steps


# Bad input ---------------------------------------------------------------------------------


def test_unknown_game_lists_the_installed_ones():
    [(key, message)] = Params(game="brekout").check()
    assert key == "game" and "unknown ALE game 'brekout'" in message
    assert "breakout" in message and "amidar" in message
    assert {"breakout", "amidar"} <= set(installed_games())
    with pytest.raises(ValueError, match="unknown ALE game"):
        gymnasium.make("opt_suite/Atari-v0", game="brekout")


def test_bad_variations_and_tasks():
    assert [k for k, _ in Variation(start_actions=(5, 2)).check()] == ["start_actions"]
    assert [k for k, _ in Variation(reward_scale=(0.0, 0.0)).check()] == ["reward_scale"]
    assert [k for k, _ in Variation(frame_skip=()).check()] == ["frame_skip"]
    # The messages of every family's env kwargs (opt_suite.families.env_kwargs.check_params).
    with pytest.raises(ValueError, match="frame_skip: expected a value >= 1, got 0"):
        gymnasium.make("opt_suite/Atari-v0", frame_skip=0)
    with pytest.raises(ValueError, match="reward_scale: expected a value > 0"):
        gymnasium.make("opt_suite/Atari-v0", reward_scale=0.0)


def test_validate_locates_bad_atari_input(tmp_path, capsys):
    from opt_suite.cli import main

    path = tmp_path / "bad.yaml"
    path.write_text(
        "name: atari-bad\n"
        "family:\n"
        "  name: atari\n"
        "  params: {game: brekout}\n"
        "tasks:\n"
        "  count: 3\n"
        "  train: 1\n"
        "  test: 2\n"
        "  vary: {frame_skip: [0, 4], reward_scale: [0.0, 10.0]}\n"
        "  list: [{start_actions: 3, reward_scale: 0.0, frame_skip: 4}]\n"
        "methods:\n"
        "  - {name: primitives, method: primitives}\n"
    )
    assert main(["validate", str(path)]) == 2
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert out == "" and "Traceback" not in err
    assert lines[0].startswith(f"{path}:4:18: family.params.game: unknown ALE game 'brekout'; ")
    assert "did you mean 'breakout'?" in lines[0] and "amidar" in lines[0]
    skip = f"{path}:9:23: tasks.vary.frame_skip[0]: out of range (expected >= 1"
    assert any(line.startswith(skip) and line.endswith("got 0)") for line in lines), lines
    scale = "tasks.list[0].reward_scale: out of range (expected > 0, got 0.0)"
    assert f"{path}:10:43: {scale}" in lines
