"""The ``tf_agents`` test-time learner: PPO over primitives + options, curves with frames."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from opt_suite.agents.acting import NumpyCollectPolicy
from opt_suite.agents.params import NetworkParams, PPOParams
from opt_suite.families.tabular.chain import Chain
from opt_suite.learners.agent_learner import TFAgentsLearner
from opt_suite.learners.base import LearnerContext, LearnerRun
from opt_suite.methods.base import TabularOptionSet
from opt_suite.registry import LEARNERS, load
from opt_suite.testing import LearnerContract, LearnerSetting


def tiny(units: int = 16) -> TFAgentsLearner.Params:
    network = NetworkParams(fc_units=(units,))
    ppo = PPOParams(num_envs=2, steps_per_iteration=8, learning_rate=1e-3, network=network)
    return TFAgentsLearner.Params(ppo=ppo)


TINY = tiny()


@pytest.fixture(scope="module")
def chain():
    family = Chain(Chain.Params(num_states=6))
    _, test = family.make_tasks(family.Variation(), [], 3, 1, 2, 0)
    model = family.tabular_model(test[0])
    options = TabularOptionSet(
        np.tile(np.eye(model.num_actions)[None, None, 1], (1, model.num_states, 1)),  # "right"
        np.full((1, model.num_states), 0.5),
    )
    return family, test, options


def _run(chain, seed, options=None, episodes=4):
    family, test, default = chain
    learner = TFAgentsLearner(TINY)
    runs = [LearnerRun(test[0], np.random.SeedSequence(seed))]
    return learner.run(
        LearnerContext(family, runs, default if options is None else options, episodes, 20)
    )[0]


def test_registered_as_tf_agents():
    assert load(LEARNERS, "tf_agents") is TFAgentsLearner


def test_logs_episodes_with_cumulative_frames_and_is_deterministic(chain):
    log = _run(chain, 1)
    assert log.returns.shape == log.steps.shape == log.frames.shape == (4,)
    assert np.all(log.steps >= 1) and np.all(log.steps <= 20)
    # cumulative: episodes that end in the same tick share its frames (its sub-envs step together)
    assert np.all(np.diff(log.frames) >= 0) and log.frames[-1] > log.frames[0]
    # two sub-envs share the run's frames: the total is at least this run's own steps
    assert log.frames[-1] >= log.steps.sum()
    again = _run(chain, 1)
    np.testing.assert_array_equal(log.returns, again.returns)
    np.testing.assert_array_equal(log.frames, again.frames)
    other = _run(chain, 2)
    assert not np.array_equal(log.frames, other.frames)


def test_runs_over_primitives_alone(chain):
    family, _, options = chain
    empty = TabularOptionSet.empty(options.mu.shape[1], options.mu.shape[2])
    log = _run(chain, 1, options=empty, episodes=3)
    assert log.returns.shape == (3,)


def test_bad_budgets_are_refused(chain):
    family, test, options = chain
    with pytest.raises(ValueError, match="episodes >= 1"):
        TFAgentsLearner(TINY).run(LearnerContext(family, [], options, 0, 10))


def test_options_outside_their_initiation_sets_are_masked_in_the_policy(chain):
    """An option that may start only in state 0 gets probability 0 elsewhere, 1 - ... there."""
    from opt_suite.learners import ppo_parts
    from opt_suite.learners.initiation_mask import action_mask
    from opt_suite.options.tabular import TabularOptionSet as Tabular

    family, test, options = chain
    A, S = options.mu.shape[2], options.mu.shape[1]
    initiation = np.zeros(options.beta.shape, dtype=bool)
    initiation[:, 0] = True
    masked = Tabular(options.mu, options.beta, options.names, initiation)
    mask = action_mask(masked, A, family.observation_space)
    np.testing.assert_array_equal(mask(np.arange(S)).numpy()[:, A], initiation[0])
    for shared in (False, True):
        ppo = TINY.ppo
        ppo = dataclasses.replace(ppo, network=dataclasses.replace(ppo.network, shared=shared))
        envs = [family.make_env(test[0]) for _ in range(2)]
        env = ppo_parts.option_env(envs, masked, 0.99, 0.05, np.random.SeedSequence(0).spawn(2))
        try:
            agent = ppo_parts.ppo_agent(env, ppo, 0, mask)
            step = env.reset()
            observations = np.arange(S).astype(step.observation.dtype)
            batch = step._replace(
                observation=observations,
                step_type=np.zeros(S, step.step_type.dtype),
                reward=np.zeros(S, step.reward.dtype),
                discount=np.ones(S, step.discount.dtype),
            )
            probs = agent.collect_policy.distribution(batch).action.probs_parameter().numpy()
            # the NumPy policy that acts in runs: the same mask, never the option outside its set
            acting = NumpyCollectPolicy(agent, 0)
            many = batch._replace(observation=np.repeat(observations, 200))
            actions, _ = acting.act(many)
            assert not np.any(actions[np.repeat(np.arange(S), 200) > 0] == A)
            assert np.any(actions[:200] == A)  # where it may start, it is chosen sometimes
        finally:
            env.close()
        assert np.all(probs[1:, A] == 0.0), (shared, probs)  # outside the set: never chosen
        assert probs[0, A] > 0.0  # inside it: a choice like any other
        np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-5)
    # and a whole run with the set goes through (no refusal)
    log = _run(chain, 3, options=masked, episodes=3)
    assert log.steps.shape == (3,)


def test_each_row_is_evaluated_by_its_own_option():
    from atari_frames import BreakoutFamily

    from opt_suite.learners.ppo_parts import option_probabilities
    from opt_suite.option_networks.initial import initial_frame_options

    options = initial_frame_options(BreakoutFamily(), "t", 3, np.random.SeedSequence(4))
    count, rows_of = option_probabilities(options)
    frames = np.random.default_rng(0).integers(0, 256, (5, 84, 84, 2), dtype=np.uint8)
    which = np.array([2, 0, 2, 2, 0])  # option 1 runs nowhere: skipped
    mu, beta = rows_of(frames, which)
    all_mu, all_beta = options.probabilities(frames)
    assert count == 3
    np.testing.assert_allclose(mu, all_mu[np.arange(5), which], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(beta, all_beta[np.arange(5), which], rtol=1e-5, atol=1e-7)
    # the TensorFlow path (kept for a TensorFlow without tf.lite) gives the same rows
    _, tf_rows_of = option_probabilities(options, lite=False)
    tf_mu, tf_beta = tf_rows_of(frames.astype(np.float32), which)
    np.testing.assert_allclose(mu, tf_mu, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(beta, tf_beta, rtol=1e-5, atol=1e-7)


def test_lite_options_are_built_without_cpp_chatter_on_stderr():
    # TFLite prints "INFO: Created TensorFlow Lite XNNPACK delegate for CPU." to fd 2 from C++ the
    # first time a process builds an interpreter: a fresh process, so that it is the first.
    code = (
        "import sys, numpy as np; sys.path.insert(0, 'tests')\n"
        "from atari_frames import BreakoutFamily\n"
        "from opt_suite.learners.lite_options import lite_probabilities\n"
        "from opt_suite.option_networks.initial import initial_frame_options\n"
        "o = initial_frame_options(BreakoutFamily(), 't', 2, np.random.SeedSequence(0))\n"
        "assert lite_probabilities(o.networks, (84, 84, 2), 4) is not None\n"
        "print('built')\n"
    )
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root)
    assert done.returncode == 0 and done.stdout.strip() == "built", done.stderr
    assert "XNNPACK" not in done.stderr


def test_lite_options_refuse_an_interpreter_that_disagrees_with_its_network(monkeypatch):
    from atari_frames import BreakoutFamily

    from opt_suite.learners import lite_options
    from opt_suite.option_networks.initial import initial_frame_options

    options = initial_frame_options(BreakoutFamily(), "t", 1, np.random.SeedSequence(4))
    [network] = options.networks
    rows_of = lite_options.lite_probabilities(options.networks, (84, 84, 2), 4)
    assert rows_of is not None  # TensorFlow 2.21 ships tf.lite
    # change the network after conversion: the next build's probe sees different numbers
    real = lite_options._interpreter

    def stale(net, shape):
        built = real(net, shape)
        weights = net.get_weights()
        net.set_weights([w + 0.5 for w in weights])
        return built

    monkeypatch.setattr(lite_options, "_interpreter", stale)
    with pytest.raises(RuntimeError, match="differs from its network"):
        lite_options.lite_probabilities([network], (84, 84, 2), 4)


def test_lite_models_are_kept_per_network_and_weights(monkeypatch):
    """A network converted once is not converted again (a cell's zero-shot after its run) ...

    ... unless its weights changed; the kept model is the bytes a new conversion gives, so its
    interpreter acts exactly as a new one would.
    """
    from opt_suite.learners import lite_options
    from opt_suite.option_networks.initial import initial_vector_options

    options = initial_vector_options(4, 2, (32, 32), 2, np.random.SeedSequence(5))
    conversions = []
    real = lite_options._converted

    def counted(network, shape):
        conversions.append(network)
        return real(network, shape)

    monkeypatch.setattr(lite_options, "_converted", counted)
    frames = np.random.default_rng(0).normal(size=(6, 4)).astype(np.float32)
    which = np.array([0, 1, 1, 0, 1, 0])
    first = lite_options.lite_probabilities(options.networks, (4,), 2)
    again = lite_options.lite_probabilities(options.networks, (4,), 2)
    assert first is not None and again is not None
    assert len(conversions) == 2  # one per network, none for the second build
    for found, expected in zip(again(frames, which), first(frames, which), strict=True):
        assert np.array_equal(found, expected)  # bit for bit
    [network, _] = options.networks
    assert lite_options._KEPT_MODELS[network][1] == real(network, (4,))  # a new conversion's bytes
    network.set_weights([w + 0.5 for w in network.get_weights()])  # e.g. trained since
    changed = lite_options.lite_probabilities(options.networks, (4,), 2)
    assert changed is not None and len(conversions) == 3  # that network alone, again
    mu, _ = changed(frames, which)
    want, _ = (np.asarray(t) for t in network(frames[which == 0], training=False))
    np.testing.assert_allclose(mu[which == 0], want, rtol=1e-5, atol=1e-7)


# -- the shipped LearnerContract, on Atari frames ------------------------------------------------


def atari_learner_setting() -> LearnerSetting:
    """Breakout (the Atari family, image observations): 1 test task, 1 untrained conv option.

    One option: each run converts every option network for TensorFlow Lite (about 2 s each on 84x84
    frames) and the contract learns nine times; two options, each row run by its own, are checked
    by ``test_each_row_is_evaluated_by_its_own_option`` and the PixelGrid contract.
    """
    from opt_suite.families.atari.family import Atari
    from opt_suite.option_networks.initial import initial_frame_options
    from opt_suite.options.network import NetworkOptionSet

    family = Atari(Atari.Params(game="breakout", max_episode_frames=2000))
    _, test = family.make_tasks(family.Variation(), (), count=2, train=1, test=1, seed=0)
    options = initial_frame_options(family, test[0], 1, np.random.SeedSequence(0))
    actions, shape = int(family.action_space.n), family.observation_space.shape
    return LearnerSetting(family, tuple(test), options, NetworkOptionSet.empty(actions, shape))


@pytest.mark.slow
class TestTFAgentsLearnerContract(LearnerContract):
    """PPO over primitives + a conv option on Breakout frames, at the smallest budgets that run.

    Batching: a batch of runs is learned one run after the other, each from its own seed (its
    TensorFlow seed, its envs' reset seeds, its options' draws), so a run's numbers do not depend
    on the batch it is in; the vector env inside one run (``ppo.num_envs`` copies of its task) is
    part of that run, not of the batch.
    """

    learner_class = TFAgentsLearner
    params = TFAgentsLearner.Params(
        ppo=PPOParams(
            num_envs=2,
            steps_per_iteration=4,
            epochs=1,
            network=NetworkParams(
                conv_filters=(4,), conv_kernels=(8,), conv_strides=(4,), fc_units=(8,)
            ),
        )
    )
    episodes = 2
    max_steps = 8

    def setting(self) -> LearnerSetting:
        return atari_learner_setting()


def test_option_usage_is_counted_without_changing_a_number(chain):
    # Counting is passive: run_with_usage logs what run logs, and each episode's counts add up.
    family, test, options = chain
    runs = [LearnerRun(test[0], np.random.SeedSequence(1))]
    [(log, usage)] = TFAgentsLearner(TINY).run_with_usage(
        LearnerContext(family, runs, options, 4, 20)
    )
    plain = _run(chain, 1)
    np.testing.assert_array_equal(log.returns, plain.returns)
    np.testing.assert_array_equal(log.frames, plain.frames)
    assert TFAgentsLearner.counts_usage and usage.num_primitives == 2
    assert usage.names == ("a0", "a1", *options.names)
    assert usage.calls.shape == usage.steps.shape == (4, 3)
    np.testing.assert_array_equal(usage.steps.sum(axis=1), log.steps)
    np.testing.assert_array_equal(usage.frames, usage.steps)  # chains use one frame a step
    # A primitive is one step per decision; an option at least one step per call.
    np.testing.assert_array_equal(usage.steps[:, :2], usage.calls[:, :2])
    assert np.all(usage.steps[:, 2] >= usage.calls[:, 2])
    # Within a frame budget: the counts of exactly the episodes that ended within it.
    [(framed, framed_usage)] = TFAgentsLearner(TINY).run_with_usage(
        LearnerContext(family, runs, options, 1, 20, frames=60)
    )
    assert framed_usage.calls.shape == (len(framed.steps), 3)
    np.testing.assert_array_equal(framed_usage.steps.sum(axis=1), framed.steps)
