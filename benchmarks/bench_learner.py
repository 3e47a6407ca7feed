"""Env steps per second of the SMDP Q-learning test-time learner on the paper's 40x40 four rooms.

Targets: >= 200,000 steps/s for one run (scalar engine) and >= 1,000,000 steps/s in aggregate when
the paper's protocol (24 test tasks x seeds) advances together (batch engine). Each benchmark stores
``env_steps``, ``steps_per_s`` (wall clock) and ``steps_per_cpu_s`` (process CPU time, which a
busy shared machine distorts less) in ``extra_info``.

    pytest benchmarks/bench_learner.py --benchmark-only
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from opt_suite.families.fourrooms import FourRooms, Params, Variation
from opt_suite.learners.base import LearnerRun
from opt_suite.learners.smdp_q import SMDPQLearning
from opt_suite.options import TabularOptionSet

FAMILY = FourRooms(Params())  # paper-40x40, slip 0.1, -1 per step, +10 at the goal
_, TEST_TASKS = FAMILY.make_tasks(Variation(), (), 30, 6, 24, seed=0)
EPISODES, MAX_STEPS = 100, 1000
LEARNER = SMDPQLearning(SMDPQLearning.Params())


def random_options(m: int = 4, seed: int = 0) -> TabularOptionSet:
    """m options that each follow a random fixed action per state and stop w.p. up to 0.2."""
    rng = np.random.default_rng(seed)
    S = FAMILY.tabular_model(TEST_TASKS[0]).num_states
    mu = np.eye(4)[rng.integers(4, size=(m, S))]
    return TabularOptionSet(mu, rng.uniform(0.0, 0.2, size=(m, S)))


OPTIONS = random_options()


def _bench(benchmark, runs: list[LearnerRun], rounds: int) -> None:
    cpu_seconds: list[float] = []

    def learn():
        start = (
            time.process_time()
        )  # the machine may be shared: CPU time shows the code's own speed
        logs = LEARNER.run(FAMILY, runs, OPTIONS, EPISODES, MAX_STEPS)
        cpu_seconds.append(time.process_time() - start)
        return logs

    logs = benchmark.pedantic(learn, rounds=rounds, iterations=1)
    steps = int(sum(log.steps.sum() for log in logs))
    rate, cpu_rate = steps / benchmark.stats.stats.mean, steps / np.mean(cpu_seconds)
    benchmark.extra_info.update(
        runs=len(runs), env_steps=steps, steps_per_s=round(rate), steps_per_cpu_s=round(cpu_rate)
    )
    print(
        f"\n{len(runs)} run(s): {steps} env steps, {rate:,.0f} steps/s ({cpu_rate:,.0f} per CPU s)"
    )


def test_bench_single_run(benchmark):
    """One (task, seed) run: 100 episodes, 4 options, scalar engine."""
    _bench(benchmark, [LearnerRun(TEST_TASKS[0], np.random.SeedSequence(0))], rounds=5)


@pytest.mark.parametrize("seeds", [5, 20])
def test_bench_aggregate(benchmark, seeds):
    """24 test tasks x seeds runs advanced together: 100 episodes each, 4 options."""
    runs = [LearnerRun(t, np.random.SeedSequence(s)) for t in TEST_TASKS for s in range(seeds)]
    _bench(benchmark, runs, rounds=2)
