"""PPO training cost: frames per CPU-second with a shared trunk against separate networks.

The experts (``opt_suite.agents.ppo.train``) spend their CPU in the emulator, in collecting (the
policy's action per batched step, through tf-agents' driver) and in PPO's update
(``agent.train``: epochs of forward + backward on the whole batch). Until the shared trunk
(:mod:`opt_suite.agents.shared_trunk`) the actor and the value were two networks, each with its
own convolutions, so every epoch ran two trunks. That configuration is still the default
(``network.shared: false``, "separate": the shared trunk learned worse on minatar-breakout, see
docs/networks.md) and is measured here against the opt-in ``network.shared: true`` ("shared": one
trunk, two heads, the A3C/PPO Atari network), rounds interleaved, all in one process, on

- Atari Breakout with the default ``PPOParams`` (8 envs x 128 steps, 4 epochs, the A3C network;
  frame skip 4), with ``update``: the best CPU-s of one update per network on one collected
  batch, and ``env``: the vector env alone (random actions), the floor of both variants;
- MinAtar Breakout with ``specs/minatar-breakout.yaml``'s expert (one 3x3 convolution, 8 envs x 64
  steps, 3 epochs), where the emulator is cheap and the per-step cost of acting dominates.

Measured and not kept (no gain): compiling the update without autograph (x1.01) or with XLA
(x0.62), commit 48db4b1; collecting with a Python loop over the py env and the policy's compiled
action instead of tf-agents' driver (x0.98 on Atari, x1.0 on MinAtar: a call of the collect
policy costs about 1.1 ms of CPU on one thread whatever the network's size).

CPU time is ``time.process_time()`` (all threads of the process; the machine is shared, so wall
time means little). TensorFlow runs on one thread, as in a run's workers (``runner/cells.py``).

    .venv/bin/python -m pytest benchmarks/bench_ppo.py --benchmark-only -s
"""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

# isort: off
import opt_suite  # noqa: F401  (sets TF_USE_LEGACY_KERAS first: tf-agents needs tf-keras)
import tensorflow as tf  # threads are set below, before anything initialises TensorFlow

# isort: on

tf.config.threading.set_intra_op_parallelism_threads(1)
tf.config.threading.set_inter_op_parallelism_threads(1)

from opt_suite.agents import ppo  # noqa: E402
from opt_suite.agents.environment import GymnasiumPyEnvironment  # noqa: E402
from opt_suite.agents.params import PPOParams  # noqa: E402
from opt_suite.families.atari import Atari, TaskParams  # noqa: E402
from opt_suite.params import FrozenDict  # noqa: E402

FAMILY = Atari(Atari.Params(game="breakout"))
TASK = TaskParams(start_actions=1, reward_scale=1.0, frame_skip=4)
SEPARATE = PPOParams()  # the default
ITERATIONS = int(os.environ.get("OPT_SUITE_BENCH_PPO_ITERATIONS", "3"))
ROUNDS = 2


def _agent(py_env: GymnasiumPyEnvironment, params: PPOParams):
    return ppo.build_agent(py_env.time_step_spec(), py_env.action_spec(), params, seed=0)


def _network(params: PPOParams, shared: bool) -> PPOParams:
    """``params`` with a shared trunk or separate networks."""
    return dataclasses.replace(params, network=dataclasses.replace(params.network, shared=shared))


SHARED = _network(SEPARATE, True)


def training_frames_per_cpu_s(family: Any, task: Any, params: PPOParams) -> float:
    """Frames per CPU-s of ``ppo.train`` past its first iteration (which traces the graphs)."""
    py_env = GymnasiumPyEnvironment(family.make_vector_env(task, params.num_envs), seed=0)
    agent = _agent(py_env, params)
    marks: list[tuple[float, int]] = []

    def progress(log: ppo.TrainingLog) -> None:
        marks.append((time.process_time(), log.frames))

    skip = getattr(task, "frame_skip", 1)
    frames = params.num_envs * params.steps_per_iteration * skip * (ITERATIONS + 1)
    ppo.train(py_env, agent, params, frames - 1, progress)
    py_env.close()
    (first_cpu, first_frames), (last_cpu, last_frames) = marks[0], marks[-1]
    return (last_frames - first_frames) / (last_cpu - first_cpu)


def variants_frames_per_cpu_s(family: Any, task: Any, params: PPOParams) -> dict[str, float]:
    """Best frames per CPU-s of ``separate`` and ``shared`` networks, interleaved rounds."""
    variants = {"separate": _network(params, False), "shared": _network(params, True)}
    best = dict.fromkeys(variants, 0.0)
    for _ in range(ROUNDS):  # interleaved: a slow spell of the machine hits both
        for name, variant in variants.items():
            best[name] = max(best[name], training_frames_per_cpu_s(family, task, variant))
    return best


