"""The tabular learners without a model: they step the env, and equal the model engines exactly.

On four rooms with ``slip: 0`` the env is deterministic, so stepping it (``env_tabular``) and
sampling the model (the batch, scalar and compiled engines) must give the same returns, steps and
option usage bit for bit: the same uniforms, choices and float operations, only the outcome drawn
elsewhere. The hallway options bring initiation sets and stochastic option policies along.
"""

from __future__ import annotations

import numpy as np
import pytest

from opt_suite.families.base import Task
from opt_suite.families.gymnasium.family import Gymnasium
from opt_suite.families.gymnasium.family import Params as GymParams
from opt_suite.families.tabular.fourrooms import FourRooms, Params, Variation
from opt_suite.learners.base import LearnerContext, LearnerRun
from opt_suite.learners.intra_option_q import IntraOptionQLearning
from opt_suite.learners.smdp_q import SMDPQLearning, model_free
from opt_suite.options import TabularOptionSet
from opt_suite.params import FrozenDict
from opt_suite.testing import LearnerContract

EPISODES, MAX_STEPS = 8, 400


@pytest.fixture(scope="module")
def rooms():
    family = FourRooms(Params(layout="sutton-13x13", slip=0.0))
    _, test = family.make_tasks(Variation(), (), 3, 1, 2, seed=0)
    runs = [LearnerRun(t, np.random.SeedSequence(s)) for t in test for s in range(2)]
    return family, runs, family.reference_options(None)


@pytest.mark.parametrize(
    ("intra", "bump_in_target"),
    [(False, False), (True, False), (True, True)],
    ids=["smdp", "intra_option", "intra_option_bump_in_target"],
)
def test_stepping_the_env_equals_the_model_engines_bit_for_bit(rooms, intra, bump_in_target):
    family, runs, options = rooms
    params = IntraOptionQLearning.Params(epsilon=0.2, bump_in_target=bump_in_target)
    learner = IntraOptionQLearning(params) if intra else SMDPQLearning(params)
    with_model = learner.run(LearnerContext(family, runs, options, EPISODES, MAX_STEPS))
    stepped = model_free(
        learner.name, params, family, runs, options, EPISODES, MAX_STEPS, intra_option=intra
    )
    assert len(stepped) == len(with_model)
    for (log, _), reference in zip(stepped, with_model, strict=True):
        np.testing.assert_array_equal(log.steps, reference.steps)
        np.testing.assert_array_equal(log.returns, reference.returns)
    if not intra:  # the usage counts too (the scalar engine counts them)
        counted = SMDPQLearning(params).run_with_usage(
            LearnerContext(family, runs, options, EPISODES, MAX_STEPS)
        )
        for (_, usage), (_, reference) in zip(stepped, counted, strict=True):
            np.testing.assert_array_equal(usage.calls, reference.calls)
            np.testing.assert_array_equal(usage.steps, reference.steps)
    # the hallway options were used, so the comparison covers options, not primitives alone
    assert sum(u.calls[:, 4:].sum() for _, u in stepped) > 0


@pytest.fixture(scope="module")
def lake():
    family = Gymnasium(GymParams(id="FrozenLake-v1", kwargs=FrozenDict(is_slippery=False)))
    task = Task(f"{family.instance_name}/test/0", "test", 0, family.default_task())
    return family, [LearnerRun(task, np.random.SeedSequence(s)) for s in range(2)]


@pytest.mark.parametrize("learner_class", [SMDPQLearning, IntraOptionQLearning])
def test_frozenlake_without_a_model_learns_to_reach_the_goal(lake, learner_class):
    family, runs = lake
    learner = learner_class(learner_class.Params(alpha=0.5, epsilon=0.1, q_init=1.0))
    logs = learner.run(LearnerContext(family, runs, TabularOptionSet.empty(16, 4), 150, 100))
    again = learner.run(LearnerContext(family, runs, TabularOptionSet.empty(16, 4), 150, 100))
    for log, same in zip(logs, again, strict=True):
        np.testing.assert_array_equal(log.steps, same.steps)  # seeded: the env and the learner
        assert np.all(np.isfinite(log.returns))
        assert log.returns[-20:].mean() > 0.5  # the optimistic agent finds the goal (reward 1)


