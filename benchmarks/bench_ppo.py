"""PPO training cost on Atari: frames per CPU-second, where the CPU goes, compiled-step variants.

The experts (``opt_suite.agents.ppo.train``) and the ``tf_agents`` learner spend their CPU in two
places: the emulator (our bit-exact Atari preprocessing, stepped by a ``SyncVectorEnv``) and PPO's
update (``agent.train``: 4 epochs of forward + backward of the actor and the value networks on
the whole 8 x 128 batch). This benchmark measures, in one process on Breakout with the default
``PPOParams`` (8 envs x 128 steps, 4 epochs, the A3C network; frame skip 4):

- ``train``: emulator frames per CPU-second of whole PPO iterations (collect + update) as the
  experts run them today (``ppo.train``'s compiled driver and ``common.function(agent.train)``);
- ``env``: frames per CPU-second of the vector env alone (random actions), the floor of any
  variant that keeps the emulator;
- ``update``: CPU-seconds of one update on the same batch, compiled three ways, in interleaved
  rounds: ``autograph`` (today: ``common.function``), ``graph`` (``tf.function(autograph=False)``,
  the learner's) and ``xla`` (``jit_compile=True``).

CPU time is ``time.process_time()`` (all threads of the process; the machine is shared, so wall
time means little). TensorFlow runs on one thread, as in a run's workers (``runner/cells.py``).

    .venv/bin/python -m pytest benchmarks/bench_ppo.py --benchmark-only -s
"""

from __future__ import annotations

import os
import time

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

FAMILY = Atari(Atari.Params(game="breakout"))
TASK = TaskParams(start_actions=1, reward_scale=1.0, frame_skip=4)
PARAMS = PPOParams()
ITERATIONS = int(os.environ.get("OPT_SUITE_BENCH_PPO_ITERATIONS", "3"))
ROUNDS = 3


def _agent(py_env: GymnasiumPyEnvironment):
    return ppo.build_agent(py_env.time_step_spec(), py_env.action_spec(), PARAMS, seed=0)


def training_frames_per_cpu_s() -> tuple[float, float]:
    """(frames per CPU-s of ``ppo.train`` past its first iteration, CPU-s of that first one)."""
    py_env = GymnasiumPyEnvironment(FAMILY.make_vector_env(TASK, PARAMS.num_envs), seed=0)
    agent = _agent(py_env)
    marks: list[tuple[float, int]] = []

    def progress(log: ppo.TrainingLog) -> None:
        marks.append((time.process_time(), log.frames))

    start = time.process_time()
    frames = PARAMS.num_envs * PARAMS.steps_per_iteration * TASK.frame_skip * (ITERATIONS + 1)
    ppo.train(py_env, agent, PARAMS, frames - 1, progress)
    py_env.close()
    (first_cpu, first_frames), (last_cpu, last_frames) = marks[0], marks[-1]
    return (last_frames - first_frames) / (last_cpu - first_cpu), first_cpu - start


def env_frames_per_cpu_s(steps: int = 256) -> float:
    """Frames per CPU-s of the experts' vector env stepping random actions."""
    env = FAMILY.make_vector_env(TASK, PARAMS.num_envs)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    start = time.process_time()
    for _ in range(steps):
        env.step(rng.integers(env.single_action_space.n, size=PARAMS.num_envs))
    cpu = time.process_time() - start
    env.close()
    return steps * PARAMS.num_envs * TASK.frame_skip / cpu


def update_cpu_s() -> dict[str, float]:
    """Best CPU-s of one update per compilation, interleaved rounds on one collected batch."""
    from tf_agents.drivers import dynamic_step_driver
    from tf_agents.environments import tf_py_environment
    from tf_agents.replay_buffers import tf_uniform_replay_buffer
    from tf_agents.utils import common

    py_env = GymnasiumPyEnvironment(FAMILY.make_vector_env(TASK, PARAMS.num_envs), seed=0)
    tf_env = tf_py_environment.TFPyEnvironment(py_env)
    agents = {name: _agent(py_env) for name in ("autograph", "graph", "xla")}
    collector = agents["autograph"]
    buffer = tf_uniform_replay_buffer.TFUniformReplayBuffer(
        collector.collect_data_spec,
        batch_size=tf_env.batch_size,
        max_length=PARAMS.steps_per_iteration,
    )
    driver = dynamic_step_driver.DynamicStepDriver(
        tf_env,
        collector.collect_policy,
        observers=[buffer.add_batch],
        num_steps=tf_env.batch_size * PARAMS.steps_per_iteration,
    )
    common.function(driver.run)(time_step=tf_env.reset())
    batch = buffer.gather_all()
    py_env.close()
    steps = {
        "autograph": common.function(agents["autograph"].train),
        "graph": tf.function(agents["graph"].train, autograph=False),
        "xla": tf.function(agents["xla"].train, autograph=False, jit_compile=True),
    }
    for step in steps.values():
        step(batch)  # trace (and compile) outside the timing
    best = dict.fromkeys(steps, float("inf"))
    for _ in range(ROUNDS):
        for name, step in steps.items():
            start = time.process_time()
            step(batch)
            best[name] = min(best[name], time.process_time() - start)
    return best


def test_bench_ppo_training(benchmark):
    """Frames per CPU-second of PPO training and its parts, all measured in this one process."""
    results: dict[str, float] = {}

    def measure() -> None:
        results["train"], results["first_iteration_cpu_s"] = training_frames_per_cpu_s()
        results["env"] = env_frames_per_cpu_s()
        results.update({f"update_{k}_cpu_s": v for k, v in update_cpu_s().items()})

    benchmark.pedantic(measure, rounds=1, iterations=1)
    frames = PARAMS.num_envs * PARAMS.steps_per_iteration * TASK.frame_skip
    update = results["update_autograph_cpu_s"]
    results["update_share"] = update * results["train"] / frames
    for name in ("graph", "xla"):
        results[f"update_{name}_speedup"] = update / results[f"update_{name}_cpu_s"]
    benchmark.extra_info.update({k: round(v, 3) for k, v in results.items()})
    print(
        f"\nPPO training: {results['train']:,.0f} frames/CPU-s "
        f"({1000 / results['train']:.2f} ms per frame); env alone {results['env']:,.0f} "
        f"frames/CPU-s; one update {update:.2f} CPU-s = {results['update_share']:.0%} of an "
        f"iteration; update compiled without autograph x{results['update_graph_speedup']:.2f}, "
        f"with XLA x{results['update_xla_speedup']:.2f}"
    )
    assert results["train"] > 0 and np.isfinite(results["update_share"])
