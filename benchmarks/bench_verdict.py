"""How long the one verdict rule takes on the committed fourrooms-paper run (issue 35, target 2 s).

The real data, not a synthetic table: ``docs/results/fourrooms-paper/runs.json`` (7 method
entries x 5 seeds x 24 shared test tasks, with measured reference returns). Every entry against
primitives on auc, as the leaderboard judges them: normalised scores, IQM difference, the crossed
seed bootstrap with the report's 2,000 resamples, one Bonferroni family of 6 verdicts.

    pytest benchmarks/bench_verdict.py --benchmark-only
"""

from __future__ import annotations

from pathlib import Path

from opt_suite.report.baseline import load_baseline
from opt_suite.report.leaderboard import rng_for
from opt_suite.report.verdicts import design_of, runs_verdict
from opt_suite.verdict import Verdict

RUNS = Path(__file__).resolve().parents[1] / "docs" / "results" / "fourrooms-paper" / "runs.json"
BASELINE = "primitives"
PROTOCOL = {"bootstrap": 2000}  # the report's resamples; the default margins


def every_verdict() -> list[Verdict]:
    """Each entry of the run against primitives, the file read and parsed included."""
    runs = load_baseline(RUNS)
    others = [name for name in runs.methods if name != BASELINE]
    design = design_of(runs, PROTOCOL, len(others))
    return [
        runs_verdict(runs, name, BASELINE, "auc", design, rng_for(name, "auc", "verdict"))
        for name in others
    ]


def test_bench_verdicts_on_fourrooms_paper(benchmark):
    found = benchmark.pedantic(every_verdict, rounds=5, iterations=1)
    assert len(found) == 6
    assert all(v.scale == "normalised" and v.resampled == "seeds×tasks" for v in found)
