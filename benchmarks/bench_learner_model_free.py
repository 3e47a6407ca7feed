"""Env steps per second of ``smdp_q_learning`` without a model (stepping FrozenLake) and with one.

Issue 28's goal: model-free SMDP Q-learning on FrozenLake >= 0.5x the steps/s of the model-based
engine on a four-rooms task of a similar size. One run each (the scalar engines: the model-free
learner steps one env per run), 4 random options, CPU time (the machine may be shared). The
numbers are measured in one process, after one warm-up run of each (imports, numba caches).

The floor this benchmark asserts is the one the learner controls: its steps/s at least half the
env's own raw ``env.step`` rate (the learner at most doubles the cost of a step). The issue's
0.5x-of-the-model-engine goal is reported (``ratio_to_model_engine``), not asserted: FrozenLake's
own step (gymnasium's ``categorical_sample``, a cumsum per step, plus the wrappers) runs at about
a third of the model engine's rate on its own, so no learner that steps it can reach 0.5x.

    pytest benchmarks/bench_learner_model_free.py --benchmark-only -s
"""

from __future__ import annotations

import time

import numpy as np

from opt_suite.families.base import Task
from opt_suite.families.gymnasium.family import Gymnasium
from opt_suite.families.gymnasium.family import Params as GymParams
from opt_suite.families.tabular.fourrooms import FourRooms, Params, Variation
from opt_suite.learners.base import LearnerContext, LearnerRun
from opt_suite.learners.smdp_q import SMDPQLearning
from opt_suite.options import TabularOptionSet
from opt_suite.params import FrozenDict

LEARNER = SMDPQLearning(SMDPQLearning.Params())
# Four rooms 13x13 (104 states) and FrozenLake 8x8 (64 states): the smallest four-rooms layout
# and the largest built-in lake map, both slippery.
ROOMS = FourRooms(Params(layout="sutton-13x13"))
ROOMS_TASK = ROOMS.make_tasks(Variation(), (), 2, 1, 1, seed=0)[1][0]
LAKE = Gymnasium(GymParams(id="FrozenLake-v1", kwargs=FrozenDict(map_name="8x8")))
LAKE_TASK = Task(f"{LAKE.instance_name}/test/0", "test", 0, LAKE.default_task())


def _options(num_states: int) -> TabularOptionSet:
    rng = np.random.default_rng(0)
    mu = np.eye(4)[rng.integers(4, size=(4, num_states))]
    return TabularOptionSet(mu, rng.uniform(0.0, 0.2, size=(4, num_states)))


def _steps_per_cpu_s(family, task, num_states, episodes) -> float:
    runs = [LearnerRun(task, np.random.SeedSequence(0))]
    start = time.process_time()
    logs = LEARNER.run(LearnerContext(family, runs, _options(num_states), episodes, 1000))
    return sum(int(log.steps.sum()) for log in logs) / (time.process_time() - start)


def _raw_env_steps_per_cpu_s(steps: int = 20_000) -> float:
    env = LAKE.make_env(LAKE_TASK)
    env.reset(seed=0)
    start = time.process_time()
    for i in range(steps):
        _, _, terminated, truncated, _ = env.step(i % 4)
        if terminated or truncated:
            env.reset()
    return steps / (time.process_time() - start)


def test_bench_model_free_vs_model_engine(benchmark):
    """smdp_q_learning steps/s: FrozenLake 8x8 stepped, four rooms 13x13 sampled from its model."""
    _steps_per_cpu_s(ROOMS, ROOMS_TASK, 104, 5)  # warm-up: imports and caches
    _steps_per_cpu_s(LAKE, LAKE_TASK, 64, 5)
    model = _steps_per_cpu_s(ROOMS, ROOMS_TASK, 104, 200)
    free = _steps_per_cpu_s(LAKE, LAKE_TASK, 64, 1000)
    raw = _raw_env_steps_per_cpu_s()
    info = {
        "model_engine_steps_per_cpu_s": round(model),
        "model_free_steps_per_cpu_s": round(free),
        "raw_env_steps_per_cpu_s": round(raw),
        "ratio_to_model_engine": round(free / model, 3),
        "ratio_to_raw_env": round(free / raw, 3),
    }
    benchmark.extra_info.update(info)
    print(f"\n[model-free vs model engine] {info}")
    assert info["ratio_to_raw_env"] >= 0.5, info
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
