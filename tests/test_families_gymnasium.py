"""The ``gymnasium`` family: any gymnasium env by id, varied as the paper varies Atari games."""

from __future__ import annotations

import dataclasses
import os
import textwrap

import gymnasium
import numpy as np
import pytest

from opt_suite.cli import main
from opt_suite.families.capabilities import IMAGE_OBSERVATIONS, INDEX_OBSERVATIONS
from opt_suite.families.gymnasium.env import GymnasiumTaskEnv
from opt_suite.families.gymnasium.family import Gymnasium, Params, TaskParams, Variation
from opt_suite.families.gymnasium.ids import register_id
from opt_suite.params import FrozenDict
from opt_suite.spec import load_spec, parse_spec
from opt_suite.testing import EnvContract

# FrozenLake declares "human" rendering, which opens a pygame window: on a machine without a
# display (CI) pygame needs its dummy video driver, set before the first window is made.
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")

MINIGRID = Params(id="MiniGrid-Empty-Random-6x6-v0", observation_key="image", max_episode_steps=200)


class TestMinAtarContract(EnvContract):
    def family(self):
        return Gymnasium(Params(id="MinAtar/Breakout-v1", max_episode_steps=2000))

    def variation(self):
        return Variation(start_actions=(0, 6), reward_scale=(0.0, 10.0), frame_skip=(1, 2, 3))


class TestMiniGridContract(EnvContract):
    def family(self):
        return Gymnasium(MINIGRID)

    def variation(self):
        return Variation(start_actions=(0, 3), frame_skip=(1, 2))


class TestFrozenLakeWithDrawnKwargsContract(EnvContract):
    """Index observations, and a kwarg drawn per task (the slipperiness)."""

    def family(self):
        kwargs = FrozenDict(map_name="4x4", is_slippery=(True, False))
        return Gymnasium(Params(id="FrozenLake-v1", kwargs=kwargs, max_episode_steps=100))

    def variation(self):
        return Variation(start_actions=(0, 2), reward_scale=(0.5, 2.0))


def _minatar(**task) -> GymnasiumTaskEnv:
    return Gymnasium(Params(id="MinAtar/Breakout-v1")).make_env(TaskParams(**task)).unwrapped


# The env ------------------------------------------------------------------------------------


def test_minatar_booleans_become_uint8_0_or_255_and_spaces_decide_capabilities():
    family = Gymnasium(Params(id="MinAtar/Breakout-v1"))
    assert family.observation_space == gymnasium.spaces.Box(0, 255, (10, 10, 4), np.uint8)
    assert IMAGE_OBSERVATIONS in family.capabilities
    obs, _ = family.make_env(TaskParams()).reset(seed=0)
    assert obs.dtype == np.uint8 and set(np.unique(obs)) == {0, 255}
    lake = Gymnasium(Params(id="FrozenLake-v1"))
    assert INDEX_OBSERVATIONS in lake.capabilities and IMAGE_OBSERVATIONS not in lake.capabilities


def test_minigrid_dict_observation_is_its_key():
    env = Gymnasium(MINIGRID).make_env(TaskParams())
    obs, _ = env.reset(seed=0)
    assert obs.shape == (7, 7, 3) and obs.dtype == np.uint8


def test_a_dict_observation_without_a_key_defaults_to_its_image_entry():
    """No ``observation_key``: MiniGrid's ``image`` (the spec needs no key to fit the env)."""
    params = dataclasses.replace(MINIGRID, observation_key=None)
    family = Gymnasium(params)
    assert family.observation_space.shape == (7, 7, 3)
    obs, _ = family.make_env(TaskParams()).reset(seed=0)
    assert obs.shape == (7, 7, 3)


def test_frame_skip_repeats_the_action_sums_rewards_and_counts_frames():
    """A skip-3 step is three skip-1 steps with the same action: same frames, summed reward."""
    once, thrice = (
        _minatar(frame_skip=1, reward_scale=2.0),
        _minatar(frame_skip=3, reward_scale=2.0),
    )
    once.reset(seed=5)
    thrice.reset(seed=5)
    actions = np.random.default_rng(0).integers(3, size=60)
    for action in actions:
        obs3, r3, term3, trunc3, info3 = thrice.step(int(action))
        total, frames = 0.0, 0
        for _ in range(3):
            obs1, r1, term1, trunc1, info1 = once.step(int(action))
            total, frames = total + r1, frames + 1
            if term1 or trunc1:
                break
        assert info3["frames"] == frames and r3 == total
        np.testing.assert_array_equal(obs3, obs1)
        assert (term3, trunc3) == (term1, trunc1)
        if term3 or trunc3:
            break
    assert info3["episode_frames"] == once._episode_frames


