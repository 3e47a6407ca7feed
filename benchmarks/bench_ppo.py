"""PPO training cost: frames per CPU-second of today's acting and networks against the earlier ones.

The experts (``opt_suite.agents.ppo.train``) and the ``tf_agents`` learner spend their CPU in the
emulator, in acting (the policy's action per batched step) and in PPO's update (``agent.train``:
epochs of forward + backward on the whole batch). Three variants, rounds interleaved, all in one
process:

- ``driver``: the configuration before NumPy acting, kept here as the reference — tf-agents'
  collect policy (a TensorFlow call per step) through its ``DynamicStepDriver`` into a replay
  buffer, separate actor and value networks (:func:`train_with_driver`, the loop ``ppo.train``
  was until then);
- ``numpy``: today's default — ``ppo.train``, acting with the actor's forward pass in NumPy
  (:mod:`opt_suite.agents.acting`), separate networks;
- ``shared``: ``ppo.train`` with the opt-in shared trunk (``network.shared: true``: one trunk,
  two heads, the A3C/PPO Atari network; it learned worse on minatar-breakout, docs/networks.md).

on

- Atari Breakout with the default ``PPOParams`` (8 envs x 128 steps, 4 epochs, the A3C network;
  frame skip 4), with ``update``: the best CPU-s of one update per network on one collected
  batch, and ``env``: the vector env alone (random actions), the floor of every variant;
- MinAtar Breakout with ``specs/minatar-breakout.yaml``'s expert (one 3x3 convolution, 8 envs x 64
  steps, 3 epochs), where the emulator is cheap and the per-step cost of acting is large.

Measured and not kept (no gain): compiling the update without autograph (x1.01) or with XLA
(x0.62), commit 48db4b1; collecting with a Python loop over the py env and the policy's compiled
action instead of tf-agents' driver (x0.98 on Atari, x1.0 on MinAtar: a call of the collect
policy costs about 1.1 ms of CPU on one thread whatever the network's size — hence NumPy).

CPU time is ``time.process_time()`` (all threads of the process; the machine is shared, so wall
time means little). TensorFlow runs on one thread, as in a run's workers (``runner/cells.py``).

    .venv/bin/python -m pytest benchmarks/bench_ppo.py -n 0 --benchmark-only -s
"""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as in a run's workers; read when NumPy loads

import numpy as np  # noqa: E402

# isort: off
import opt_suite  # noqa: F401  (sets TF_USE_LEGACY_KERAS first: tf-agents needs tf-keras)
import tensorflow as tf  # threads are set below, before anything initialises TensorFlow

# isort: on

tf.config.threading.set_intra_op_parallelism_threads(1)
tf.config.threading.set_inter_op_parallelism_threads(1)

from opt_suite.agents import ppo  # noqa: E402
from opt_suite.agents.environment import GymnasiumPyEnvironment  # noqa: E402
from opt_suite.agents.params import PPOParams  # noqa: E402
from opt_suite.families.atari.family import Atari, TaskParams  # noqa: E402
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


def train_with_driver(
    py_env: GymnasiumPyEnvironment, agent: Any, params: PPOParams, frames: int, progress: Any
) -> None:
    """The earlier ``ppo.train``: tf-agents' collect policy and driver, a replay buffer."""
    from tf_agents.drivers import dynamic_step_driver
    from tf_agents.environments import tf_py_environment
    from tf_agents.replay_buffers import tf_uniform_replay_buffer
    from tf_agents.utils import common

    tf_env = tf_py_environment.TFPyEnvironment(py_env)
    buffer = tf_uniform_replay_buffer.TFUniformReplayBuffer(
        agent.collect_data_spec, batch_size=tf_env.batch_size, max_length=params.steps_per_iteration
    )
    driver = dynamic_step_driver.DynamicStepDriver(
        tf_env,
        agent.collect_policy,
        observers=[buffer.add_batch],
        num_steps=tf_env.batch_size * params.steps_per_iteration,
    )
    collect, update = common.function(driver.run), common.function(agent.train)
    log = ppo.TrainingLog()
    start = py_env.frames
    time_step = tf_env.reset()
    policy_state = agent.collect_policy.get_initial_state(tf_env.batch_size)
    while py_env.frames - start < frames:
        buffer.clear()
        time_step, policy_state = collect(time_step=time_step, policy_state=policy_state)
        update(buffer.gather_all())
        log.frames = py_env.frames - start
        progress(log)


