"""The PPO agent over a :class:`GymnasiumPyEnvironment`: networks, agent and training loop.

Why PPO: the paper trained its experts and its test-time policies with A3C (many actor-critic
learners in parallel, 32 CPUs). tf-agents has no A3C; its clipped PPO is the nearest: an on-policy
actor-critic with a softmax policy (so demonstrations are sampled from a stochastic policy, as from
A3C's), learning from batches collected by parallel envs, with GAE advantages. DQN would be the
other choice, but it is off-policy with a replay buffer of frames and an epsilon-greedy policy —
further from the paper in both learning and sampling.

Everything random is seeded: the networks' initial weights from ``tf.random.set_seed(seed)``
(TensorFlow's op seeds are then fixed by graph construction order), the policy's samples from a
NumPy stream under the same seed (:mod:`opt_suite.agents.acting`), the envs from their reset seed.
Op determinism is switched on, so two runs with one seed on one machine give the same weights.
Callers that train one agent per run get it from :mod:`opt_suite.agents.agent_cache`, which reuses
a worker's agent of the same graph reset to exactly what :func:`build_agent` would give.

Used by the experts (:mod:`opt_suite.agents.expert`) and the ``tf_agents`` learner
(:mod:`opt_suite.learners.ppo_parts`): build the agent with :func:`build_agent` on any adapter,
train with :func:`train`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from opt_suite._tf import tensorflow
from opt_suite.agents import acting, shared_trunk
from opt_suite.agents.environment import GymnasiumPyEnvironment
from opt_suite.agents.params import NetworkParams, PPOParams

tf = tensorflow()

from tf_agents.agents.ppo import ppo_clip_agent  # noqa: E402
from tf_agents.networks import actor_distribution_network, value_network  # noqa: E402
from tf_agents.specs import tensor_spec  # noqa: E402
from tf_agents.utils import common  # noqa: E402

__all__ = ["TrainingLog", "build_networks", "build_agent", "train", "policy_logits"]


@dataclasses.dataclass
class TrainingLog:
    """What a training run did.

    Attributes:
      frames: emulator frames used (as counted by the adapter).
      iterations: PPO updates.
      episode_returns: returns of the episodes that ended during training, in order.
      episode_frames: the adapter's frame count when each of those episodes ended.
    """

    frames: int = 0
    iterations: int = 0
    episode_returns: list[float] = dataclasses.field(default_factory=list)
    episode_frames: list[int] = dataclasses.field(default_factory=list)


def _scale_frames(channel_axis: bool = False) -> Any:
    """uint8 pixels -> float32 in [0, 1]; other observations -> float32 unchanged.

    ``channel_axis``: add a last axis of one channel (a [H, W] image, for the convolutions).
    """

    def scale(x: Any) -> Any:
        x = tf.cast(x, tf.float32) / 255.0 if x.dtype == tf.uint8 else tf.cast(x, tf.float32)
        return x[..., None] if channel_axis else x

    return tf.keras.layers.Lambda(scale)


def build_networks(
    observation_spec: Any,
    action_spec: Any,
    params: NetworkParams,
    seed: int,
    *,
    set_seed: bool = True,
) -> tuple[Any, Any]:
    """The actor (softmax over actions) and value networks, their trunk sized to the observation.

    With ``params.shared`` both hold one trunk (:mod:`opt_suite.agents.shared_trunk`), else each
    has its own (tf-agents' ``ActorDistributionNetwork`` and ``ValueNetwork``).

    Convolutions on images (``params.conv_layer_params``: Atari's on frames of 20 px or more,
    3x3 stride 1 on smaller ones by default), dense layers only on vectors and indices. Both are
    created (their variables built) here, with initial weights fixed by ``seed``. Specs may be
    array specs (of a py environment) or tensor specs. ``set_seed=False``: the caller has set
    TensorFlow's global seed to ``seed`` its own way (``opt_suite.agents.agent_cache``).
    """
    observation_spec = tensor_spec.from_spec(observation_spec)
    action_spec = tensor_spec.from_spec(action_spec)
    if set_seed:
        tf.random.set_seed(seed)
    shape = tuple(int(d) for d in observation_spec.shape)
    conv = params.conv_layer_params(shape) or None if shape else None
    channel_axis = conv is not None and len(shape) == 2
    if params.shared:
        actor, value = shared_trunk.shared_networks(
            observation_spec, action_spec, _scale_frames(channel_axis), conv, params.fc_units
        )
    else:
        actor = actor_distribution_network.ActorDistributionNetwork(
            observation_spec,
            action_spec,
            preprocessing_layers=_scale_frames(channel_axis),
            conv_layer_params=conv,
            fc_layer_params=params.fc_units,
            seed=seed,
        )
        value = value_network.ValueNetwork(
            observation_spec,
            preprocessing_layers=_scale_frames(channel_axis),
            conv_layer_params=conv,
            fc_layer_params=params.fc_units,
        )
    actor.create_variables()
    value.create_variables()
    return actor, value


def build_agent(
    time_step_spec: Any,
    action_spec: Any,
    params: PPOParams,
    seed: int,
    action_mask: Callable[[Any], Any] | None = None,
) -> ppo_clip_agent.PPOClipAgent:
    """A clipped-PPO agent with fresh networks (see :func:`build_networks`).

    A shared trunk gets :class:`~opt_suite.agents.shared_trunk.SharedTrunkPPOAgent` (the same
    loss, the trunk run once per epoch), separate networks tf-agents' ``PPOClipAgent``.
    ``action_mask`` (observations -> bool [..., actions]) gives disallowed actions probability 0
    (the options' initiation sets: ``opt_suite.learners.initiation_mask``).
    """
    tf.config.experimental.enable_op_determinism()
    time_step_spec = tensor_spec.from_spec(time_step_spec)
    action_spec = tensor_spec.from_spec(action_spec)
    actor, value = build_networks(time_step_spec.observation, action_spec, params.network, seed)
    if action_mask is not None and params.network.shared:
        actor.mask_of = action_mask
    elif action_mask is not None:
        from opt_suite.agents.masked_actor import MaskedActorNetwork

        actor = MaskedActorNetwork(actor, action_mask)
        actor.create_variables()
    agent_class = (
        shared_trunk.SharedTrunkPPOAgent if params.network.shared else ppo_clip_agent.PPOClipAgent
    )
    optimizer = tf.keras.optimizers.Adam(learning_rate=params.learning_rate)
    agent = agent_class(
        time_step_spec,
        action_spec,
        optimizer=optimizer,
        actor_net=actor,
        value_net=value,
        importance_ratio_clipping=params.clip,
        lambda_value=params.lambda_gae,
        discount_factor=params.gamma,
        entropy_regularization=params.entropy,
        num_epochs=params.epochs,
        use_gae=True,
        normalize_observations=False,  # frames are scaled to [0, 1] by the networks
        normalize_rewards=True,  # reward scales differ 100-fold between tasks
        train_step_counter=tf.Variable(0, dtype=tf.int64),
    )
    agent.initialize()
    _build_optimizer(optimizer, actor, value)
    return agent


def _build_optimizer(optimizer: Any, actor: Any, value: Any) -> None:
    """Create Adam's moments now, as its first ``apply_gradients`` would (zeros, same order).

    Why: created inside the compiled train step, they make ``tf.function`` trace the whole PPO
    update twice (once creating variables, once more without): 3.6 instead of 2.1 CPU-s on the
    first update, most of a short run's cost (``benchmarks/bench_ppo.py``). The list is the one
    tf-agents' ``_train`` passes (both networks' trainable weights, deduplicated, sorted by name),
    so the moments are created in the same order, with the same zeros: the updates are unchanged
    bit for bit (``benchmarks/ppo_run_hashes.py``). Only their names lose the ``epoch_0/`` scope
    they were created under; nothing reads them (an expert's checkpoint holds the actor's weights).
    """
    unique = {id(v): v for v in actor.trainable_weights + value.trainable_weights}
    with tf.name_scope(optimizer.name):
        optimizer.build(sorted(unique.values(), key=lambda v: v.name))


def train(
    py_env: GymnasiumPyEnvironment,
    agent: Any,
    params: PPOParams,
    frames: int,
    progress: Callable[[TrainingLog], None] | None = None,
    *,
    seed: int,
) -> TrainingLog:
    """Collect ``steps_per_iteration`` steps from every env, update, until ``frames`` are used.

    Acting is NumPy's (:mod:`opt_suite.agents.acting`: the actor's forward pass and a categorical
    sample from the stream ``seed`` names); learning is tf-agents' ``agent.train``, compiled, on the
    ``[num_envs, steps_per_iteration]`` batch, after which the NumPy actor reads the new weights.

    The budget is checked between iterations, so the last one may overrun it by at most one
    iteration's frames (``num_envs * steps_per_iteration * frame_skip``); the log says exactly how
    many were used.
    """
    if not py_env.batched:
        raise ValueError("train: expected a batched GymnasiumPyEnvironment (one vector env)")
    policy = acting.NumpyCollectPolicy(agent, seed)
    update = _compiled_update(agent)
    log = TrainingLog()
    start = py_env.frames  # the budget counts the resets' random start actions too
    time_step = py_env.reset()
    py_env.pop_episodes()
    while py_env.frames - start < frames:
        transitions, time_step, _ = acting.collect(
            py_env, policy, time_step, params.steps_per_iteration
        )
        update(acting.experience(transitions))
        policy.refresh()
        log.iterations += 1
        for episode_return, at in py_env.pop_episodes():
            log.episode_returns.append(episode_return)
            log.episode_frames.append(at - start)
        log.frames = py_env.frames - start
        if progress is not None:
            progress(log)
    return log


def _compiled_update(agent: Any) -> Any:
    """The agent's compiled train step for :func:`train`, made once per agent.

    Kept on the agent: an agent reused across runs (``opt_suite.agents.agent_cache``) is traced
    once. (``common.function``, not the learner's ``tf.function``: the experts' numbers stay.)
    """
    if not hasattr(agent, "_opt_suite_expert_update"):
        agent._opt_suite_expert_update = common.function(agent.train)
    return agent._opt_suite_expert_update


def policy_logits(actor: Any) -> Callable[[np.ndarray], np.ndarray]:
    """A compiled function: observations [N, ...] -> the actor's action logits [N, A].

    One ``tf.function`` per actor (an eager call per environment step costs ~10x more).
    """

    @tf.function(autograph=False)  # plain graph code: nothing for autograph to convert
    def logits(observations: Any) -> Any:
        step_type = tf.zeros(tf.shape(observations)[:1], dtype=tf.int32)  # stateless: any type
        distribution, _ = actor(observations, step_type=step_type, network_state=(), training=False)
        return distribution.logits_parameter()

    return lambda observations: logits(tf.convert_to_tensor(observations)).numpy()
