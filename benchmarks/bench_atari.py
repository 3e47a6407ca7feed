"""Atari performance: acting and learning with conv options, and Ĵ on Breakout demonstrations.

Figures (each ratio measured in one process, interleaved rounds, best of several: the machine is
shared), with their goals from the Atari issue:

- acting: emulator frames/s of the test-time agent acting with options — the PPO actor network and
  2 conv option networks batched over 8 Breakout envs (frame skip 4), no learning — over raw
  ``AtariVectorEnv`` frames/s with random actions, same env count. Goal >= 0.40.
- learning: frames/s of the ``tf_agents`` learner over primitives + 2 options over the same learner
  over primitives alone (8 envs, PPO updates included). Goal >= 0.75.
- Ĵ: one training step of Algorithm 1 (conv option o' and conv π on every demonstrated frame, the
  frozen option's tables, Ĵ and its gradient) on 12 Breakout demonstrations over the conv networks'
  own forward + backward on the same frames. Goal <= 1.1. The demonstrations are played by a
  scripted ball-tracking player (a stand-in for the expert: lives of 100–500 steps) until a life is
  lost, as the paper's; their frames' bytes are reported — held once, whatever the number of
  options.

    .venv/bin/pytest benchmarks/bench_atari.py -n 0 --benchmark-only -s

TensorFlow runs on ``OPT_SUITE_BENCH_THREADS`` threads (default 1).
"""

from __future__ import annotations

import os
import resource
import sys
import time
from pathlib import Path

import numpy as np
import pytest

# isort: off
import opt_suite  # noqa: F401  (sets TF_USE_LEGACY_KERAS first: tf-agents needs tf-keras)
import tensorflow as tf  # threads are set below, before anything initialises TensorFlow

# isort: on

THREADS = int(os.environ.get("OPT_SUITE_BENCH_THREADS", "1"))
tf.config.threading.set_intra_op_parallelism_threads(THREADS)
tf.config.threading.set_inter_op_parallelism_threads(THREADS)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from opt_suite.agents import acting  # noqa: E402
from opt_suite.agents.params import PPOParams  # noqa: E402
from opt_suite.families.atari.family import Atari, TaskParams  # noqa: E402
from opt_suite.learners import ppo_parts  # noqa: E402
from opt_suite.learners.agent_learner import TFAgentsLearner  # noqa: E402
from opt_suite.methods.offline_options.params import Params  # noqa: E402
from opt_suite.option_networks.initial import initial_frame_options  # noqa: E402

ENVS, SKIP, GAME = 8, 4, "breakout"
FAMILY = Atari(Atari.Params(game=GAME))
TASK = TaskParams(start_actions=1, reward_scale=1.0, frame_skip=SKIP)


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def raw_vector_fps(seconds: float = 3.0) -> float:
    """Frames/s of ``AtariVectorEnv`` (8 envs, frame skip 4, one thread per env) random actions."""
    from ale_py.vector_env import AtariVectorEnv

    env = AtariVectorEnv(
        GAME, ENVS, frameskip=SKIP, repeat_action_probability=0.0, reward_clipping=False,
        stack_num=2,
    )  # fmt: skip
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        env.step(rng.integers(env.single_action_space.n, size=ENVS))
        steps += 1
    elapsed = time.perf_counter() - start
    env.close()
    return steps * ENVS * SKIP / elapsed


def _learner_params() -> TFAgentsLearner.Params:
    return TFAgentsLearner.Params(ppo=PPOParams(num_envs=ENVS, steps_per_iteration=16))


def acting_fps(options, seconds: float = 3.0) -> float:
    """Frames/s of the option-augmented env driven by the PPO actor network, no learning."""
    p = _learner_params()
    envs = FAMILY.make_env_batch(TASK, ENVS, max_steps=10**9)  # the learner's batch: C++ threads
    env = ppo_parts.option_env(
        envs, options, p.gamma, p.termination_bump, np.random.SeedSequence(0).spawn(ENVS)
    )
    agent = ppo_parts.ppo_agent(env, p.ppo, 0)
    policy = acting.NumpyCollectPolicy(agent, seed=0)  # the learner's own acting path
    time_step = env.reset()
    frames0, start = env.frames, time.perf_counter()
    while time.perf_counter() - start < seconds:
        time_step = env.step(policy.act(time_step)[0])
    fps = (env.frames - frames0) / (time.perf_counter() - start)
    env.close()
    return fps


def learning_fps(options, updates: int = 4) -> float:
    """Frames/s of the learner's collect + PPO update loop (the first update, traced, excluded)."""
    p = _learner_params()
    envs = FAMILY.make_env_batch(TASK, ENVS, max_steps=10**9)
    env = ppo_parts.option_env(
        envs, options, p.gamma, p.termination_bump, np.random.SeedSequence(0).spawn(ENVS)
    )
    agent = ppo_parts.ppo_agent(env, p.ppo, 0)
    ppo_parts.learn(env, agent, p.ppo.steps_per_iteration, episodes=10**9, max_updates=1, seed=0)
    # learn() resets the env: measure a fresh call over `updates` more updates
    frames0, start = env.frames, time.perf_counter()
    ppo_parts.learn(
        env, agent, p.ppo.steps_per_iteration, episodes=10**9, max_updates=updates, seed=0
    )
    fps = (env.frames - frames0) / (time.perf_counter() - start)
    env.close()
    return fps