def _train_numpy(py_env, agent, params, frames, progress) -> None:
    ppo.train(py_env, agent, params, frames, progress, seed=0)


def training_frames_per_cpu_s(family: Any, task: Any, params: PPOParams, trainer: Any) -> float:
    """Frames per CPU-s of ``trainer`` past its first iteration (which traces the graphs)."""
    py_env = GymnasiumPyEnvironment(family.make_vector_env(task, params.num_envs), seed=0)
    agent = _agent(py_env, params)
    marks: list[tuple[float, int]] = []

    def progress(log: ppo.TrainingLog) -> None:
        marks.append((time.process_time(), log.frames))

    skip = getattr(task, "frame_skip", 1)
    frames = params.num_envs * params.steps_per_iteration * skip * (ITERATIONS + 1)
    trainer(py_env, agent, params, frames - 1, progress)
    py_env.close()
    (first_cpu, first_frames), (last_cpu, last_frames) = marks[0], marks[-1]
    return (last_frames - first_frames) / (last_cpu - first_cpu)


def variants_frames_per_cpu_s(family: Any, task: Any, params: PPOParams) -> dict[str, float]:
    """Best frames per CPU-s of each variant (see the module doc), interleaved rounds."""
    variants = {
        "driver": (_network(params, False), train_with_driver),
        "numpy": (_network(params, False), _train_numpy),
        "shared": (_network(params, True), _train_numpy),
    }
    best = dict.fromkeys(variants, 0.0)
    for _ in range(ROUNDS):  # interleaved: a slow spell of the machine hits every variant
        for name, (variant, trainer) in variants.items():
            found = training_frames_per_cpu_s(family, task, variant, trainer)
            best[name] = max(best[name], found)
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
    from opt_suite.families.gymnasium.family import Gymnasium, Params
    from opt_suite.families.gymnasium.family import TaskParams as GymnasiumTask
    from opt_suite.spec.load import load_sweep

    spec = load_sweep(Path(__file__).parent.parent / "specs" / "minatar-breakout.yaml").base
    family = Gymnasium(Params(id="MinAtar/Breakout-v1", kwargs=FrozenDict(sticky_action_prob=0.0)))
    return family, GymnasiumTask(start_actions=1, frame_skip=1), spec.demonstrations.params.ppo


def test_bench_ppo_training(benchmark):
    """Frames per CPU-second of PPO training: driver, NumPy acting, NumPy acting + shared trunk."""
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
        for name in ("numpy", "shared"):
            ratio = results[f"{prefix}_{name}"] / results[f"{prefix}_driver"]
            results[f"{prefix}_{name}_speedup"] = ratio
    results["update_speedup"] = results["update_separate_cpu_s"] / results["update_shared_cpu_s"]
    benchmark.extra_info.update({k: round(v, 3) for k, v in results.items()})
    r = results
    print("\nPPO training, frames/CPU-s (driver: tf-agents' collect policy and driver, before)")
    for prefix, name in (("atari", "Atari Breakout"), ("minatar", "MinAtar Breakout")):
        print(
            f"  {name}: driver {r[prefix + '_driver']:,.0f}; numpy acting (the default) "
            f"{r[prefix + '_numpy']:,.0f} (x{r[prefix + '_numpy_speedup']:.2f}); numpy acting and "
            f"the shared trunk {r[prefix + '_shared']:,.0f} (x{r[prefix + '_shared_speedup']:.2f})"
        )
    print(
        f"  One Atari update: shared {r['update_shared_cpu_s']:.2f} vs separate "
        f"{r['update_separate_cpu_s']:.2f} CPU-s (x{r['update_speedup']:.2f}); the Atari env "
        f"alone {r['env']:,.0f} frames/CPU-s"
    )
    assert all(np.isfinite(v) and v > 0 for v in results.values())
