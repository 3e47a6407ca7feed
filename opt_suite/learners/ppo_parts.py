"""The pieces of the ``tf_agents`` learner: acting with an option set, the PPO agent, its loop.

Imported when a ``tf_agents`` run starts (it imports TensorFlow and tf-agents).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from opt_suite._tf import tensorflow

tf = tensorflow()

from tf_agents.agents.ppo import ppo_clip_agent  # noqa: E402
from tf_agents.networks import actor_distribution_network, value_network  # noqa: E402
from tf_agents.specs import tensor_spec  # noqa: E402
from tf_agents.trajectories import time_step as ts  # noqa: E402
from tf_agents.trajectories import trajectory  # noqa: E402

from opt_suite.learners.option_env import OptionAugmentedEnv, OptionProbabilities  # noqa: E402

__all__ = ["CONV_LAYERS", "learn", "option_env", "option_probabilities", "ppo_agent"]

#: (filters, kernel, stride): the options' two conv layers (Mnih et al. 2013), for π and V too.
CONV_LAYERS = ((16, 8, 4), (32, 4, 2))


def option_probabilities(options: Any) -> tuple[int, OptionProbabilities | None]:
    """(m, the options' acting function on an observation batch) for a tabular or network set.

    Network sets are called as one compiled function over all their networks, so a tick of the
    option-augmented env costs one TensorFlow call whatever m is.
    """
    count = len(options)
    if count == 0:
        return 0, None
    networks = getattr(options, "networks", None)
    if networks is not None:

        @tf.function(reduce_retracing=True)
        def both(frames):
            outs = [network(frames, training=False) for network in networks]
            mu = tf.stack([tf.reshape(m, [tf.shape(frames)[0], -1]) for m, _ in outs], axis=1)
            beta = tf.stack([tf.reshape(b, [-1]) for _, b in outs], axis=1)
            return mu, beta

        def from_networks(observations: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            mu, beta = both(tf.convert_to_tensor(observations, tf.float32))
            return mu.numpy(), beta.numpy()

        return count, from_networks
    if hasattr(options, "mu") and hasattr(options, "beta"):
        mu_table = np.transpose(np.asarray(options.mu), (1, 0, 2))  # [S, m, A]
        beta_table = np.transpose(np.asarray(options.beta))  # [S, m]

        def from_tables(observations: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            states = np.asarray(observations).reshape(len(observations))
            return mu_table[states], beta_table[states]

        return count, from_tables
    return count, options.probabilities


def option_env(
    envs: Sequence[Any], options: Any, params: Any, seeds: Sequence[np.random.SeedSequence]
) -> OptionAugmentedEnv:
    """The option-augmented env of ``envs`` with ``options`` (see ``option_env.py``)."""
    count, probabilities = option_probabilities(options)
    return OptionAugmentedEnv(
        envs, probabilities, count, params.gamma, params.termination_bump, seeds
    )


def _input_layers(observation_spec) -> tuple[Any, Any]:
    """(preprocessing layer, conv layer params) for frames or tabular state indices."""
    keras = tf.keras
    if len(observation_spec.shape) == 3:  # frames [H, W, C], uint8
        scale = 1.0 / 255.0 if observation_spec.dtype == tf.uint8 else 1.0
        layer = keras.layers.Lambda(lambda x: tf.cast(x, tf.float32) * scale)
        return layer, list(CONV_LAYERS)
    if observation_spec.dtype.is_integer and int(np.prod(observation_spec.shape)) == 1:
        depth = int(np.asarray(observation_spec.maximum).max()) + 1
        layer = keras.layers.Lambda(
            lambda x: tf.one_hot(tf.reshape(tf.cast(x, tf.int32), [-1]), depth)
        )
        return layer, None
    return keras.layers.Lambda(
        lambda x: tf.reshape(tf.cast(x, tf.float32), [tf.shape(x)[0], -1])
    ), None


def _sampleable(spec):
    """``spec`` with a uint8 upper bound of 254 instead of 255, for tf-agents 0.18's sampling.

    Networks are built by sampling their input spec, and ``tensor_spec.sample_bounded_spec`` adds 1
    to a uint8 maximum in uint8 (255 + 1 = 0: "Need minval < maxval"). The bound is used for
    nothing else, so frames of 255 still pass.
    """
    if spec.dtype == tf.uint8 and np.all(np.asarray(spec.maximum) == 255):
        return tensor_spec.BoundedTensorSpec(spec.shape, spec.dtype, spec.minimum, 254, spec.name)
    return spec


def ppo_agent(env: OptionAugmentedEnv, params: Any, seed: int) -> ppo_clip_agent.PPOClipAgent:
    """A fresh PPO-clip agent for ``env`` (TensorFlow's global seed set to ``seed`` first).

    The agent's discount factor is 1: the env's discount is already γ^k per SMDP step.
    Rewards are normalised by the agent (the tasks' reward scales differ by up to 10x).
    """
    tf.random.set_seed(seed)
    observation_spec = _sampleable(tensor_spec.from_spec(env.observation_spec()))
    action_spec = tensor_spec.from_spec(env.action_spec())
    networks = []
    for build in (
        lambda pre, conv: actor_distribution_network.ActorDistributionNetwork(
            observation_spec, action_spec, preprocessing_layers=pre, conv_layer_params=conv,
            fc_layer_params=(params.fc_units,),
        ),
        lambda pre, conv: value_network.ValueNetwork(
            observation_spec, preprocessing_layers=pre, conv_layer_params=conv,
            fc_layer_params=(params.fc_units,),
        ),
    ):  # fmt: skip
        networks.append(build(*_input_layers(observation_spec)))
    agent = ppo_clip_agent.PPOClipAgent(
        ts.time_step_spec(observation_spec),
        action_spec,
        optimizer=tf.keras.optimizers.Adam(learning_rate=params.learning_rate),
        actor_net=networks[0],
        value_net=networks[1],
        importance_ratio_clipping=0.2,
        lambda_value=0.95,
        discount_factor=1.0,
        entropy_regularization=params.entropy_regularization,
        num_epochs=params.ppo_epochs,
        use_gae=True,
        normalize_observations=False,
        normalize_rewards=True,
        train_step_counter=tf.Variable(0, dtype=tf.int64),
    )
    agent.initialize()
    return agent


def learn(
    env: OptionAugmentedEnv,
    agent: ppo_clip_agent.PPOClipAgent,
    collect_steps: int,
    episodes: int,
    max_updates: int | None = None,
) -> int:
    """Collect ``collect_steps`` decisions per sub-env, train on them, until ``episodes`` ended.

    Returns:
      The number of PPO updates made.
    """
    act = tf.function(agent.collect_policy.action, autograph=False)
    train = tf.function(agent.train, autograph=False)
    time_step = env.reset()
    updates = 0
    while len(env.episodes) < episodes and (max_updates is None or updates < max_updates):
        steps = []
        for _ in range(collect_steps):
            action_step = tf.nest.map_structure(np.asarray, act(_tensors(time_step)))
            next_step = env.step(action_step.action)
            steps.append(trajectory.from_transition(time_step, action_step, next_step))
            time_step = next_step
        experience = tf.nest.map_structure(lambda *xs: tf.constant(np.stack(xs, axis=1)), *steps)
        train(experience)
        updates += 1
    return updates


def _tensors(time_step: ts.TimeStep) -> ts.TimeStep:
    return tf.nest.map_structure(tf.convert_to_tensor, time_step)
