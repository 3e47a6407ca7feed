"""PPO's acting between updates, in NumPy: the collect policy's actions and the experience batch.

tf-agents collects PPO's experience with its collect policy (a TensorFlow call per batched step)
and a driver that adds each transition to a replay buffer. :class:`NumpyCollectPolicy` does the
same with :class:`~opt_suite.agents.numpy_actor.NumpyActor` (the actor's forward pass in NumPy,
about 1 ms of CPU less per step; see that module) and a seeded NumPy generator, and
:func:`experience` stacks the transitions into the ``[batch, time]`` ``Trajectory`` of tensors
that ``agent.train`` takes — the structure of ``agent.collect_data_spec``, with the logits the
actions were sampled from as the policy info (PPO's "old" distribution).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from opt_suite._tf import tensorflow
from opt_suite.agents.numpy_actor import NumpyActor, sample_categorical

tf = tensorflow()

from tf_agents.trajectories import time_step as ts  # noqa: E402
from tf_agents.trajectories import trajectory  # noqa: E402

__all__ = ["ACTING_STREAM", "NumpyCollectPolicy", "Transition", "collect", "experience"]

# The spawn key of the action samples' stream under the agent's seed (the networks' initial
# weights come from TensorFlow's seed, the envs from their own). Never change: results depend on it.
ACTING_STREAM = 7


class Transition(NamedTuple):
    """One batched step: the time step acted on, the action, its logits, the next time step."""

    time_step: ts.TimeStep
    action: np.ndarray
    logits: np.ndarray
    next_time_step: ts.TimeStep


class NumpyCollectPolicy:
    """The categorical collect policy of a PPO agent built by ``opt_suite.agents.ppo``.

    Args:
      agent: the agent (its ``actor_net``, ``time_step_spec`` and ``action_spec`` are read).
      seed: the agent's seed; the action samples come from its own stream under it.
    """

    def __init__(self, agent: Any, seed: int) -> None:
        observation = agent.time_step_spec.observation
        actor = agent.actor_net
        # An action mask (the options' initiation sets, opt_suite.learners.initiation_mask):
        # masked logits become float32's lowest value, as tf-agents' masked projection does.
        self._mask = getattr(actor, "mask_of", None)
        self._actor = NumpyActor(
            getattr(actor, "wrapped", actor),
            observation.dtype.as_numpy_dtype,
            observation.shape.rank,
        )
        self._minimum = int(np.asarray(agent.action_spec.minimum))
        self._rng = np.random.default_rng(
            np.random.SeedSequence(int(seed), spawn_key=(ACTING_STREAM,))
        )

    def refresh(self) -> None:
        """Read the actor's weights again (after an update)."""
        self._actor.refresh()

    def act(self, time_step: ts.TimeStep) -> tuple[np.ndarray, np.ndarray]:
        """(actions [N] int64, the logits [N, A] they were sampled from) for a batched time step."""
        observation = np.asarray(time_step.observation)
        if np.issubdtype(observation.dtype, np.floating) and not np.isfinite(observation).all():
            # Said here: else the NaN reaches the logits, and is blamed on PPO's weights.
            bad = np.count_nonzero(~np.isfinite(observation))
            raise FloatingPointError(
                f"the env gave non-finite observations ({bad} of {observation.size} values): fix "
                "the env, PPO cannot act on them"
            )
        logits = self._actor.logits(observation)
        if self._mask is not None:
            lowest = np.finfo(np.float32).min
            logits = np.where(self._mask.allowed(observation), logits, lowest).astype(np.float32)
        actions = sample_categorical(logits, self._rng) + self._minimum
        return actions.astype(np.int64), logits


def collect(
    env: Any,
    policy: NumpyCollectPolicy,
    time_step: ts.TimeStep,
    steps: int,
    stop: Callable[[], bool] | None = None,
) -> tuple[list[Transition], ts.TimeStep, bool]:
    """Act ``steps`` batched steps in ``env`` (a batched py environment) from ``time_step``.

    Returns the transitions, the last time step and whether all ``steps`` were taken: ``stop`` is
    asked after every step, and a true answer ends the collection there (e.g. a spent budget).
    """
    transitions = []
    for _ in range(steps):
        actions, logits = policy.act(time_step)
        next_time_step = env.step(actions)
        reward = np.asarray(next_time_step.reward)
        if not np.isfinite(reward).all():
            raise FloatingPointError(
                f"the env gave a non-finite reward ({reward[~np.isfinite(reward)][0]}): fix the "
                "env or its reward_scale, PPO cannot learn from it"
            )
        transitions.append(Transition(time_step, actions, logits, next_time_step))
        time_step = next_time_step
        if stop is not None and stop():
            return transitions, time_step, False
    return transitions, time_step, True


def experience(transitions: Sequence[Transition]) -> trajectory.Trajectory:
    """The transitions (in time order, each batched over N envs) as a ``[N, T]`` Trajectory."""

    def stack(arrays: Sequence[Any]) -> Any:
        return tf.constant(np.stack(arrays, axis=1))

    return trajectory.Trajectory(
        step_type=stack([t.time_step.step_type for t in transitions]),
        observation=stack([t.time_step.observation for t in transitions]),
        action=stack([t.action for t in transitions]),
        policy_info={"dist_params": {"logits": stack([t.logits for t in transitions])}},
        next_step_type=stack([t.next_time_step.step_type for t in transitions]),
        reward=stack([t.next_time_step.reward for t in transitions]),
        discount=stack([t.next_time_step.discount for t in transitions]),
    )
