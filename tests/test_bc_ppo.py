"""bc_ppo: no options, the tf_agents PPO policy behaviour-cloned on the demonstrations first."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from baselines.bc_ppo import BCPPO, BCPPOParams
from opt_suite.agents.params import NetworkParams, PPOParams
from opt_suite.learners.agent_learner import TFAgentsLearner
from opt_suite.learners.base import LearnerContext, LearnerRun
from opt_suite.options import from_bytes, to_bytes
from opt_suite.options.network import NetworkOptionSet
from opt_suite.options.policy_start import PolicyStart
from opt_suite.spec import SpecError, parse_spec
from opt_suite.testing import MethodContract, context_for, image_method_setting

TINY = TFAgentsLearner.Params(
    ppo=PPOParams(
        num_envs=2, steps_per_iteration=8, learning_rate=1e-3, network=NetworkParams(fc_units=(16,))
    )
)
CLONING = BCPPOParams(steps=40, batch_size=32, learning_rate=3e-3)


class TestBCPPOContract(MethodContract):
    method_class = BCPPO
    params = BCPPOParams(steps=1)

    def setting(self):
        return image_method_setting()


@pytest.fixture(scope="module")
def start():
    found = BCPPO(CLONING).discover(context_for(image_method_setting(), 0, 0))
    return found.options


def test_the_start_holds_every_demonstrated_pair_and_survives_its_file(start):
    demos = image_method_setting().demonstrations
    assert isinstance(start, PolicyStart) and len(start) == 0
    assert len(start.actions) == sum(len(h) for h in demos)
    np.testing.assert_array_equal(start.observations[0], demos[0].observations[0])
    again = from_bytes(to_bytes(start))
    np.testing.assert_array_equal(again.observations, start.observations)
    np.testing.assert_array_equal(again.actions, start.actions)
    assert (again.steps, again.batch_size, again.learning_rate) == (40, 32, 3e-3)


def test_the_agent_starts_from_the_cloned_policy(start):
    """Builds two PPO agents and clones one for 40 steps: ~10 s alone, with TF's import ~25 s."""
    # The same seed builds the same initial actor; cloning must make it imitate the demonstrators.
    from opt_suite.agents.ppo import policy_logits

    setting = image_method_setting()
    family, task = setting.family, setting.train_tasks[0]
    learner = TFAgentsLearner(TINY)
    run = LearnerRun(task, np.random.SeedSequence(1))
    empty = NetworkOptionSet.empty(4, start.observation_shape)
    accuracy = {}
    for name, options in (("fresh", empty), ("cloned", start)):
        env, agent, *_ = learner._agent_on(family, run, options, 50)
        env.close()
        logits = policy_logits(agent.actor_net)(start.observations)
        accuracy[name] = float(np.mean(np.argmax(logits, axis=1) == start.actions))
    assert accuracy["cloned"] > 0.9 and accuracy["cloned"] > accuracy["fresh"] + 0.3, accuracy


def test_its_zero_shot_return_is_the_cloned_policys(start):
    setting = image_method_setting()
    run = LearnerRun(setting.train_tasks[0], np.random.SeedSequence(2))
    learner = TFAgentsLearner(TINY)
    (zero_shot,) = learner.zero_shot(LearnerContext(setting.family, [run], start, 2, 30))
    assert zero_shot.shape == (2,) and np.all(np.isfinite(zero_shot))
    # On its own train task the cloned policy walks to the goal (reward 1) without any update.
    assert zero_shot.mean() > 0


def test_a_second_cloning_in_a_worker_reuses_its_step_and_clones_as_the_first(start):
    # The worker's kept agent (opt_suite.agents.agent_cache) is reset and cloned again with the
    # step compiled for the first cloning, its Adam new again: the first run's actor, no trace.
    from opt_suite.agents import agent_cache

    setting = image_method_setting()
    learner = TFAgentsLearner(TINY)
    run = LearnerRun(setting.train_tasks[0], np.random.SeedSequence(1))
    agent_cache.clear()
    weights, traces = [], []
    for _ in range(2):
        env, agent, *_ = learner._agent_on(setting.family, run, start, 50)
        env.close()
        weights.append(agent.actor_net.get_weights())
        [(_, step)] = agent.actor_net.__dict__["_opt_suite_cloning_steps"].values()
        traces.append(step.experimental_get_tracing_count())
    assert traces[0] == traces[1] >= 1
    assert all(np.array_equal(a, b) for a, b in zip(*weights, strict=True))
    agent_cache.clear()


SPEC = """\
name: bc
family: {name: chain, params: {num_states: 5}}
tasks: {count: 3, train: 2, test: 1}
methods:
  - {name: primitives, method: primitives}
  - {name: bc, method: bc_ppo}
evaluation: {learner: smdp_q_learning, episodes: 10, max_steps: 20}
"""


def test_a_learner_without_a_policy_to_initialise_is_a_located_error():
    with pytest.raises(SpecError) as err:
        parse_spec(SPEC)
    text = str(err.value)
    assert "methods[1].method: bc_ppo starts the learner's policy from behaviour cloning" in text
    assert "smdp_q_learning has no policy to initialise" in text
    parse_spec(SPEC.replace("smdp_q_learning", "tf_agents"))  # a learner with one: fine


