"""Tabular option-critic learner throughput: env steps per second on one core.

Target (issue 5): >= 100,000 env steps/s (the authors' code is pure per-step Python). Measured on
the original four-rooms setting (the family of ``specs/option-critic-sutton.yaml``: 13x13,
random-neighbour moves, 4 options) with a fixed interaction budget, after one warm-up call that
compiles the loop (numba caches it on disk, so only a fresh checkout pays the compile once).

Run: ``.venv/bin/pytest benchmarks/bench_option_critic.py -n 0 --benchmark-only``; the rate is in
``extra_info["env_steps_per_s"]``.
"""

from __future__ import annotations

import numpy as np
import pytest

from baselines.option_critic import OptionCritic, OptionCriticParams
from opt_suite.families.base import Task
from opt_suite.families.tabular.fourrooms import FourRooms, Params, TaskParams
from opt_suite.methods.base import DiscoveryContext

BUDGET = 2_000_000


def _context(layout: str, budget: int) -> DiscoveryContext:
    family = FourRooms(
        Params(layout=layout, dynamics="random-neighbour", step_reward=0.0, goal_reward=1.0)
    )
    goal = dict(family.layout.hallways)["east"]
    tasks = [Task("bench/train/0", "train", 0, TaskParams((1, 1), goal))]
    return DiscoveryContext(family, tasks, (), budget, np.random.SeedSequence(0))


@pytest.mark.parametrize("layout", ["sutton-13x13", "paper-40x40"])
def test_option_critic_env_steps_per_second(benchmark, layout):
    method = OptionCritic(OptionCriticParams(random_starts=True))
    context = _context(layout, BUDGET)
    method.discover(_context(layout, 1000))  # compile (or load the cached compile) once

    found = benchmark.pedantic(method.discover, args=(context,), rounds=5, iterations=1)
    steps = found.info["env_steps"]
    assert steps == BUDGET
    rate = steps / benchmark.stats.stats.mean
    benchmark.extra_info["env_steps"] = steps
    benchmark.extra_info["env_steps_per_s"] = round(rate)
    benchmark.extra_info["target_env_steps_per_s"] = 100_000
    print(f"\noption-critic {layout}: {rate:,.0f} env steps/s (target 100,000)")
