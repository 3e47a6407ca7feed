"""A cut episode that succeeded: the family's ``solved_when_cut``, asked by demonstration sources.

CartPole's episodes end by the pole falling or by its own step cap: the cap is the success, so a
demonstration cut there is complete. On goal tasks a cut episode never is.
"""

from __future__ import annotations

import dataclasses
import sys

import numpy as np
import pytest
from installed_plugin import install_module

from opt_suite.demonstrations.agent_sampling import sample_demonstration
from opt_suite.demonstrations.base import DemonstrationError, SourceContext
from opt_suite.demonstrations.scripted import ScriptedExpert, ScriptedParams
from opt_suite.families.base import Task
from opt_suite.families.gymnasium.family import Gymnasium, Params
from opt_suite.families.tabular.fourrooms import FourRooms

CAP = 60  # frames per episode: a balancing controller reaches it


def _cartpole(**params):
    return Gymnasium(Params(id="CartPole-v1", max_episode_steps=CAP, **params))


def _task(family, reward_scale=1.0):
    params = family.default_task()
    if reward_scale != 1.0:
        params = dataclasses.replace(params, reward_scale=reward_scale)
    return Task(f"{family.instance_name}/train/0", "train", 0, params)


def balance(env):
    """A closed-loop controller: push the cart towards where the pole is falling."""
    while True:
        _, _, angle, angular_velocity = env.state
        yield int(angle + 0.5 * angular_velocity > 0)


class _BalancingExpert:
    """Stands in for a trained PPO expert: the same controller, as action probabilities."""

    def action_probabilities(self, observations):
        push_right = observations[:, 2] + 0.5 * observations[:, 3] > 0
        return np.stack([~push_right, push_right], axis=1).astype(np.float64)


def test_the_success_return_is_the_spec_s_else_gymnasium_s_registered_reward_threshold():
    assert _cartpole().success_return == 475.0  # CartPole-v1's reward_threshold
    assert _cartpole(success_return=50.0).success_return == 50.0
    assert Gymnasium(Params(id="MiniGrid-Empty-5x5-v0")).success_return is None


def test_a_cut_episode_succeeded_when_its_return_reached_the_threshold_times_the_scale():
    family = _cartpole(success_return=50.0)
    assert family.solved_when_cut(_task(family), 50.0)
    assert not family.solved_when_cut(_task(family), 49.0)
    assert not family.solved_when_cut(_task(family, reward_scale=2.0), 99.0)
    assert family.solved_when_cut(_task(family, reward_scale=2.0), 100.0)
    goal = Gymnasium(Params(id="MiniGrid-Empty-5x5-v0"))
    assert not goal.solved_when_cut(_task(goal), 1e9)  # no threshold: a cut is a cut
    rooms = FourRooms(FourRooms.Params())
    assert not rooms.solved_when_cut(_task(rooms), 1e9)  # the default: goal tasks


def test_a_ppo_demonstration_balanced_to_the_cap_is_complete_only_when_that_succeeds():
    for success, cut in ((50.0, False), (None, True)):
        family = _cartpole(success_return=success)
        trajectory, was_cut = sample_demonstration(
            family, _task(family), _BalancingExpert(), np.random.default_rng(0), max_steps=500
        )
        assert len(trajectory) == CAP  # the cap cut it, the pole still up
        assert was_cut is cut


BALANCE_PLUGIN = '''
def balance(env):
    """A closed-loop controller: push the cart towards where the pole is falling."""
    while True:
        _, _, angle, angular_velocity = env.state
        yield int(angle + 0.5 * angular_velocity > 0)
'''


@pytest.fixture(scope="module", autouse=True)
def balance_plugin(tmp_path_factory):
    """``balance`` as an installed plugin distribution: a spec may name only installed code."""
    site = install_module(
        tmp_path_factory.mktemp("plugin") / "site-packages", "balance_planner", BALANCE_PLUGIN
    )
    sys.path.insert(0, str(site))
    yield
    sys.path.remove(str(site))
    sys.modules.pop("balance_planner", None)


def _scripted(family, per_task=2):
    source = ScriptedExpert(
        ScriptedParams(function="balance_planner:balance", min_per_task=per_task)
    )
    return source.collect(
        SourceContext(family, [_task(family)], per_task, 500, np.random.SeedSequence(0))
    )


def test_a_scripted_demonstration_balanced_to_the_cap_is_kept_when_that_succeeds():
    demos = _scripted(_cartpole(success_return=50.0))
    assert len(demos) == 2 and all(len(d) == CAP for d in demos)
    with pytest.raises(DemonstrationError) as info:  # CartPole's own 475 is out of reach at 60
        _scripted(_cartpole())
    message = str(info.value)
    assert "0 of 2 scripted demonstrations" in message
    assert "a cut episode succeeds at a return of 475 x the task's reward scale" in message
    assert "family.params.success_return" in message