def test_the_runner_refuses_it_too(start):
    from opt_suite.learners.smdp_q import SMDPQLearning
    from opt_suite.runner.cells import EvaluationJob, execute

    setting = image_method_setting()
    job = EvaluationJob(
        "cell", "evaluation of 'bc'", type(setting.family), setting.family.params,
        task=setting.train_tasks[0], seed=np.random.SeedSequence(0), learner_cls=SMDPQLearning,
        learner_params=SMDPQLearning.Params(), options=to_bytes(start), episodes=2, max_steps=5,
    )  # fmt: skip
    outcome = execute(job)
    assert outcome.error and "has no policy to initialise" in outcome.error


def test_describe_says_which_learners_have_a_policy_to_initialise(capsys):
    from opt_suite.cli import main

    assert main(["describe", "bc_ppo"]) == 0
    out = capsys.readouterr().out
    assert "learners with a policy to initialise: tf_agents" in out
    assert "control of   offline_options" in out
    assert "refused by validate with intra_option_q_learning, smdp_q_learning" in out
    assert main(["describe", "smdp_q_learning"]) == 0
    assert "none: no policy to initialise" in capsys.readouterr().out


def test_the_start_holds_out_whole_demonstrations_as_bc_option_draws_them(start):
    from opt_suite.methods.offline_options.control import held_out_indices

    setting = image_method_setting()
    context = context_for(setting, 0, 0)
    demos = setting.demonstrations
    held = held_out_indices(len(demos), BCPPOParams().held_out, context.seed)
    assert held, "the setting has demonstrations to hold out"
    expected = np.concatenate([np.full(len(h), i in held) for i, h in enumerate(demos)])
    np.testing.assert_array_equal(start.held_out, expected)
    np.testing.assert_array_equal(from_bytes(to_bytes(start)).held_out, start.held_out)
    none = BCPPO(dataclasses.replace(CLONING, held_out=0.0)).discover(context).options
    assert none.held_out is None
    assert from_bytes(to_bytes(none)).held_out is None


def test_a_learning_run_reports_the_fit_and_returns_as_without_it(start):
    """Two tiny PPO runs on the cloned policy: one with the held-out clone, one without."""
    setting = image_method_setting()
    run = LearnerRun(setting.train_tasks[0], np.random.SeedSequence(3))
    learner = TFAgentsLearner(TINY)
    logs = {}
    unmasked = PolicyStart(
        start.observations, start.actions, 4, start.steps, start.batch_size, start.learning_rate
    )
    for name, options in (("held out", start), ("in sample only", unmasked)):
        [logs[name]] = learner.run(LearnerContext(setting.family, [run], options, 3, 30))
    accuracy, log_likelihood, held_accuracy, held_log_likelihood = logs["held out"].cloning_fit
    assert 0 <= accuracy <= 1 and log_likelihood <= 0 and accuracy > 0.5
    assert held_accuracy is not None and 0 <= held_accuracy <= 1
    assert held_log_likelihood is not None and held_log_likelihood <= 0
    assert logs["in sample only"].cloning_fit == (accuracy, log_likelihood, None, None)
    # The second clone is undone: the learning run is the one without it, bit for bit.
    for field in ("returns", "steps", "frames"):
        a, b = getattr(logs["held out"], field), getattr(logs["in sample only"], field)
        assert np.array_equal(a, b), field


def test_measuring_the_fit_leaves_the_cloned_actor_as_it_was(start):
    setting = image_method_setting()
    learner = TFAgentsLearner(TINY)
    run = LearnerRun(setting.train_tasks[0], np.random.SeedSequence(1))
    weights, fits = [], []
    for measure in (False, True):
        env, agent, _, fit = learner._agent_on(setting.family, run, start, 50, measure_fit=measure)
        env.close()
        weights.append(agent.actor_net.get_weights())
        fits.append(fit)
    assert fits[0] is None and fits[1] is not None and fits[1][2] is not None
    assert all(np.array_equal(a, b) for a, b in zip(*weights, strict=True))


def test_an_evaluation_cell_stores_the_fit():
    from opt_suite.runner.cells import EvaluationJob, execute

    setting = image_method_setting()
    small = BCPPO(BCPPOParams(steps=5, batch_size=16)).discover(context_for(setting, 0, 0))
    job = EvaluationJob(
        "cell", "evaluation of 'bc'", type(setting.family), setting.family.params,
        task=setting.train_tasks[0], seed=np.random.SeedSequence(0), learner_cls=TFAgentsLearner,
        learner_params=TINY, options=to_bytes(small.options), episodes=2, max_steps=20,
    )  # fmt: skip
    outcome = execute(job)
    assert not outcome.error, outcome.error
    fit = outcome.record.cloning_fit
    assert fit is not None and 0 <= fit.accuracy <= 1 and fit.held_out_accuracy is not None
    from opt_suite.store.records import EvaluationRecord

    assert EvaluationRecord.from_info(outcome.record.info()).cloning_fit == fit
