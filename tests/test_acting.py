"""PPO's NumPy acting: the actor's logits equal TensorFlow's, samples follow the softmax, and the
experience batch is the one ``agent.train`` takes."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from opt_suite._tf import tensorflow

tf = tensorflow()

from tf_agents.specs import tensor_spec  # noqa: E402
from tf_agents.trajectories import time_step as ts  # noqa: E402

from opt_suite.agents import acting, ppo  # noqa: E402
from opt_suite.agents.numpy_actor import NumpyActor, sample_categorical  # noqa: E402
from opt_suite.agents.params import NetworkParams, PPOParams  # noqa: E402

MINATAR = NetworkParams(conv_filters=(16,), conv_kernels=(3,), conv_strides=(1,), fc_units=(32,))

# (observation shape, dtype, network): Atari's frames and default network, MinAtar's, a [H, W]
# image (given a channel axis), a vector (an MLP).
CASES = {
    "atari": ((84, 84, 4), np.uint8, NetworkParams()),
    "minatar": ((10, 10, 4), np.uint8, MINATAR),
    "minatar-shared": ((10, 10, 4), np.uint8, dataclasses.replace(MINATAR, shared=True)),
    "hw-image": ((7, 7), np.uint8, NetworkParams(fc_units=(16, 8))),
    "vector": ((6,), np.float32, NetworkParams(fc_units=(32, 16))),
}


def _actor(shape, dtype, network, actions=5, seed=0):
    observation = tensor_spec.BoundedTensorSpec(shape, tf.as_dtype(dtype), 0, 255, "observation")
    action = tensor_spec.BoundedTensorSpec((), tf.int64, 0, actions - 1, "action")
    actor, _ = ppo.build_networks(observation, action, network, seed)
    return actor


def _observations(shape, dtype, n=9, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == np.uint8:
        return rng.integers(0, 256, size=(n, *shape), dtype=np.uint8)
    return rng.normal(size=(n, *shape)).astype(np.float32)


def _tf_logits(actor, observations):
    step_type = tf.zeros([len(observations)], tf.int32)
    distribution, _ = actor(tf.constant(observations), step_type=step_type, network_state=())
    return distribution.logits_parameter().numpy()


@pytest.mark.parametrize("case", CASES)
def test_numpy_logits_equal_the_tensorflow_actors(case):
    shape, dtype, network = CASES[case]
    actor = _actor(shape, dtype, network)
    observations = _observations(shape, dtype)
    mine = NumpyActor(actor, dtype, len(shape)).logits(observations)
    theirs = _tf_logits(actor, observations)
    assert mine.dtype == np.float32 and mine.shape == theirs.shape == (9, 5)
    np.testing.assert_allclose(mine, theirs, rtol=1e-4, atol=1e-5)
    assert np.ptp(theirs, axis=0).max() > 1e-3  # the rows differ: a real comparison


def test_the_numpy_actor_follows_the_weights_only_when_refreshed():
    shape, dtype, network = CASES["minatar"]
    actor = _actor(shape, dtype, network)
    observations = _observations(shape, dtype)
    mirror = NumpyActor(actor, dtype, len(shape))
    before = mirror.logits(observations)
    for variable in actor.trainable_variables:
        variable.assign(variable * 1.5 + 0.01)
    np.testing.assert_array_equal(mirror.logits(observations), before)
    mirror.refresh()
    np.testing.assert_allclose(
        mirror.logits(observations), _tf_logits(actor, observations), rtol=1e-4, atol=1e-5
    )
    assert not np.allclose(mirror.logits(observations), before)


def test_a_layer_it_does_not_mirror_is_refused():
    shape, dtype, network = CASES["minatar"]
    actor = _actor(shape, dtype, network)
    actor._encoder._postprocessing_layers.insert(0, tf.keras.layers.BatchNormalization())
    with pytest.raises(TypeError, match="BatchNormalization"):
        NumpyActor(actor, dtype, len(shape))


def test_samples_follow_the_softmax_and_the_seed():
    logits = np.array([[0.0, 1.0, 2.0, -1.0], [5.0, -5.0, 0.0, 0.0]], np.float32)
    draws = np.stack([sample_categorical(logits, np.random.default_rng(0)) for _ in range(1)])
    assert draws.shape == (1, 2)
    rng = np.random.default_rng(3)
    samples = np.stack([sample_categorical(logits, rng) for _ in range(40_000)])
    softmax = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    for row in range(2):
        frequencies = np.bincount(samples[:, row], minlength=4) / len(samples)
        np.testing.assert_allclose(frequencies, softmax[row], atol=0.01)
    a = [sample_categorical(logits, np.random.default_rng(7)) for _ in range(3)]
    b = [sample_categorical(logits, np.random.default_rng(7)) for _ in range(3)]
    np.testing.assert_array_equal(a, b)
    certain = np.array([[-1e30, 0.0, -1e30]], np.float32)  # tf-agents' mask value
    assert set(sample_categorical(np.repeat(certain, 500, 0), rng)) == {1}


def test_logits_that_are_not_finite_are_an_error_not_action_zero():
    logits = np.array([[0.0, 1.0], [np.nan, 0.0]], np.float32)
    with pytest.raises(FloatingPointError, match="1 of 4"):
        sample_categorical(logits, np.random.default_rng(0))
    with pytest.raises(FloatingPointError):
        sample_categorical(np.array([[np.inf, 0.0]], np.float32), np.random.default_rng(0))


def _batched_time_step(observations, step_type):
    n = len(observations)
    return ts.TimeStep(
        np.full(n, step_type, np.int32),
        np.ones(n, np.float32),
        np.ones(n, np.float32),
        observations,
    )


def test_the_experience_is_what_agent_train_takes_and_trains_on():
    shape = (10, 10, 4)
    observation = tensor_spec.BoundedTensorSpec(shape, tf.uint8, 0, 255, "observation")
    action = tensor_spec.BoundedTensorSpec((), tf.int64, 0, 2, "action")
    params = PPOParams(num_envs=3, steps_per_iteration=4, epochs=1, network=MINATAR)
    agent = ppo.build_agent(ts.time_step_spec(observation), action, params, seed=0)
    policy = acting.NumpyCollectPolicy(agent, seed=0)
    transitions = []
    for t in range(params.steps_per_iteration):
        time_step = _batched_time_step(_observations(shape, np.uint8, 3, t), ts.StepType.MID)
        actions, logits = policy.act(time_step)
        assert actions.dtype == np.int64 and set(actions) <= {0, 1, 2}
        following = _batched_time_step(_observations(shape, np.uint8, 3, t + 1), ts.StepType.MID)
        transitions.append(acting.Transition(time_step, actions, logits, following))
    batch = acting.experience(transitions)
    tf.nest.assert_same_structure(batch, agent.collect_data_spec)
    for tensor, spec in zip(
        tf.nest.flatten(batch), tf.nest.flatten(agent.collect_data_spec), strict=True
    ):
        assert tensor.dtype == spec.dtype
        assert tuple(tensor.shape) == (3, 4, *spec.shape)
    before = [v.numpy() for v in agent.actor_net.trainable_variables]
    loss = agent.train(batch).loss.numpy()
    assert np.isfinite(loss)
    after = agent.actor_net.trainable_variables
    assert any(not np.allclose(b, a.numpy()) for b, a in zip(before, after, strict=True))


def test_the_action_stream_is_the_agents_seed():
    shape, dtype, network = CASES["minatar"]
    observation = tensor_spec.BoundedTensorSpec(shape, tf.uint8, 0, 255, "observation")
    action = tensor_spec.BoundedTensorSpec((), tf.int64, 0, 4, "action")
    params = PPOParams(network=network)
    agent = ppo.build_agent(ts.time_step_spec(observation), action, params, seed=0)
    time_step = _batched_time_step(_observations(shape, dtype, 64), ts.StepType.MID)

    def actions(seed):
        return acting.NumpyCollectPolicy(agent, seed).act(time_step)[0]

    np.testing.assert_array_equal(actions(1), actions(1))
    assert not np.array_equal(actions(1), actions(2))


def test_nan_from_the_env_is_blamed_on_the_env_not_on_ppos_weights():
    """NaN rewards or observations used to surface as "PPO's weights diverged"."""
    shape = (6,)
    observation = tensor_spec.BoundedTensorSpec(shape, tf.float32, -10, 10, "observation")
    action = tensor_spec.BoundedTensorSpec((), tf.int64, 0, 2, "action")
    params = PPOParams(num_envs=2, network=NetworkParams(fc_units=(8,)))
    agent = ppo.build_agent(ts.time_step_spec(observation), action, params, seed=0)
    policy = acting.NumpyCollectPolicy(agent, seed=0)
    bad = _observations(shape, np.float32, 2)
    bad[1, 3] = np.nan
    with pytest.raises(FloatingPointError, match=r"the env gave non-finite observations \(1 of"):
        policy.act(_batched_time_step(bad, ts.StepType.MID))

    class NanRewards:
        def step(self, actions):
            step = _batched_time_step(_observations(shape, np.float32, 2), ts.StepType.MID)
            return step._replace(reward=np.array([0.0, np.nan], np.float32))

    start = _batched_time_step(_observations(shape, np.float32, 2), ts.StepType.FIRST)
    with pytest.raises(FloatingPointError, match="the env gave a non-finite reward"):
        acting.collect(NanRewards(), policy, start, steps=3)