def test_reward_scale_multiplies_every_reward():
    plain, scaled = _minatar(reward_scale=1.0), _minatar(reward_scale=2.5)
    plain.reset(seed=1)
    scaled.reset(seed=1)
    rewards = []
    for action in np.random.default_rng(1).integers(3, size=500):
        _, r1, end, trunc, _ = plain.step(int(action))
        _, r2, *_ = scaled.step(int(action))
        rewards.append((r1, r2))
        if end or trunc:
            plain.reset()
            scaled.reset()
    assert any(r1 > 0 for r1, _ in rewards)  # the check saw rewards
    assert all(r2 == 2.5 * r1 for r1, r2 in rewards)


def test_start_actions_are_random_counted_as_frames_and_seeded():
    env = _minatar(start_actions=4)
    firsts = set()
    for seed in range(8):
        obs, info = env.reset(seed=seed)
        assert info["frames"] == 4 == info["episode_frames"]
        firsts.add(obs.tobytes())
        again, _ = env.reset(seed=seed)
        np.testing.assert_array_equal(obs, again)
    assert len(firsts) > 1  # different seeds, different random starts


def test_start_actions_that_end_the_episode_are_reported_by_the_first_step():
    env = _minatar(start_actions=30)  # a random Breakout paddle misses the ball within 30 steps
    obs, info = env.reset(seed=0)
    assert info["frames"] < 30
    after, reward, terminated, truncated, info = env.step(0)
    assert terminated and not truncated and reward == 0.0 and info["frames"] == 0
    np.testing.assert_array_equal(after, obs)


def test_max_episode_steps_counts_frames_not_decisions():
    env = Gymnasium(Params(id="MinAtar/Freeway-v1", max_episode_steps=10)).make_env(
        TaskParams(frame_skip=3, start_actions=2)
    )
    _, info = env.reset(seed=0)
    frames, decisions, truncated = info["frames"], 0, False
    while not truncated:
        _, _, terminated, truncated, info = env.step(0)
        frames, decisions = frames + info["frames"], decisions + 1
        assert not terminated
    assert frames == 10 and decisions == 3  # 2 start frames + 3 + 3 + 2


def test_make_env_adds_no_outer_wrapper_and_still_refuses_a_step_or_render_before_reset():
    """The wrapped env's own OrderEnforcing refuses, so make_env leaves gymnasium's out."""
    family = Gymnasium(Params(id="FrozenLake-v1"))
    env = family.make_env(TaskParams(), render_mode="rgb_array")
    assert isinstance(env, GymnasiumTaskEnv)
    with pytest.raises(gymnasium.error.ResetNeeded):
        env.step(0)
    with pytest.raises(gymnasium.error.ResetNeeded):
        env.render()
    env.reset(seed=0)
    env.step(0)
    assert env.render().dtype == np.uint8


def test_kwargs_lists_are_drawn_per_task_from_the_seed():
    family = Gymnasium(
        Params(id="FrozenLake-v1", kwargs=FrozenDict(map_name="4x4", is_slippery=(True, False)))
    )
    train, test = family.make_tasks(Variation(), (), 12, 6, 6, seed=0)
    drawn = [t.params.kwargs["is_slippery"] for t in train + test]
    assert set(drawn) == {True, False}
    assert [t.params for t in train] == [
        t.params for t in family.make_tasks(Variation(), (), 12, 6, 6, 0)[0]
    ]
    for task in train[:4]:  # a slippery lake has 3 outcomes per action, a dry one 1
        model = family.make_env(task).unwrapped._env.unwrapped.P
        assert len(model[0][0]) == (3 if task.params.kwargs["is_slippery"] else 1)


def test_module_colon_id_imports_the_module_first():
    assert register_id("gymnasium.envs.classic_control:CartPole-v1") == "CartPole-v1"


# Validation: located errors, exit 2, before anything runs ------------------------------------

SPEC = """\
name: gym-test
family:
  name: gymnasium
  params: {params}
tasks:
  count: 3
  train: 1
  test: 2
  vary: {vary}
methods:
  - name: primitives
    method: primitives
evaluation:
  learner: tf_agents
  params:
    ppo:
      num_envs: 2
      network: {{conv_filters: [8], conv_kernels: [3], conv_strides: [1], fc_units: [16]}}
  frames: 1000
"""


def _validate(tmp_path, capsys, params: str, vary: str = "{}") -> tuple[int, str]:
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC.format(params=params, vary=vary))
    code = main(["validate", str(path)])
    out, err = capsys.readouterr()
    return code, err


def test_a_valid_minatar_spec_validates(tmp_path, capsys):
    code, err = _validate(
        tmp_path,
        capsys,
        '{id: "MinAtar/Breakout-v1"}',
        "{start_actions: [1, 5], frame_skip: [1, 2]}",
    )
    assert code == 0, err


