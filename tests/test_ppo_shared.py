"""PPO with a shared trunk: tf-agents' own loss and gradients, the trunk run once per epoch."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from opt_suite._tf import tensorflow
from opt_suite.agents import ppo, shared_trunk
from opt_suite.agents.params import NetworkParams, PPOParams, ppo_memory

tf = tensorflow()

from tf_agents.agents.ppo import ppo_clip_agent  # noqa: E402
from tf_agents.specs import tensor_spec  # noqa: E402
from tf_agents.trajectories import time_step as ts  # noqa: E402

SHAPE, ACTIONS, BATCH, TIME = (10, 10, 4), 6, 3, 5
OBSERVATION = tensor_spec.BoundedTensorSpec(SHAPE, tf.uint8, 0, 255, name="observation")
ACTION = tensor_spec.BoundedTensorSpec((), tf.int64, 0, ACTIONS - 1, name="action")
SMALL = NetworkParams(
    conv_filters=(8,), conv_kernels=(3,), conv_strides=(1,), fc_units=(32,), shared=True
)


def _agent(network: NetworkParams = SMALL, seed: int = 0):
    params = PPOParams(network=network)
    return ppo.build_agent(ts.time_step_spec(OBSERVATION), ACTION, params, seed)


def _loss_inputs(seed: int = 1) -> dict:
    """A [BATCH, TIME] minibatch as ``PPOAgent._train`` hands it to ``get_loss``."""
    rng = np.random.default_rng(seed)
    outer = (BATCH, TIME)
    time_steps = ts.TimeStep(
        step_type=tf.constant(rng.integers(0, 3, outer), tf.int32),
        reward=tf.constant(rng.normal(size=outer), tf.float32),
        discount=tf.ones(outer, tf.float32),
        observation=tf.constant(rng.integers(0, 256, (*outer, *SHAPE)), tf.uint8),
    )
    return dict(
        time_steps=time_steps,
        actions=tf.constant(rng.integers(0, ACTIONS, outer), tf.int64),
        act_log_probs=tf.constant(np.log(rng.uniform(0.05, 0.5, outer)), tf.float32),
        returns=tf.constant(rng.normal(size=outer), tf.float32),
        normalized_advantages=tf.constant(rng.normal(size=outer), tf.float32),
        action_distribution_parameters=None,
        weights=tf.constant(rng.integers(0, 2, outer), tf.float32),  # some steps masked out
        train_step=tf.Variable(0, dtype=tf.int64),
        debug_summaries=False,
        training=True,
    )


def test_a_shared_trunk_is_one_set_of_variables_counted_once():
    agent = _agent()
    assert isinstance(agent, shared_trunk.SharedTrunkPPOAgent)
    actor, value = agent.actor_net, agent._value_net
    assert actor.trunk is value.trunk
    unique = {v.ref(): v for v in actor.trainable_variables + value.trainable_variables}
    assert sum(int(np.prod(v.shape)) for v in unique.values()) == SMALL.agent_parameters(
        SHAPE, ACTIONS
    )
    separate = dataclasses.replace(SMALL, shared=False)
    assert SMALL.agent_parameters(SHAPE, ACTIONS) < separate.agent_parameters(SHAPE, ACTIONS)
    assert ppo_memory(PPOParams(network=SMALL), SHAPE, ACTIONS) < ppo_memory(
        PPOParams(network=separate), SHAPE, ACTIONS
    )


def test_separate_networks_are_the_default_as_tf_agents_builds_them():
    assert NetworkParams().shared is False
    agent = _agent(dataclasses.replace(SMALL, shared=False))
    assert type(agent) is ppo_clip_agent.PPOClipAgent
    actor_refs = {v.ref() for v in agent.actor_net.trainable_variables}
    assert not actor_refs & {v.ref() for v in agent._value_net.trainable_variables}


def test_the_loss_and_its_gradients_are_tf_agents_own_on_the_same_networks():
    """The override computes what ``PPOAgent.get_loss`` computes (it runs the trunk twice)."""
    agent = _agent()
    inputs = _loss_inputs()
    both = agent.actor_net.trainable_variables + agent._value_net.trainable_variables
    variables = list({v.ref(): v for v in both}.values())
    tf_agents_loss = lambda **kw: ppo_clip_agent.PPOClipAgent.get_loss(agent, **kw)  # noqa: E731
    results = []
    for get_loss in (agent.get_loss, tf_agents_loss):
        with tf.GradientTape() as tape:
            loss = get_loss(**inputs)
        results.append((loss, tape.gradient(loss.loss, variables)))
    (ours, our_grads), (theirs, their_grads) = results
    assert float(ours.loss) != 0.0
    np.testing.assert_allclose(ours.loss.numpy(), theirs.loss.numpy(), rtol=1e-5)
    for field in ("policy_gradient_loss", "value_estimation_loss", "entropy_regularization_loss"):
        np.testing.assert_allclose(
            getattr(ours.extra, field).numpy(), getattr(theirs.extra, field).numpy(), rtol=1e-5
        )
    for mine, reference in zip(our_grads, their_grads, strict=True):
        assert mine is not None and reference is not None
        np.testing.assert_allclose(mine.numpy(), reference.numpy(), rtol=1e-4, atol=1e-7)


def _convolutions(get_loss, inputs) -> int:
    graph = tf.function(lambda: get_loss(**inputs).loss).get_concrete_function().graph
    return sum(op.type == "Conv2D" for op in graph.get_operations())


def test_one_loss_runs_the_trunk_once_where_tf_agents_runs_it_twice():
    agent, inputs = _agent(), _loss_inputs()
    assert _convolutions(agent.get_loss, inputs) == 1
    tf_agents_loss = lambda **kw: ppo_clip_agent.PPOClipAgent.get_loss(agent, **kw)  # noqa: E731
    assert _convolutions(tf_agents_loss, inputs) == 2


@pytest.mark.parametrize(
    "two_trunks, settings, message",
    [(False, {"value_clipping": 0.2}, "value_clipping"), (True, {}, "two trunks")],
)
def test_terms_the_override_does_not_compute_are_refused(two_trunks, settings, message):
    actor, value = ppo.build_networks(OBSERVATION, ACTION, SMALL, seed=0)
    if two_trunks:
        _, value = ppo.build_networks(OBSERVATION, ACTION, SMALL, seed=0)
    with pytest.raises(ValueError, match=message):
        shared_trunk.SharedTrunkPPOAgent(
            ts.time_step_spec(OBSERVATION),
            ACTION,
            optimizer=tf.keras.optimizers.Adam(1e-3),
            actor_net=actor,
            value_net=value,
            **settings,
        )


def test_an_update_changes_the_shared_trunk_and_is_seeded():
    """One ``train`` call on a collected-shaped batch: the trunk moves, identically per seed."""

    def trained_weights() -> list[np.ndarray]:
        agent = _agent(seed=4)
        rng = np.random.default_rng(2)
        experience = _experience(agent, rng)
        before = [w.copy() for w in agent.actor_net.trunk.get_weights()]
        loss = tf.function(agent.train, autograph=False)(experience).loss
        assert np.isfinite(float(loss))
        after = agent.actor_net.trunk.get_weights()
        assert any(not np.array_equal(a, b) for a, b in zip(before, after, strict=True))
        return after + agent.actor_net.head.get_weights() + agent._value_net.head.get_weights()

    for first, second in zip(trained_weights(), trained_weights(), strict=True):
        np.testing.assert_array_equal(first, second)


def _experience(agent, rng: np.random.Generator):
    """A [BATCH, TIME] trajectory shaped as the collect policy records it."""
    from tf_agents.trajectories import trajectory

    outer = (BATCH, TIME)
    logits = rng.normal(size=(*outer, ACTIONS)).astype(np.float32)
    info = {"dist_params": {"logits": tf.constant(logits)}}
    return trajectory.Trajectory(
        step_type=tf.constant(np.tile([0, 1, 1, 1, 2], (BATCH, 1)), tf.int32),
        observation=tf.constant(rng.integers(0, 256, (*outer, *SHAPE)), tf.uint8),
        action=tf.constant(rng.integers(0, ACTIONS, outer), tf.int64),
        policy_info=info,
        next_step_type=tf.constant(np.tile([1, 1, 1, 2, 0], (BATCH, 1)), tf.int32),
        reward=tf.constant(rng.normal(size=outer), tf.float32),
        discount=tf.constant(np.tile([1, 1, 1, 0, 1], (BATCH, 1)), tf.float32),
    )
