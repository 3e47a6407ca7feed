"""How long the report's statistics added for issue 25 take on a run of fourrooms-paper's size.

fourrooms-paper: 6 method entries x 5 seeds x 24 test tasks x 200 episodes, 2,000 bootstrap
resamples per interval (``report.bootstrap``). Synthetic episodes of that shape (running the spec
costs minutes); the statistics depend on the shape only. Target: <= 2 s for the new statistics
together, which are, per method entry:

- the task-bootstrap interval of the IQM of each of the 5 metrics;
- the jump_start and improvement estimates' stratified (seed) intervals;
- against the baseline entry: P(X > Y)'s task interval, and the paired P with both intervals, on
  each metric;
- with reference returns: the normalised return metrics' estimates (IQM and both intervals).

    pytest benchmarks/bench_report_statistics.py --benchmark-only
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from report_fakes import linear_table  # noqa: E402

from opt_suite import stats  # noqa: E402
from opt_suite.report import ReportInputs, analyse  # noqa: E402
from opt_suite.report.build import leaderboard  # noqa: E402
from opt_suite.report.leaderboard import (  # noqa: E402
    improvement,
    normalised_estimates,
    oriented,
    rng_for,
)
from opt_suite.report.metrics import METRICS  # noqa: E402
from opt_suite.report.normalise import References  # noqa: E402

SEEDS, TASKS, EPISODES, REPS = 5, 24, 200, 2000
SHIFTS = {f"method{i}": float(i) for i in range(5)} | {"primitives": 0.0}
TABLE = linear_table(SHIFTS, seeds=SEEDS, tasks=TASKS, episodes=EPISODES, noise=5.0)
REFERENCES = References(
    tuple(range(SEEDS)),
    tuple(range(TASKS)),
    np.full((SEEDS, TASKS), -20.0),
    np.full((SEEDS, TASKS), 200.0) + np.arange(TASKS),
    "expert",
)
INPUTS = ReportInputs(TABLE, "paper-size", "h", references=REFERENCES)
ANALYSIS = analyse(INPUTS)


def new_statistics() -> int:
    """Every statistic the leaderboard gained for issue 25; returns how many intervals."""
    base = ANALYSIS.metrics["primitives"]
    intervals = 0
    for name, m in ANALYSIS.metrics.items():
        for k in METRICS:
            stats.task_bootstrap_ci(m.values[k], stats.iqm, REPS, rng_for(name, k))
            intervals += 1
        for k in ("jump_start", "improvement"):
            stats.stratified_bootstrap_ci(m.values[k], stats.iqm, REPS, rng_for(name, k))
            intervals += 1
        if name != "primitives":
            for k in METRICS:
                x, y = oriented(k, m.values[k]), oriented(k, base.values[k])
                stats.probability_of_improvement_ci(
                    x, y, REPS, rng_for(name, k, "poi"), over_tasks=True
                )
                improvement(k, m.values[k], base.values[k], REPS, rng_for(name, k, "p"), True)
                intervals += 3
        estimates, *_ = normalised_estimates(name, m, REFERENCES, REPS)
        intervals += 2 * len(estimates)
    return intervals


def test_bench_new_statistics(benchmark):
    intervals = benchmark.pedantic(new_statistics, rounds=3, iterations=1)
    assert intervals == 6 * (5 + 2 + 4 * 2) + 5 * 5 * 3


def test_bench_whole_leaderboard_with_references(benchmark):
    board = benchmark.pedantic(leaderboard, args=(INPUTS, ANALYSIS), rounds=1, iterations=1)
    assert board.normalisation is not None and len(board.rows) == 6
