"""SMDP Q-learning for a cell's many runs: each run, in turn, through the one compiled loop.

Every run owns its generator and its Q table, so its numbers depend only on its own seed: the runs
of a cell go one after the other through :class:`~.smdp_scalar.ScalarRun` (the compiled loop of
:mod:`.smdp_kernel`), the same path a single run and the counting of option usage take. This
replaced a numpy engine that advanced all runs together and handed the last few to a Python loop:
compiled, one run's step costs less than a numpy iteration spread over many runs
(``benchmarks/bench_learner.py``), and one loop cannot drift from another.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from opt_suite.learners.smdp_scalar import ScalarOptions, ScalarRun, ScalarTables
from opt_suite.learners.smdp_tables import Hyper, OptionTables, TaskTables

__all__ = ["HANDOFF_RUNS", "run_batch"]

HANDOFF_RUNS = 40
"""The batch size from which the numpy engine this module had ran its runs together (tests that
exercised it still build batches above it); ``run_batch`` accepts ``handoff`` for them and
ignores it: every run takes the same compiled loop."""


def run_batch(
    tasks: TaskTables,
    run_tasks: Sequence[int],
    options: OptionTables,
    hyper: Hyper,
    rngs: Sequence[np.random.Generator],
    episodes: int,
    handoff: int = HANDOFF_RUNS,
) -> tuple[np.ndarray, np.ndarray]:
    """Run ``len(rngs)`` independent learners: run i on task ``run_tasks[i]``, drawing from rngs[i].

    Args:
      tasks: the stacked task models.
      run_tasks: int [R], each run's task index into ``tasks``.
      options: primitives + options.
      hyper: the learner's numbers.
      rngs: one generator per run, its only source of randomness.
      episodes: episodes per run.
      handoff: ignored (see :data:`HANDOFF_RUNS`).

    Returns:
      (returns float [R, episodes], steps int [R, episodes]).
    """
    del handoff  # every run takes the one compiled loop
    returns = np.zeros((len(rngs), episodes))
    steps = np.zeros((len(rngs), episodes), dtype=np.int64)
    option_arrays = ScalarOptions.build(options)
    tables: dict[int, ScalarTables] = {}
    for r, (task, rng) in enumerate(zip(run_tasks, rngs, strict=True)):
        if task not in tables:
            tables[task] = ScalarTables.build(tasks, int(task), option_arrays)
        run = ScalarRun(tables[task], hyper, rng)
        run.run_episodes(episodes)
        returns[r], steps[r] = run.returns, run.steps
    return returns, steps