def env_frames_per_cpu_s(steps: int = 256) -> float:
    """Frames per CPU-s of the experts' vector env stepping random actions."""
    env = FAMILY.make_vector_env(TASK, SEPARATE.num_envs)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    start = time.process_time()
    for _ in range(steps):
        env.step(rng.integers(env.single_action_space.n, size=SEPARATE.num_envs))
    cpu = time.process_time() - start
    env.close()
    return steps * SEPARATE.num_envs * TASK.frame_skip / cpu


def update_cpu_s() -> dict[str, float]:
    """Best CPU-s of one update per variant, interleaved rounds on one collected batch."""
    from tf_agents.drivers import dynamic_step_driver
    from tf_agents.environments import tf_py_environment
    from tf_agents.replay_buffers import tf_uniform_replay_buffer
    from tf_agents.utils import common

    py_env = GymnasiumPyEnvironment(FAMILY.make_vector_env(TASK, SEPARATE.num_envs), seed=0)
    tf_env = tf_py_environment.TFPyEnvironment(py_env)
    agents = {"shared": _agent(py_env, SHARED), "separate": _agent(py_env, SEPARATE)}
    collector = agents["separate"]
    buffer = tf_uniform_replay_buffer.TFUniformReplayBuffer(
        collector.collect_data_spec,
        batch_size=tf_env.batch_size,
        max_length=SEPARATE.steps_per_iteration,
    )
    driver = dynamic_step_driver.DynamicStepDriver(
        tf_env,
        collector.collect_policy,
        observers=[buffer.add_batch],
        num_steps=tf_env.batch_size * SEPARATE.steps_per_iteration,
    )
    common.function(driver.run)(time_step=tf_env.reset())
    batch = buffer.gather_all()
    py_env.close()
    steps = {name: common.function(agent.train) for name, agent in agents.items()}
    for step in steps.values():
        step(batch)  # trace outside the timing
    best = dict.fromkeys(steps, float("inf"))
    for _ in range(ROUNDS + 1):
        for name, step in steps.items():
            start = time.process_time()
            step(batch)
            best[name] = min(best[name], time.process_time() - start)
    return best


def minatar() -> tuple[Any, Any, PPOParams]:
    """MinAtar Breakout (sticky actions off), one task, the minatar-breakout spec's expert PPO."""
    from opt_suite.families.gymnasium_family import Gymnasium, Params
    from opt_suite.families.gymnasium_family import TaskParams as GymnasiumTask
    from opt_suite.spec.load import load_sweep

    spec = load_sweep(Path(__file__).parent.parent / "specs" / "minatar-breakout.yaml").base
    family = Gymnasium(Params(id="MinAtar/Breakout-v1", kwargs=FrozenDict(sticky_action_prob=0.0)))
    return family, GymnasiumTask(start_actions=1, frame_skip=1), spec.demonstrations.params.ppo


def test_bench_ppo_training(benchmark):
    """Frames per CPU-second of PPO training, shared trunk vs separate networks, in one process."""
    results: dict[str, float] = {}

    def measure() -> None:
        for prefix, (family, task, params) in {
            "atari": (FAMILY, TASK, SEPARATE),
            "minatar": minatar(),
        }.items():
            found = variants_frames_per_cpu_s(family, task, params)
            results.update({f"{prefix}_{k}": v for k, v in found.items()})
        results.update({f"update_{k}_cpu_s": v for k, v in update_cpu_s().items()})
        results["env"] = env_frames_per_cpu_s()

    benchmark.pedantic(measure, rounds=1, iterations=1)
    for prefix in ("atari", "minatar"):
        separate = results[f"{prefix}_separate"]
        results[f"{prefix}_speedup"] = results[f"{prefix}_shared"] / separate
    results["update_speedup"] = results["update_separate_cpu_s"] / results["update_shared_cpu_s"]
    benchmark.extra_info.update({k: round(v, 3) for k, v in results.items()})
    r = results
    print(
        f"\nPPO training, frames/CPU-s, shared trunk vs separate networks (the default): "
        f"Atari Breakout {r['atari_shared']:,.0f} vs {r['atari_separate']:,.0f} "
        f"(x{r['atari_speedup']:.2f}); MinAtar Breakout (the spec's expert) "
        f"{r['minatar_shared']:,.0f} vs {r['minatar_separate']:,.0f} "
        f"(x{r['minatar_speedup']:.2f}). One Atari update "
        f"{r['update_shared_cpu_s']:.2f} vs {r['update_separate_cpu_s']:.2f} CPU-s "
        f"(x{r['update_speedup']:.2f}); the Atari env alone {r['env']:,.0f} frames/CPU-s"
    )
    assert all(np.isfinite(v) and v > 0 for v in results.values())
