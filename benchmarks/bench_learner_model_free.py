"""Env steps per second of ``smdp_q_learning`` without a model (stepping FrozenLake) and with one.

Issue 28's goal: model-free SMDP Q-learning on FrozenLake >= 0.5x the steps/s of the model-based
engine on a four-rooms task of a similar size. One run each (the scalar engines: the model-free
learner steps one env per run), 4 random options, CPU time (the machine may be shared). The
numbers are measured in one process, after one warm-up run of each (imports, numba caches).

Measured (best of 4, two cores shared with another job, so +-15% between runs), per CPU second:

    steps per CPU second                    before (main)   after
    model engine, four rooms 13x13          443k-503k       487k-505k
    model-free, FrozenLake 8x8              101k-116k       116k-125k
    raw ``env.step`` of ``make_env``'s env  147k            154k-167k
    FrozenLake's own step, unwrapped        190k-195k       193k-202k (not our code)
    model-free / model engine               0.23            0.24-0.25

Where a model-free step's ~8 us go (process time per step, layer by layer): FrozenLake's own
``step`` ~5.0 us (gymnasium's ``categorical_sample``: a list, ``np.asarray``, ``cumsum`` and
``argmax`` per step), gymnasium's ``TimeLimit`` + ``OrderEnforcing`` around it ~0.35 us, the
family's ``GymnasiumTaskEnv`` ~0.4-0.8 us (observations passed through without a call when
they need no adapting; a separate one-frame path beside the frame-skip loop measured no gain in
the ratio, 0.242 with and without, and was dropped), the outer
``OrderEnforcing`` + ``PassiveEnvChecker`` ~0.3 us, the learner's loop ~1.5-1.9 us.

So the issue's 0.5x is out of reach of any learner that steps the env: FrozenLake's own step,
with no wrapper and no learner, runs at about 0.4x of the model engine
(``ceiling_ratio_to_model_engine``). The ratio is reported, not asserted. The floor asserted is the
one the learner controls: its steps/s at least 0.6 of the raw ``env.step`` rate (the learner adds
at most two thirds of a step's cost; measured ~0.75).

FrozenLake does publish its exact model (``env.unwrapped.P``), but the family's task variations
do not fit a ``TabularModel`` (random start actions give a start distribution, not one state;
episodes are cut at a number of frames), so the gymnasium family keeps stepping the env.

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
    """The family's env as the learner steps it (gymnasium's wrappers and the family's)."""
    return _env_steps_per_cpu_s(LAKE.make_env(LAKE_TASK), steps)


def _bare_env_steps_per_cpu_s(steps: int = 20_000) -> float:
    """FrozenLake's own ``step``, without gymnasium's wrappers or the family's: the ceiling."""
    return _env_steps_per_cpu_s(LAKE.make_env(LAKE_TASK).unwrapped.inner, steps)


def _env_steps_per_cpu_s(env, steps: int) -> float:
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
    bare = _bare_env_steps_per_cpu_s()
    info = {
        "model_engine_steps_per_cpu_s": round(model),
        "model_free_steps_per_cpu_s": round(free),
        "raw_env_steps_per_cpu_s": round(raw),
        "bare_frozenlake_steps_per_cpu_s": round(bare),
        "ratio_to_model_engine": round(free / model, 3),
        "ratio_to_raw_env": round(free / raw, 3),
        "ceiling_ratio_to_model_engine": round(bare / model, 3),
    }
    benchmark.extra_info.update(info)
    print(f"\n[model-free vs model engine] {info}")
    assert info["ratio_to_raw_env"] >= 0.6, info
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
