"""The ``scripted`` demonstration source: MiniGrid shortest paths, a user's planner, bad input."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from installed_plugin import install_module
from spec_fakes import where

from opt_suite.cli import main
from opt_suite.demonstrations.base import DemonstrationError, SourceContext
from opt_suite.demonstrations.scripted import ScriptedExpert, ScriptedParams
from opt_suite.families.base import Task
from opt_suite.families.gymnasium.family import Gymnasium, Params


def _tasks(family, count=2):
    return [Task(f"{family.instance_name}/train/{i}", "train", i, family.default_task())
            for i in range(count)]  # fmt: skip


def _collect(family, function, per_task=3, max_steps=300, min_per_task=1):
    source = ScriptedExpert(ScriptedParams(function=function, min_per_task=min_per_task))
    return source.collect(
        SourceContext(family, _tasks(family), per_task, max_steps, np.random.SeedSequence(0))
    )


PLANNERS = Path(__file__).parent / "fixtures" / "scripted_plugin" / "scripted_planners.py"


@pytest.fixture(scope="module")
def planners(tmp_path_factory):
    """The test planners as an installed plugin distribution (a test module is not one)."""
    site = install_module(
        tmp_path_factory.mktemp("plugin") / "site-packages",
        "scripted_planners",
        PLANNERS.read_text(),
    )
    sys.path.insert(0, str(site))
    yield site
    sys.path.remove(str(site))
    sys.modules.pop("scripted_planners", None)


@pytest.fixture(scope="module")
def rooms():
    return Gymnasium(Params(id="MiniGrid-FourRooms-v0", max_episode_steps=1000))


@pytest.mark.parametrize("env_id", ["MiniGrid-FourRooms-v0", "MiniGrid-DoorKey-5x5-v0"])
def test_shortest_paths_reach_the_goal(env_id):
    family = Gymnasium(Params(id=env_id, max_episode_steps=1000))
    demos = _collect(family, "opt_suite.demonstrations.minigrid_planner:shortest_path")
    assert len(demos) == 6
    for demo in demos:
        assert demo.rewards[-1] > 0  # MiniGrid rewards only the goal
        assert demo.observations.shape[1:] == (7, 7, 3)  # the default Dict entry: image
    again = _collect(family, "opt_suite.demonstrations.minigrid_planner:shortest_path")
    for a, b in zip(demos, again, strict=True):
        np.testing.assert_array_equal(a.actions, b.actions)


def test_cut_demonstrations_are_dropped_with_a_warning_while_enough_remain(rooms, planners, capsys):
    demos = _collect(rooms, "scripted_planners:every_other_cut", per_task=4, min_per_task=2)
    err = capsys.readouterr().err
    assert len(demos) == 4 and all(d.rewards[-1] > 0 for d in demos)
    assert err.count("warning: demonstrations: a scripted demonstration on") == 4
    assert "was dropped: its episode had not ended after 1 steps" in err
    assert "the function's actions ran out" in err


def test_too_few_complete_demonstrations_name_the_steps_and_every_cap(rooms, planners):
    with pytest.raises(DemonstrationError) as info:
        _collect(rooms, "scripted_planners:forward_forever", per_task=2, max_steps=50)
    message = str(info.value)
    assert "0 of 2 scripted demonstrations on gymnasium-minigrid-fourrooms-v0/train/0" in message
    assert "cut after 50 steps (cut by demonstrations.max_steps" in message
    assert "family.params.max_episode_steps = 1000" in message
    assert "the env's own max_steps = 100 (family.params.kwargs: {max_steps: N})" in message


@pytest.mark.parametrize(
    ("function", "words"),
    [
        (
            "raises",
            ["raised on", "RuntimeError: planner exploded", "scripted_planners.py:"],
        ),
        ("not_actions", ["expected an iterable of actions", "int"]),
        ("strings", ["expected int actions, got str 'left'"]),
    ],
)
def test_a_bad_planner_is_one_line_quoting_its_own_error(rooms, planners, function, words):
    with pytest.raises(DemonstrationError) as info:
        _collect(rooms, f"scripted_planners:{function}", per_task=1)
    message = str(info.value)
    assert "\n" not in message
    for word in words:
        assert word in message


@pytest.mark.parametrize(
    ("function", "words"),
    [
        ("no_such_module_xyz:plan", "cannot import module 'no_such_module_xyz'"),
        ("opt_suite.demonstrations.minigrid_planner:nothing", "has no attribute 'nothing'"),
        ("opt_suite.demonstrations.minigrid_planner:LEFT", "is a int, not a function"),
        ("just_a_name", "expected 'module:function'"),
    ],
)
def test_validate_locates_a_function_that_does_not_resolve(tmp_path, capsys, function, words):
    path = tmp_path / "spec.yaml"
    path.write_text(
        textwrap.dedent(
            f"""\
            name: scripted-check
            family: {{name: gymnasium, params: {{id: MiniGrid-Empty-Random-6x6-v0}}}}
            tasks: {{count: 3, train: 2, test: 1, seed: 0}}
            demonstrations:
              source: scripted
              params: {{function: "{function}"}}
            methods:
              - {{name: learned, method: offline_options}}
            evaluation: {{learner: tf_agents, episodes: 10, seeds: 1}}
            """
        )
    )
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    at = where(path.read_text(), f'"{function}"')
    assert f"{path}:{at}: demonstrations.params.function: " in err and words in err
    assert "Traceback" not in err


def test_a_key_already_carried_is_not_fetched_again():
    """Random start actions can pick DoorKey's key up: the plan then goes to the door directly."""
    import gymnasium as gym

    from opt_suite.demonstrations.minigrid_planner import PICKUP, shortest_path

    env = gym.make("MiniGrid-DoorKey-5x5-v0").unwrapped
    env.reset(seed=0)
    (key_cell,) = [(x, y) for x in range(env.grid.width) for y in range(env.grid.height)
                   if (c := env.grid.get(x, y)) is not None and c.type == "key"]  # fmt: skip
    env.carrying = env.grid.get(*key_cell)  # as a pickup would: carried, gone from the grid
    env.grid.set(*key_cell, None)
    plan = shortest_path(env)
    assert PICKUP not in plan
    reward = 0.0
    for action in plan:
        _, reward, terminated, _, _ = env.step(action)
    assert terminated and reward > 0  # the door opens with the carried key; the goal is reached


def test_validate_refuses_the_default_planner_on_an_env_that_is_not_minigrid(tmp_path, capsys):
    # It plans MiniGrid's grid: on FrozenLake every demonstrations cell would fail.
    path = tmp_path / "spec.yaml"
    path.write_text(
        textwrap.dedent(
            """\
            name: scripted-lake
            family: {name: gymnasium, params: {id: FrozenLake-v1}}
            tasks: {count: 3, train: 2, test: 1, seed: 0}
            demonstrations: {source: scripted}
            methods: [{name: learned, method: offline_options}]
            evaluation: {learner: tf_agents, episodes: 10, seeds: 1}
            """
        )
    )
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert (
        "demonstrations.params.function: the default "
        "opt_suite.demonstrations.minigrid_planner:shortest_path plans on MiniGrid envs (grid, "
        "agent_pos, agent_dir); got FrozenLakeEnv from gymnasium-frozenlake-v1; name a planner "
        "of your own for it"
    ) in err
