"""The ``q_learning`` expert without a model: Q-learning on FrozenLake's env, to the goal."""

from __future__ import annotations

import numpy as np
import pytest

from opt_suite.demonstrations.base import SourceContext
from opt_suite.demonstrations.tabular import ExpertError, QLearningExpert, QLearningParams
from opt_suite.families.base import Task
from opt_suite.families.gymnasium.family import Gymnasium, Params
from opt_suite.params import FrozenDict

FAST = QLearningParams(epsilon=0.5, check_every=50)


def _collect(slippery, params=FAST, max_steps=100):
    family = Gymnasium(Params(id="FrozenLake-v1", kwargs=FrozenDict(is_slippery=slippery)))
    tasks = [Task(f"{family.instance_name}/train/{i}", "train", i, family.default_task())
             for i in range(2)]  # fmt: skip
    source = QLearningExpert(params)
    return source.collect(SourceContext(family, tasks, 3, max_steps, np.random.SeedSequence(0)))


@pytest.mark.parametrize("slippery", [False, True])
def test_every_demonstration_reaches_the_goal_and_is_seeded(slippery, capsys):
    demos = _collect(slippery)
    assert len(demos) == 6
    for demo in demos:
        assert demo.observations[-1] == 15 and demo.rewards.sum() == 1.0  # FrozenLake's goal
        assert demo.observations.dtype == np.int64 and len(demo.actions) == len(demo) >= 6
    again = _collect(slippery)
    for a, b in zip(demos, again, strict=True):
        np.testing.assert_array_equal(a.actions, b.actions)
    if slippery:  # the ice drops some greedy episodes into holes: dropped, said aloud
        assert "warning: demonstrations: dropped a greedy episode" in capsys.readouterr().err


def test_an_expert_that_finds_nothing_is_an_error_saying_how_far_it_got():
    lazy = QLearningParams(epsilon=0.0, max_episodes=20, check_every=10)
    with pytest.raises(ExpertError, match=r"no model: Q-learning on the env\): after "
                       r"demonstrations.params.max_episodes=20 episodes"):  # fmt: skip
        _collect(False, lazy)


DEFAULTS_SPEC = """
name: frozenlake-defaults
family:
  name: gymnasium
  params: {id: FrozenLake-v1, kwargs: {is_slippery: false}, max_episode_steps: 100}
tasks: {count: 4, train: 3, test: 1, vary: {start_actions: [0, 3], frame_skip: [1, 2]}}
demonstrations: {source: q_learning, trajectories_per_task: 4, max_steps: 100}
methods: [{name: primitives, method: primitives}]
evaluation: {learner: smdp_q_learning, episodes: 10, max_steps: 100}
"""


def test_a_frozenlake_spec_at_the_q_learning_defaults_demonstrates_the_goal():
    # The deterministic 4x4 map at every default of the expert (epsilon 0.2, 20,000 episodes):
    # ties broken to the first best action never found the goal; random ties must.
    from opt_suite.runner.protocol import resolve_components
    from opt_suite.runner.task_draws import draw_tasks
    from opt_suite.spec import parse_spec

    spec = parse_spec(DEFAULTS_SPEC)
    assert spec.demonstrations.params == QLearningParams()
    components = resolve_components(spec)
    family = components.family(spec.family.params)
    train = draw_tasks(family, spec.tasks).train
    source = components.demonstrations(spec.demonstrations.params)
    context = SourceContext(family, train, 4, 100, np.random.SeedSequence(0))
    demos = source.collect(context)
    assert len(demos) == 12
    for demo in demos:
        assert demo.observations[-1] == 15 and demo.rewards.sum() > 0  # the goal, and it paid


@pytest.mark.parametrize(
    ("env_id", "kwargs", "end", "steps"),
    [("FrozenLake-v1", {"is_slippery": False, "map_name": "8x8"}, 63, 14),
     ("CliffWalking-v1", {}, 47, 13)],
)  # fmt: skip
def test_other_small_index_envs_at_the_defaults_are_solved(env_id, kwargs, end, steps):
    family = Gymnasium(Params(id=env_id, kwargs=FrozenDict(kwargs), max_episode_steps=200))
    tasks = [Task(f"{family.instance_name}/train/0", "train", 0, family.default_task())]
    context = SourceContext(family, tasks, 2, 200, np.random.SeedSequence(0))
    for demo in QLearningExpert(QLearningParams()).collect(context):
        assert demo.observations[-1] == end and len(demo.actions) == steps  # a shortest path