@pytest.fixture(scope="module")
def options():
    return initial_frame_options(FAMILY, TASK, 2, np.random.SeedSequence(0))


@pytest.fixture(scope="module")
def primitives_only():
    from opt_suite.options.network import NetworkOptionSet

    return NetworkOptionSet.empty(4, (84, 84, 2))


def test_acting_with_options_vs_raw_vector_env(benchmark, options):
    """Acting frames/s with options over raw AtariVectorEnv frames/s (goal >= 0.40)."""
    ours, raw = [], []
    for _ in range(3):
        raw.append(raw_vector_fps())
        ours.append(acting_fps(options))
    info = {
        "acting_fps": round(max(ours)),
        "raw_vector_env_fps": round(max(raw)),
        "ratio": round(max(ours) / max(raw), 3),
        "threads": THREADS,
        "max_rss_mb": round(_rss_mb()),
    }
    benchmark.extra_info.update(info)
    print(f"\n[acting] {info}")
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)


def test_learning_with_options_vs_primitives(benchmark, options, primitives_only):
    """Learner frames/s over primitives + options over primitives alone (goal >= 0.75)."""
    with_options, alone = [], []
    for _ in range(2):
        alone.append(learning_fps(primitives_only))
        with_options.append(learning_fps(options))
    info = {
        "options_fps": round(max(with_options)),
        "primitives_fps": round(max(alone)),
        "ratio": round(max(with_options) / max(alone), 3),
        "threads": THREADS,
        "max_rss_mb": round(_rss_mb()),
    }
    benchmark.extra_info.update(info)
    print(f"\n[learning] {info}")
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)


def _breakout_demos(count: int = 12, seed: int = 0):
    from atari_frames import breakout_demonstrations

    return breakout_demonstrations(count, max_steps=2000, seed=seed, policy="track")


def test_jhat_step_vs_conv_networks(benchmark):
    """Ĵ + gradient of one Algorithm 1 step on 12 demonstrations / the networks' fwd + bwd."""
    from opt_suite.methods.offline_options import training
    from opt_suite.methods.offline_options.demos import frame_demo_batch
    from opt_suite.objective import JhatConfig
    from opt_suite.option_networks.conv import FrameFeatures
    from opt_suite.option_networks.initial import new_option, tabulate
    from opt_suite.option_networks.networks import (
        init_policy,
        option_outputs,
        policy_probs,
    )

    rss_before = _rss_mb()
    demos = _breakout_demos()
    batch, frames = frame_demo_batch(demos, 4)
    features = FrameFeatures.of(frames)
    params = Params(features="frames", lambda2=5000.0, lambda1=0.01)
    seed = np.random.SeedSequence(0)
    # A frozen option: tables on the frames.
    kept = new_option(features, 4, params.hidden_sizes, seed, 0)
    frozen = training.FrozenOptions.none(len(frames), 4).append(
        *[
            np.log(tabulate(kept, features, batch.states)[0]),
            tabulate(kept, features, batch.states)[1],
        ]
    )
    fresh = new_option(features, 4, params.hidden_sizes, seed, 1)
    option = {k: tf.Variable(v) for k, v in fresh.items()}
    policy = {
        k: tf.Variable(v)
        for k, v in init_policy(features, params.hidden_sizes, 4 + 2, seed).items()
    }
    variables = [*option.values(), *policy.values()]
    tensors = training.batch_tensors(batch)
    states = tf.constant(batch.states)
    coords = tf.constant(frames)
    config = JhatConfig(
        lambda1=0.01, lambda2=5000.0, likelihood=params.likelihood, jit_compile=False
    )
    frozen_mu, frozen_beta = tf.constant(frozen.log_mu), tf.constant(frozen.beta)

    @tf.function
    def jhat_step():
        with tf.GradientTape() as tape:
            parts = training._parts(option, policy, frozen_mu, frozen_beta, tensors, states, coords,
                                    config)  # fmt: skip
        return tape.gradient(parts.total, variables)

    @tf.function
    def networks_step():
        with tf.GradientTape() as tape:
            log_mu, beta = option_outputs(option, states, coords)
            pi = policy_probs(policy, states, coords)
            loss = tf.add_n([tf.reduce_sum(tf.square(x)) for x in (log_mu, beta, pi)])
        return tape.gradient(loss, variables)

    def best(fn, repeats):
        out = float("inf")
        for _ in range(repeats):
            start = time.perf_counter()
            [g.numpy() for g in fn()]
            out = min(out, time.perf_counter() - start)
        return out

    jhat_step(), networks_step()  # trace outside the timings
    ours, nets = [], []
    for _ in range(4):
        ours.append(best(jhat_step, 3))
        nets.append(best(networks_step, 3))
    info = {
        "demonstrations": len(demos),
        "frames": int(len(frames)),
        "longest": int(batch.lengths.max()),
        "frames_mb": round(frames.nbytes / 2**20, 1),
        "jhat_step_ms": round(1e3 * min(ours), 1),
        "networks_ms": round(1e3 * min(nets), 1),
        "ratio": round(min(ours) / min(nets), 3),
        "max_rss_mb": round(_rss_mb()),
        "rss_growth_mb": round(_rss_mb() - rss_before),
        "threads": THREADS,
    }
    benchmark.extra_info.update(info)
    print(f"\n[jhat] {info}")
    benchmark.pedantic(jhat_step, rounds=3, iterations=1)
