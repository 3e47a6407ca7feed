"""P(X > Y)'s bootstrap interval on a pool baseline's size: ranks against every pair.

Setting: two method entries of 200 seeds x 6 test tasks (the field gate's pool), 2,000 bootstrap
resamples (``report.bootstrap``), as the leaderboard draws them for every entry against its
baseline (``stats.probability_of_improvement_ci``). The interval is timed with
``stats.per_task_probability_of_improvement`` as it is (from midranks) and with
``stats.every_pair_probability_of_improvement`` (the definition it replaced: every pair of runs
compared), in the same process, on the same draws.
``extra_info["pairs_over_ranks"]`` is the pairwise time over the ranks'. Target: at least
:data:`TARGET` (the pairs cost ``runs_x * runs_y`` per task and resample; a 200-seed baseline's
export spent most of its 8.7 minutes there).

    pytest benchmarks/bench_probability_of_improvement.py --benchmark-only

Measured figures: docs/performance.md (not copied here).
"""

from __future__ import annotations

import time

import numpy as np

from opt_suite import stats

SEEDS, TASKS, REPS = 200, 6, 2000
TARGET = 5.0


def _interval(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    return stats.probability_of_improvement_ci(x, y, REPS, np.random.default_rng(0))


def test_bench_probability_of_improvement_ranks_against_pairs(benchmark, monkeypatch):
    draw = np.random.default_rng(1)
    x, y = draw.normal(size=(SEEDS, TASKS)), draw.normal(0.1, 1.0, size=(SEEDS, TASKS))
    ranked = benchmark.pedantic(_interval, args=(x, y), rounds=1, iterations=1)
    ranks_s = benchmark.stats.stats.mean
    every_pair = stats.every_pair_probability_of_improvement
    monkeypatch.setattr(stats, "per_task_probability_of_improvement", every_pair)
    started = time.perf_counter()
    paired = _interval(x, y)
    pairs_s = time.perf_counter() - started
    assert paired == ranked  # the same draws give the same interval, to the bit
    ratio = pairs_s / ranks_s
    benchmark.extra_info.update(
        seeds=SEEDS,
        tasks=TASKS,
        resamples=REPS,
        ranks_s=round(ranks_s, 3),
        pairs_s=round(pairs_s, 3),
        pairs_over_ranks=round(ratio, 1),
        target=TARGET,
    )
    assert ratio >= TARGET, f"ranks only {ratio:.1f}x faster than every pair (target {TARGET})"
