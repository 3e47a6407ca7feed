"""How fast tabular task models and envs are built and stepped.

Downstream, 40x40 models are built for 30 tasks x seeds and a vectorised learner gathers from them,
so a model must build in well under a millisecond once its layout's table is cached, and the first
(cold) table build must stay in milliseconds.

    pytest benchmarks/bench_families.py -n 0 --benchmark-only
"""

from __future__ import annotations

import numpy as np
import pytest

from opt_suite.families.tabular import fourrooms
from opt_suite.families.tabular.chain import Chain
from opt_suite.families.tabular.fourrooms import FourRooms, Params, Variation

PAPER = FourRooms(Params())
TASKS = [t.params for t in sum(PAPER.make_tasks(Variation(), (), 30, 6, 24, seed=0), [])]


def test_bench_fourrooms_40x40_thirty_task_models(benchmark):
    """30 task models from the cached reward-independent table (the paper's task count)."""
    models = benchmark(lambda: [PAPER.tabular_model(t) for t in TASKS])
    assert len(models) == 30 and models[0].num_states == 1525


@pytest.mark.parametrize("dynamics", ["slip", "random-neighbour"])
def test_bench_fourrooms_40x40_cold_table(benchmark, dynamics):
    """One model with the table built from the layout (once per process per setting)."""

    def cold():
        fourrooms._dynamics.cache_clear()
        return FourRooms(Params(dynamics=dynamics)).tabular_model(TASKS[0])

    model = benchmark.pedantic(cold, rounds=20, iterations=1)
    assert model.prob.shape[:2] == (1525, 4)


def test_bench_fourrooms_env_steps(benchmark):
    """10,000 steps of a uniformly random policy in the raw (unwrapped) env."""
    env = PAPER.make_env(TASKS[0]).unwrapped
    actions = np.random.default_rng(0).integers(4, size=10_000)

    def run():
        env.reset(seed=0)
        for a in actions:
            if env.step(int(a))[2]:
                env.reset()

    benchmark.pedantic(run, rounds=5, iterations=1)


def test_bench_chain_models(benchmark):
    """100 Appendix D chain models (tables are per task: nothing to cache)."""
    chain = Chain()
    tasks = chain.sample_tasks(chain.Variation(), 100, np.random.default_rng(0))
    models = benchmark(lambda: [chain.tabular_model(t) for t in tasks])
    assert len(models) == 100
