"""The sub-goal MiniGrid family (issue 35): its env, planner, scripted options and task split."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

from opt_suite.demonstrations.minigrid_planner import PlannerError, shortest_path
from opt_suite.families.base import TaskFamily
from opt_suite.families.capabilities import REFERENCE_OPTIONS, offered
from opt_suite.families.gymnasium.family import Gymnasium, Params, Variation
from opt_suite.families.gymnasium.ids import register_id
from opt_suite.options import from_bytes, to_bytes
from opt_suite.options import subgoal_grid as sg
from opt_suite.options.subgoals import SubgoalOptions
from opt_suite.params import FrozenDict
from opt_suite.testing import EnvContract

ENV_ID = "OptSuite/MiniGrid-Subgoals-v0"
TRAIN = ("key-door-goal", "key-door", "ball")
TEST = ("key-door-ball", "ball-key-door-goal")
PARAMS = Params(id=ENV_ID, kwargs=FrozenDict(subgoals=TRAIN + TEST), max_episode_steps=200)


def _env(subgoals: str) -> gymnasium.Env:
    register_id(ENV_ID)
    return gymnasium.make(ENV_ID, subgoals=subgoals, disable_env_checker=True)


class TestSubgoalsContract(EnvContract):
    def family(self):
        return Gymnasium(PARAMS)

    def variation(self):
        return Variation(start_actions=(0, 3), held_out_kwargs=FrozenDict(subgoals=TEST))


def test_the_grid_codes_are_minigrids():
    from minigrid.core.actions import Actions
    from minigrid.core.constants import OBJECT_TO_IDX, STATE_TO_IDX

    codes = {"empty": sg.EMPTY, "wall": sg.WALL, "floor": sg.FLOOR, "door": sg.DOOR}
    codes |= {"key": sg.KEY, "ball": sg.BALL, "box": sg.BOX, "goal": sg.GOAL, "agent": sg.AGENT}
    assert {k: OBJECT_TO_IDX[k] for k in codes} == codes
    assert (STATE_TO_IDX["open"], STATE_TO_IDX["closed"], STATE_TO_IDX["locked"]) == (
        sg.DOOR_OPEN,
        sg.DOOR_CLOSED,
        sg.DOOR_LOCKED,
    )
    assert (Actions.pickup, Actions.toggle, Actions.done) == (sg.PICKUP, sg.TOGGLE, sg.DONE)


@pytest.mark.parametrize(
    ("subgoals", "message"),
    [
        ("key-lever", "expected sub-goals from"),
        ("key-key", "at most once"),
        ("door-goal", "'door' needs 'key' before it"),
        ("goal-ball", "comes last"),
    ],
)
def test_a_bad_sequence_is_refused(subgoals, message):
    with pytest.raises(ValueError, match=message):
        _env(subgoals)


@pytest.mark.parametrize("subgoals", TRAIN + TEST + ("ball-goal", "key"))
def test_the_planner_solves_every_task_and_the_options_take_its_routes(subgoals):
    env = _env(subgoals)
    for seed in range(40):
        env.reset(seed=seed)
        plan = shortest_path(env.unwrapped)
        ends = []
        for action in plan:
            _, reward, terminated, truncated, _ = env.step(action)
            ends.append(terminated or truncated)
        assert ends == [False] * (len(plan) - 1) + [True], (subgoals, seed)
        assert terminated and reward > 0, (subgoals, seed)
        # The scripted options, run one after another in the task's order, take as many steps.
        obs, _ = env.reset(seed=seed)
        taken, terminated = 0, False
        for subgoal in env.unwrapped.subgoals:
            while not terminated:
                actions, done = sg.subgoal_plan(obs["image"], subgoal)
                if done is not False:
                    assert done is True
                    break
                obs, _, terminated, _, _ = env.step(actions[0])
                taken += 1
        assert terminated and taken == len(plan), (subgoals, seed)


def test_the_ball_is_collected_the_key_used_up_and_the_goal_waits_for_the_rest():
    env = _env("ball-key-door-goal")
    obs, _ = env.reset(seed=1)
    grid = obs["image"]
    for subgoal in ("ball", "key", "door"):
        actions, _ = sg.subgoal_plan(grid, subgoal)
        for action in actions:
            obs, _, terminated, _, _ = env.step(action)
            assert not terminated
        grid = obs["image"]
        np.testing.assert_array_equal(grid, sg.after(grid, []))  # the planner's model agrees
    codes = sg.decode(grid)
    assert not (codes[:, :, 0] == sg.BALL).any() and not (codes[:, :, 0] == sg.KEY).any()
    assert env.unwrapped.carrying is None  # the key opened the door and is gone
    assert sg.subgoal_plan(grid, "door") == ([], True)
    # Without the ball the goal does not end the episode.
    env = _env("ball-goal")
    route: list[int] = []
    for seed in range(20):
        obs, _ = env.reset(seed=seed)
        route, _ = sg.subgoal_plan(obs["image"], "goal")
        if route:
            break
    for action in route:
        _, reward, terminated, _, _ = env.step(action)
    assert not terminated and reward == 0
    assert env.unwrapped.grid.get(*env.unwrapped.agent_pos).type == "goal"


def test_options_stop_where_their_subgoal_is_reached_or_out_of_reach():
    options = SubgoalOptions()
    obs, _ = _env("key-door-goal").reset(seed=0)
    mu, beta = options.probabilities(obs["image"][None])
    assert mu.shape == (1, 4, 7) and np.allclose(mu.sum(axis=2), 1)
    # Only the key is in reach: the door is locked with no key in hand, there is no ball, and the
    # goal lies behind the door.
    assert beta[0].tolist() == [0.0, 1.0, 1.0, 1.0]
    assert (mu[0, 1:, sg.DONE] == 1).all()
    # ...and the learner may start only the key option there (float frames, as the mask sees them).
    assert options.has_initiation
    frames = obs["image"][None].astype(np.float32)
    assert options.initiation(frames).tolist() == [[True, False, False, False]]
    env = _env("key-door-goal")
    obs, _ = env.reset(seed=0)
    for subgoal, after in (("key", [1.0, 0.0, 1.0, 1.0]), ("door", [1.0, 1.0, 1.0, 0.0])):
        while options.probabilities(obs["image"][None])[1][0, sg.SUBGOALS.index(subgoal)] == 0:
            mu, _ = options.probabilities(obs["image"][None])
            obs, *_ = env.step(int(np.argmax(mu[0, sg.SUBGOALS.index(subgoal)])))
        assert options.probabilities(obs["image"][None])[1][0].tolist() == after
    assert from_bytes(to_bytes(options)).names == ("key", "door", "ball", "goal")


def test_the_family_offers_the_scripted_options_and_other_envs_none():
    family = Gymnasium(PARAMS)
    assert REFERENCE_OPTIONS in offered(family)
    assert isinstance(family.reference_options(family.default_task()), SubgoalOptions)
    empty = Gymnasium(Params(id="MiniGrid-Empty-Random-6x6-v0", max_episode_steps=50))
    assert REFERENCE_OPTIONS not in offered(empty)
    assert empty.reference_options(empty.default_task()) is None


def test_test_tasks_draw_the_held_out_sequences_and_train_tasks_the_others():
    family = Gymnasium(PARAMS)
    variation = Variation(held_out_kwargs=FrozenDict(subgoals=TEST))
    assert family.check_variation(variation) == []
    train, test = family.make_tasks(variation, [], 12, 4, 8, seed=0)
    assert {t.params.kwargs["subgoals"] for t in train} <= set(TRAIN)
    assert {t.params.kwargs["subgoals"] for t in test} == set(TEST)
    drawn = family.sample_test_tasks(variation, 20, np.random.default_rng(3))
    assert {t.kwargs["subgoals"] for t in drawn} == set(TEST)
    # Without held_out_kwargs both draw alike, as before the key existed.
    plain = Variation()
    a = family.sample_tasks(plain, 6, np.random.default_rng(5))
    b = family.sample_test_tasks(plain, 6, np.random.default_rng(5))
    assert a == b
    assert family.make_tasks(plain, [], 12, 4, 8, 0) == TaskFamily.make_tasks(
        family, plain, [], 12, 4, 8, 0
    )


def test_the_draws_ignore_the_order_the_spec_lists_its_kwargs_in():
    # The spec's hash ignores the YAML order of family.params.kwargs (a run stores its spec with
    # sorted keys), so the tasks drawn must too: replaying a stored run must plan its own tasks.
    kwargs = {"subgoals": TRAIN + TEST, "layout": tuple(range(20))}
    listed = Params(id=ENV_ID, kwargs=FrozenDict(kwargs), max_episode_steps=200)
    stored = Params(id=ENV_ID, kwargs=FrozenDict(sorted(kwargs.items())), max_episode_steps=200)
    assert list(listed.kwargs) != list(stored.kwargs)
    variation = Variation(start_actions=(0, 3), held_out_kwargs=FrozenDict(subgoals=TEST))
    for seed in range(3):
        draws = [
            Gymnasium(p).sample_test_tasks(variation, 8, np.random.default_rng(seed))
            for p in (listed, stored)
        ]
        assert draws[0] == draws[1]


@pytest.mark.parametrize(
    ("held_out", "message"),
    [
        (FrozenDict(size=(9,)), "held_out_kwargs.size: expected a kwarg family.params.kwargs"),
        (FrozenDict(subgoals=()), "expected a non-empty list"),
        (FrozenDict(subgoals=("key-lever",)), "'key-lever' is not one of family.params.kwargs"),
        (FrozenDict(subgoals=TRAIN + TEST), "holds out every choice"),
    ],
)
def test_bad_held_out_kwargs_are_located(held_out, message):
    problems = Gymnasium(PARAMS).check_variation(Variation(held_out_kwargs=held_out))
    assert [key for key, _ in problems] == ["held_out_kwargs"]
    assert message in problems[0][1]


def test_the_planner_names_an_unreachable_subgoal():
    env = _env("key-door-goal")
    env.reset(seed=0)
    env.unwrapped.grid.set(
        *[int(v) for v in np.argwhere(env.unwrapped.grid.encode()[:, :, 0] == sg.KEY)[0]], None
    )
    with pytest.raises(PlannerError, match="sub-goal 'key' of 'key-door-goal' cannot be reached"):
        shortest_path(env.unwrapped)


@pytest.mark.parametrize("reward_each", [True, False])
def test_each_subgoal_pays_its_share_or_the_last_pays_all(reward_each):
    register_id(ENV_ID)
    env = gymnasium.make(ENV_ID, subgoals="ball-key-door-goal", reward_each=reward_each)
    env.reset(seed=4)
    rewards = [env.step(action)[1] for action in shortest_path(env.unwrapped)]
    paid = [r for r in rewards if r != 0]
    assert len(paid) == (4 if reward_each else 1)
    assert rewards[-1] == paid[-1]
    steps = len(rewards)
    assert rewards[-1] == pytest.approx((1 - 0.9 * steps / 200) / (4 if reward_each else 1))


def test_the_observation_is_minigrids_encoding_scaled_with_the_agent_written_in():
    env = _env("key-door-ball")
    obs, _ = env.reset(seed=2)
    codes = sg.decode(obs["image"])
    np.testing.assert_array_equal(codes * sg.CODE_SCALE, obs["image"])
    x, y = env.unwrapped.agent_pos
    expected = env.unwrapped.grid.encode()
    expected[x, y] = (sg.AGENT, 0, env.unwrapped.agent_dir)
    np.testing.assert_array_equal(codes, expected)
    assert obs["image"].max() > 100  # the networks read it at 1/255


def test_a_fixed_layout_is_the_same_grid_at_every_reset_with_the_agent_anywhere_west():
    register_id(ENV_ID)
    env = gymnasium.make(ENV_ID, subgoals="key-door-ball", layout=3, disable_env_checker=True)
    grids, starts = [], set()
    for seed in range(12):
        obs, _ = env.reset(seed=seed)
        codes = sg.decode(obs["image"])
        (x, y, d), _ = sg.agent_state(codes)
        starts.add((x, y, d))
        codes[x, y] = (sg.EMPTY, 0, 0)
        grids.append(codes)
        assert x < env.unwrapped._split
    assert all((g == grids[0]).all() for g in grids) and len(starts) > 6
    other, _ = gymnasium.make(ENV_ID, subgoals="key-door-ball", layout=4).reset(seed=0)
    assert not (sg.decode(other["image"])[:, :, 0] == grids[0][:, :, 0]).all()
    with pytest.raises(ValueError, match="layout: expected an integer seed"):
        gymnasium.make(ENV_ID, layout="west")


@pytest.mark.parametrize("subgoals", TRAIN + TEST)
def test_the_planner_solves_every_task_of_the_bundled_specs_layouts(subgoals):
    register_id(ENV_ID)
    for layout in range(20):  # specs/minigrid-subgoals.yaml's layouts
        env = gymnasium.make(ENV_ID, subgoals=subgoals, layout=layout, disable_env_checker=True)
        for seed in range(4):
            env.reset(seed=seed)
            ends = [env.step(action)[2] for action in shortest_path(env.unwrapped)]
            assert ends[-1] and not any(ends[:-1]), (subgoals, layout, seed)


def test_options_answer_on_any_frame_a_learner_may_probe_them_with():
    frames = np.random.default_rng(0).integers(0, 256, (16, 7, 7, 3)).astype(np.float32)
    frames[0] = 0.0
    frames[1, 2, 3] = (sg.AGENT * sg.CODE_SCALE, 0, 9 * sg.CODE_SCALE)  # a heading MiniGrid lacks
    mu, beta = SubgoalOptions().probabilities(frames)
    assert mu.shape == (16, 4, 7) and np.allclose(mu.sum(axis=2), 1)
    assert set(np.unique(beta)) <= {0.0, 1.0}
    assert SubgoalOptions().initiation(frames).shape == (16, 4)
