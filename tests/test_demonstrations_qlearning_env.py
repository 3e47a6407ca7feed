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