def test_frozenlake_usage_rows_sum_to_the_episode_steps(lake):
    family, runs = lake
    rng = np.random.default_rng(0)
    options = TabularOptionSet(rng.dirichlet(np.ones(4), (2, 16)), rng.random((2, 16)))
    pairs = SMDPQLearning(SMDPQLearning.Params()).run_with_usage(
        LearnerContext(family, runs, options, 10, 50)
    )
    for log, usage in pairs:
        np.testing.assert_array_equal(usage.steps.sum(axis=1), log.steps)
        assert usage.names == ("a0", "a1", "a2", "a3", "option-0", "option-1")


def _lake_setting():
    from opt_suite.testing.learner import LearnerSetting

    family = Gymnasium(GymParams(id="FrozenLake-v1", max_episode_steps=100))
    tasks = tuple(
        Task(f"{family.instance_name}/test/{i}", "test", i, family.default_task()) for i in range(2)
    )
    rng = np.random.default_rng(0)
    options = TabularOptionSet(rng.dirichlet(np.ones(4), size=(2, 16)), rng.uniform(size=(2, 16)))
    return LearnerSetting(family, tasks, options, TabularOptionSet.empty(16, 4))


class TestModelFreeSMDPContract(LearnerContract):
    """The learner contract (seeded, batching-independent, well-formed logs) without a model."""

    learner_class = SMDPQLearning
    params = SMDPQLearning.Params()

    def setting(self):
        return _lake_setting()


class TestModelFreeIntraOptionContract(LearnerContract):
    learner_class = IntraOptionQLearning
    params = IntraOptionQLearning.Params()

    def setting(self):
        return _lake_setting()


@pytest.mark.parametrize(
    ("env_id", "kwargs", "reward_scale", "frame_cap"),
    [
        ("FrozenLake-v1", {"map_name": "8x8"}, 1.0, 40),  # slippery; the env's cut before ours
        ("FrozenLake-v1", {"map_name": "4x4"}, 2.5, 1000),
        ("CliffWalking-v1", {}, 0.5, 60),
    ],
)
def test_the_compiled_env_table_path_equals_stepping_the_env(
    env_id, kwargs, reward_scale, frame_cap, monkeypatch
):
    """An env stepped from its table in the compiled loop gives the plain loop's numbers exactly.

    The plain loop calls the env's step; the compiled one samples the same table with the env's
    own uniforms and hands the generator back before each reset. Options with stochastic mu and
    initiation sets, q_init != 0 and a reward scale exercise the rest of the loop.
    """
    import dataclasses

    from opt_suite.families.gymnasium.env import GymnasiumTaskEnv

    family = Gymnasium(GymParams(id=env_id, kwargs=FrozenDict(kwargs), max_episode_steps=frame_cap))
    params = dataclasses.replace(family.default_task(), reward_scale=reward_scale)
    task = Task(f"{family.instance_name}/test/0", "test", 0, params)
    runs = [LearnerRun(task, np.random.SeedSequence(s)) for s in range(3)]
    S = int(family.observation_space.n)
    rng = np.random.default_rng(5)
    options = TabularOptionSet(
        rng.dirichlet(np.ones(4), (2, S)),
        rng.uniform(0, 0.3, (2, S)),
        ("left-ish", "right-ish"),
        rng.random((2, S)) < 0.5,
    )
    assert family.make_env(task).table_source() is not None  # so the compiled path is taken
    learner = SMDPQLearning(SMDPQLearning.Params(alpha=0.3, epsilon=0.2, q_init=0.5))
    context = LearnerContext(family, runs, options, 25, 200)
    compiled = learner.run_with_usage(context)
    monkeypatch.setattr(GymnasiumTaskEnv, "table_source", lambda self: None)
    stepped = learner.run_with_usage(context)
    assert sum(int(log.steps.sum()) for log, _ in compiled) > 25 * 3 * 3
    for (log, usage), (ref_log, ref_usage) in zip(compiled, stepped, strict=True):
        np.testing.assert_array_equal(log.steps, ref_log.steps)
        np.testing.assert_array_equal(log.returns, ref_log.returns)
        np.testing.assert_array_equal(usage.calls, ref_usage.calls)
        np.testing.assert_array_equal(usage.steps, ref_usage.steps)
