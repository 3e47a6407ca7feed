"""What the Atari stages cost per emulator frame, and what the paper-scale specs cost in all.

    .venv/bin/python benchmarks/atari_cost.py [--game breakout] [--seconds 20]

Measures, on this machine, in one process (one core's worth of work; the machine's load is printed
because the figures scale with it):

1. the env with random actions: one ``AtariTaskEnv``, 8 in ``make_vector_env`` (SyncVectorEnv, the
   experts') and 8 in ``make_env_batch`` (``AtariThreadBatch``, the test-time learner's: one C++
   thread per sub-env, so its figures use more than one core);
2. ale-py's ``AtariVectorEnv`` with 8 envs and one thread, same frame skip, for reference;
3. PPO expert training (the default ``PPOParams``: 8 envs x 128 steps, 4 epochs, A3C's network);
4. demonstration sampling from that expert (one policy call per step);

then projects the wall time of a spec's expert stage (``frames`` per train task x train tasks)
on 2 cores and on a 32-core Ray cluster (one expert per core: experts are independent cells).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np


def _rate(step, seconds: float) -> tuple[float, float]:
    """Frames per wall second and per CPU second of ``step()`` (returns its frames), warmed up.

    CPU seconds are this process's (all its threads): on a shared machine they say what the
    work costs, wall seconds say what it took under the load at the time.
    """
    step()
    frames, start, cpu = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - start < seconds:
        frames += step()
    return frames / (time.perf_counter() - start), frames / (time.process_time() - cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="breakout")
    parser.add_argument("--frame-skip", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()

    from ale_py.vector_env import AtariVectorEnv

    from opt_suite.families.atari.family import Atari, Params, TaskParams
    from opt_suite.families.env_batch import step_rows

    family = Atari(Params(game=args.game))
    task = TaskParams(start_actions=10, reward_scale=1.0, frame_skip=args.frame_skip)
    rng = np.random.default_rng(0)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; game {args.game}")

    env = family.make_env(task)
    env.reset(seed=0)

    def single() -> int:
        _, _, terminated, truncated, info = env.step(int(rng.integers(env.action_space.n)))
        frames = info["frames"]
        if terminated or truncated:
            frames += env.reset()[1]["frames"]
        return frames

    vector = family.make_vector_env(task, 8)
    vector.reset(seed=0)

    def batched() -> int:
        info = vector.step(rng.integers(vector.single_action_space.n, size=8))[-1]
        return int(np.asarray(info["frames"]).sum())

    ale = AtariVectorEnv(
        args.game,
        8,
        num_threads=1,
        frameskip=args.frame_skip,
        stack_num=2,
        reward_clipping=False,
        repeat_action_probability=0.0,
    )
    ale.reset(seed=0)

    def raw() -> int:
        ale.step(rng.integers(ale.single_action_space.n, size=8))
        return 8 * args.frame_skip

    threads = family.make_env_batch(task, 8, max_steps=10**9)
    for i in range(8):
        threads.reset_at(i, i)
    rows = np.arange(8)

    def threaded() -> int:
        step = step_rows(threads, rows, rng.integers(threads.single_action_space.n, size=8))
        frames = int(step.frames.sum())
        for i in rows[step.terminated | step.truncated]:
            frames += threads.reset_at(int(i), None)[1]
        return frames

    rates = {
        "env, 1": _rate(single, args.seconds),
        "env, 8 (SyncVectorEnv)": _rate(batched, args.seconds),
        "env, 8 (AtariThreadBatch)": _rate(threaded, args.seconds),
        "AtariVectorEnv, 8, 1 thread": _rate(raw, args.seconds),
    }
    threads.close()

    from opt_suite.agents import ppo
    from opt_suite.agents.environment import GymnasiumPyEnvironment
    from opt_suite.agents.expert import TrainedExpert
    from opt_suite.agents.params import PPOParams
    from opt_suite.demonstrations.agent_sampling import sample_demonstration
    from opt_suite.families.base import Task

    params = PPOParams()
    py_env = GymnasiumPyEnvironment(family.make_vector_env(task, params.num_envs), seed=0)
    agent = ppo.build_agent(py_env.time_step_spec(), py_env.action_spec(), params, seed=0)
    iteration = params.num_envs * params.steps_per_iteration * args.frame_skip
    ppo.train(py_env, agent, params, 1, seed=0)  # one iteration: tracing and warm-up
    start, cpu = time.perf_counter(), time.process_time()
    log = ppo.train(py_env, agent, params, max(iteration, int(args.seconds * 300)), seed=0)
    rates["PPO training (expert)"] = (
        log.frames / (time.perf_counter() - start),
        log.frames / (time.process_time() - cpu),
    )

    expert = TrainedExpert(agent.actor_net, "", 0, np.zeros(0))
    task_obj = Task("bench/train/0", "train", 0, task)

    def demonstration() -> int:
        trajectory, _ = sample_demonstration(family, task_obj, expert, rng, 2000)
        return len(trajectory) * args.frame_skip

    rates["demonstration sampling"] = _rate(demonstration, args.seconds)

    print(f"{'':32s} {'frames/s':>10s} {'frames/CPU-s':>13s}")
    for name, (wall, cpu) in rates.items():
        print(f"{name:32s} {wall:10.0f} {cpu:13.0f}")
    per_cpu = rates["PPO training (expert)"][1]
    for frames_per_task, tasks in ((10_000_000, 3),):
        core_hours = frames_per_task * tasks / per_cpu / 3600
        # 2 cores: two experts at a time. Ray: every expert on its own core at once (one
        # expert's acting and its small networks use about one core).
        two_cores = np.ceil(tasks / 2) * frames_per_task / per_cpu / 3600
        cluster = frames_per_task / per_cpu / 3600
        print(
            f"experts, {tasks} tasks x {frames_per_task:,} frames: {core_hours:.1f} core-hours; "
            f"{two_cores:.1f} h on 2 cores; {cluster:.1f} h on a 32-core Ray cluster"
        )


if __name__ == "__main__":
    main()
