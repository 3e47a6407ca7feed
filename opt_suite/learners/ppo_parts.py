"""The pieces of the ``tf_agents`` learner: acting with an option set, the PPO agent, its loop.

Imported when a ``tf_agents`` run starts (it imports TensorFlow and tf-agents).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from opt_suite._tf import tensorflow

tf = tensorflow()

from opt_suite.agents import acting, agent_cache  # noqa: E402
from opt_suite.agents.params import PPOParams  # noqa: E402
from opt_suite.families.env_batch import EnvBatch  # noqa: E402
from opt_suite.learners.base import CloneFit  # noqa: E402
from opt_suite.learners.lite_options import lite_probabilities  # noqa: E402
from opt_suite.learners.option_env import OptionAugmentedEnv, OptionProbabilities  # noqa: E402
from opt_suite.options.policy_start import PolicyStart  # noqa: E402

__all__ = ["act", "clone", "learn", "option_env", "option_probabilities", "ppo_agent"]


def option_probabilities(options: Any, lite: bool = True) -> tuple[int, OptionProbabilities | None]:
    """(m, the options' acting function on rows of observations) for any option set.

    Network sets act through TensorFlow Lite interpreters (:mod:`opt_suite.learners.lite_options`:
    each row by its own option's interpreter, about 10x cheaper per frame than a TensorFlow call).
    Without ``tf.lite`` they run as one compiled function: the rows are partitioned by the option
    they run, each network is called on its own rows only, and the results are stitched back — one
    TensorFlow call per request whatever m is, and no work for options no sub-env is running.
    """
    count = len(options)
    if count == 0:
        return 0, None
    networks = getattr(options, "networks", None)
    if networks is not None:
        shape = tuple(getattr(options, "observation_shape", ()))
        if lite:
            fast = lite_probabilities(networks, shape, options.num_actions)
            if fast is not None:
                return count, fast

        @tf.function(
            input_signature=[
                tf.TensorSpec([None, *shape], tf.float32),
                tf.TensorSpec([None], tf.int32),
            ]
        )
        def rows_of(frames, which):
            positions = tf.dynamic_partition(tf.range(tf.shape(which)[0]), which, count)
            parts = tf.dynamic_partition(frames, which, count)
            mus, betas = [], []
            for network, part in zip(networks, parts, strict=True):
                rows = tf.shape(part)[0]

                def run(network=network, part=part, rows=rows):
                    mu, beta = network(part, training=False)
                    return tf.reshape(mu, [rows, -1]), tf.reshape(beta, [-1])

                def skip(rows=rows):  # a convolution of an empty batch fails on CPU
                    return tf.zeros([rows, options.num_actions]), tf.zeros([rows])

                mu, beta = tf.cond(rows > 0, run, skip)
                mus.append(mu)
                betas.append(beta)
            return tf.dynamic_stitch(positions, mus), tf.dynamic_stitch(positions, betas)

        def from_networks(observations: np.ndarray, which: np.ndarray):
            mu, beta = rows_of(
                tf.convert_to_tensor(observations, tf.float32), tf.constant(which, tf.int32)
            )
            return mu.numpy(), beta.numpy()

        return count, from_networks

    def from_set(observations: np.ndarray, which: np.ndarray):
        mu, beta = options.probabilities(observations)  # [k, m, A], [k, m]
        rows = np.arange(len(which))
        return np.asarray(mu)[rows, which], np.asarray(beta)[rows, which]

    return count, from_set


def option_env(
    envs: EnvBatch | Sequence[Any],
    options: Any,
    gamma: float,
    termination_bump: float,
    seeds: Sequence[np.random.SeedSequence],
) -> OptionAugmentedEnv:
    """The option-augmented env of ``envs`` with ``options`` (see ``option_env.py``)."""
    count, probabilities = option_probabilities(options)
    return OptionAugmentedEnv(envs, probabilities, count, gamma, termination_bump, seeds)


def ppo_agent(
    env: OptionAugmentedEnv, params: PPOParams, seed: int, action_mask: Any = None
) -> Any:
    """The experts' PPO agent (``opt_suite.agents.ppo``) for ``env``, with discount factor 1.

    The env's discount is already γ^k per SMDP step, so the agent must not discount again.
    ``action_mask``: the options' initiation sets (``initiation_mask.action_mask``), or None.
    The worker's agent of the same graph, reset for ``seed``, when it has one
    (:mod:`opt_suite.agents.agent_cache`): its compiled update is traced once per worker.
    """
    smdp = dataclasses.replace(params, gamma=1.0)
    return agent_cache.fresh_agent(env.time_step_spec(), env.action_spec(), smdp, seed, action_mask)


def learn(
    env: OptionAugmentedEnv,
    agent: Any,
    collect_steps: int,
    episodes: int,
    max_updates: int | None = None,
    frames: int | None = None,
    *,
    seed: int,
) -> int:
    """Collect ``collect_steps`` decisions per sub-env, train on them, until ``episodes`` ended.

    Acting is NumPy's (:mod:`opt_suite.agents.acting`, the experts' too: the actor's forward pass,
    samples from the stream ``seed`` names), learning tf-agents' compiled ``agent.train``.

    With a frame budget ``frames`` it stops instead as soon as the env has used that many
    emulator frames (checked after every batched step, mid-collection: experience gathered past
    the budget is never trained on, so no learning happens on frames outside the budget).

    Returns:
      The number of PPO updates made.
    """
    policy = acting.NumpyCollectPolicy(agent, seed)
    train = _compiled_train(agent)
    time_step = env.reset()
    updates = 0

    def going() -> bool:
        if max_updates is not None and updates >= max_updates:
            return False
        return len(env.episodes) < episodes if frames is None else env.frames < frames

    def spent() -> bool:
        return frames is not None and env.frames >= frames

    while going():
        transitions, time_step, complete = acting.collect(
            env, policy, time_step, collect_steps, stop=spent
        )
        if not complete:
            return updates  # the budget is spent: stop acting, do not learn from the rest
        train(acting.experience(transitions))
        policy.refresh()
        updates += 1
    return updates


def clone(
    env: OptionAugmentedEnv,
    agent: Any,
    start: PolicyStart,
    seed: np.random.SeedSequence,
    held_out_seed: np.random.SeedSequence | None = None,
) -> tuple[np.ndarray, CloneFit | None]:
    """Behaviour-clone ``agent``'s actor on ``start``'s pairs (``bc_ppo``); the loss per step.

    With ``held_out_seed``, also its fit (:data:`CloneFit`): the cloned actor's on every pair,
    and, when ``start`` holds pairs out, a second clone's — from the same initial weights, on the
    other pairs, minibatches from ``held_out_seed`` — on the held-out ones. The actor ends with the
    first clone's weights (set back exactly), and no draw of the first clone's stream or of the
    agent's is made: the run after it is the one without the measurement.

    Raises:
      ValueError: the demonstrated observations do not fit the env's (shape), or the agent has
        options besides the primitives (a policy start has none).
    """
    from opt_suite.agents.cloning import actor_fit, clone_actor

    spec = env.observation_spec()
    if start.observation_shape != tuple(spec.shape):
        raise ValueError(
            f"bc_ppo: demonstrated observations of shape {start.observation_shape}, the task's "
            f"are {tuple(spec.shape)}"
        )
    actor = agent.actor_net
    observations = start.observations.astype(spec.dtype, copy=False)
    initial = actor.get_weights() if held_out_seed is not None else None
    losses = clone_actor(
        actor,
        observations,
        start.actions,
        start.steps,
        start.batch_size,
        start.learning_rate,
        np.random.default_rng(seed),
    )
    if held_out_seed is None:
        return losses, None
    accuracy, log_likelihood = actor_fit(actor, observations, start.actions)
    held = start.held_out
    if held is None or not held.any() or held.all():
        return losses, (accuracy, log_likelihood, None, None)
    cloned = actor.get_weights()
    actor.set_weights(initial)
    kept = ~held
    clone_actor(
        actor,
        observations[kept],
        start.actions[kept],
        start.steps,
        start.batch_size,
        start.learning_rate,
        np.random.default_rng(held_out_seed),
    )
    held_accuracy, held_log_likelihood = actor_fit(actor, observations[held], start.actions[held])
    actor.set_weights(cloned)
    return losses, (accuracy, log_likelihood, held_accuracy, held_log_likelihood)


def act(env: OptionAugmentedEnv, agent: Any, episodes: int, *, seed: int) -> None:
    """Act with the agent's current actor, never training it, until ``episodes`` episodes ended.

    The acting of :func:`learn` (the same NumPy actor and sample stream) without its updates:
    the zero-shot return of an option set. Every episode ends (the env batch cuts them at
    ``max_steps``), so the loop does.
    """
    policy = acting.NumpyCollectPolicy(agent, seed)
    time_step = env.reset()
    while len(env.episodes) < episodes:
        actions, _ = policy.act(time_step)
        time_step = env.step(actions)


def _compiled_train(agent: Any) -> Any:
    """The agent's compiled train step, made once per agent (so once per worker and graph)."""
    if not hasattr(agent, "_opt_suite_train"):
        agent._opt_suite_train = tf.function(agent.train, autograph=False)
    return agent._opt_suite_train