@pytest.mark.parametrize(
    ("params", "vary", "where", "words"),
    [
        (
            '{id: "MinAtar/Braekout-v1"}',
            "{}",
            "family.params.id",
            ["not a registered gymnasium id", "did you mean 'MinAtar/Breakout-v1'"],
        ),
        (
            '{id: "MinAtar/Breakout-v1", kwargs: {speed: 3}}',
            "{}",
            "family.params.kwargs",
            ["rejects kwargs {speed: 3}", "unexpected keyword argument 'speed'"],
        ),
        (
            '{id: "MiniGrid-Empty-Random-6x6-v0", observation_key: mission}',
            "{}",
            "family.params.observation_key",
            ["'mission' holds", "not an array (Box) or an index", "usable keys: direction, image"],
        ),
        (
            '{id: "MiniGrid-Empty-Random-6x6-v0", observation_key: img}',
            "{}",
            "family.params.observation_key",
            ["'img' is not a key"],
        ),
        (
            '{id: "MiniGrid-Empty-Random-6x6-v0", observation_key: image, '
            "kwargs: {agent_view_size: [5, 7]}}",
            "{}",
            "family.params.kwargs",
            ["spaces differ between tasks", "{agent_view_size: 5}", "{agent_view_size: 7}"],
        ),
        (
            '{id: "MinAtar/Breakout-v1"}',
            "{start_actions: [5, 2]}",
            "tasks.vary.start_actions",
            ["expected lo <= hi"],
        ),
        (
            '{id: "MinAtar/Breakout-v1", max_episode_steps: 10}',
            "{start_actions: [1, 10]}",
            "tasks.vary.start_actions",
            ["at most 9 start actions"],
        ),
        (
            '{id: "MinAtar/Breakout-v1"}',
            "{reward_scale: [2.0, 1.0]}",
            "tasks.vary.reward_scale",
            ["hi > 0"],
        ),
        ('{id: "MinAtar/Breakout-v1"}', "{frame_skip: [0, 2]}", "tasks.vary.frame_skip", [">= 1"]),
        (
            '{id: "MinAtar/Breakout-v1"}',
            "{frame_skip: []}",
            "tasks.vary.frame_skip",
            ["at least one"],
        ),
    ],
)
def test_bad_input_is_one_located_line_and_exit_2(tmp_path, capsys, params, vary, where, words):
    code, err = _validate(tmp_path, capsys, params, vary)
    assert code == 2
    lines = [line for line in err.splitlines() if line.strip()]
    assert any(where in line and all(w in line for w in words) for line in lines), err
    assert "Traceback" not in err


def test_a_missing_package_names_the_extra(monkeypatch):
    import sys

    from opt_suite.families.gymnasium import ids as gymnasium_ids

    for module in ("minatar", "minatar.gym"):
        monkeypatch.setitem(sys.modules, module, None)  # `import minatar.gym` now fails
    monkeypatch.setattr(
        gymnasium_ids.gymnasium,
        "registry",
        {k: v for k, v in gymnasium.registry.items() if not k.startswith("MinAtar/")},
    )
    with pytest.raises(gymnasium_ids.UnknownEnvId, match=r"pip install 'opt-suite\[minatar\]'"):
        register_id("MinAtar/Breakout-v1")


def test_a_listed_task_must_draw_each_listed_kwarg(tmp_path):
    text = textwrap.dedent(
        """\
        name: listed
        family:
          name: gymnasium
          params: {id: FrozenLake-v1, kwargs: {is_slippery: [true, false]}}
        tasks:
          count: 2
          train: 1
          test: 1
          list:
            - {kwargs: {is_slippery: false}}
            - {kwargs: {}}
        methods: [{name: primitives, method: primitives}]
        evaluation: {learner: tf_agents, frames: 1000}
        """
    )
    path = tmp_path / "listed.yaml"
    path.write_text(text)
    with pytest.raises(Exception, match=r"tasks\.list\[1\]\.kwargs.*is_slippery"):
        load_spec(path)
    spec = parse_spec(text.replace("- {kwargs: {}}", "- {kwargs: {is_slippery: true}}"))
    assert spec.tasks.list[0].kwargs == {"is_slippery": False}


@pytest.mark.parametrize("name", ["minatar-breakout", "minatar-asterix", "minigrid-empty"])
def test_bundled_gymnasium_specs_follow_the_paper_protocol(name):
    """Sec. 4.2 on small images: a trained expert demonstrates, options see frames, 3 + 5 tasks."""
    from opt_suite.spec import find_spec, load_sweep

    spec = load_sweep(find_spec(name)).base
    assert spec.family.name == "gymnasium" and spec.demonstrations.source == "ppo_expert"
    assert spec.evaluation.learner == "tf_agents" and spec.evaluation.frames
    assert (spec.tasks.train, spec.tasks.test) == (3, 5)
    assert spec.demonstrations.trajectories_per_task * spec.tasks.train == 12
    learned = [m for m in spec.methods if m.method == "offline_options"]
    assert learned and all(m.params.features == "frames" for m in learned)
    vary = spec.tasks.vary
    assert vary.reward_scale == (0.0, 10.0)
    if spec.family.params.id.startswith("MiniGrid-"):
        # A repeated 90-degree turn is a half turn: with a frame skip the agent cannot steer
        # (docs/gymnasium.md), so MiniGrid specs vary the other two axes only.
        assert vary.frame_skip == (1,)
    else:
        assert len(vary.frame_skip) > 1
