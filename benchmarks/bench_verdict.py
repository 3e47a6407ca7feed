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
from opt_suite.report.verdicts import entry_verdict, load_references
from opt_suite.verdict import Margins, Verdict

RUNS = Path(__file__).resolve().parents[1] / "docs" / "results" / "fourrooms-paper" / "runs.json"
REPS = 2000
BASELINE = "primitives"


def every_verdict() -> list[Verdict]:
    """Each entry of the run against primitives, the file read and parsed included."""
    runs = load_baseline(RUNS)
    references = load_references(RUNS)
    base = runs.methods[BASELINE]
    others = [name for name in runs.methods if name != BASELINE]
    return [
        entry_verdict(
            "auc",
            base.seeds,
            base.tasks,
            runs.methods[name].metrics,
            base.metrics,
            references=references,
            margins=Margins(),
            tasks_per_seed=runs.tasks_per_seed,
            comparisons=len(others),
            reps=REPS,
            rng=rng_for(name, "auc", "verdict"),
        )
        for name in others
    ]


def test_bench_verdicts_on_fourrooms_paper(benchmark):
    found = benchmark.pedantic(every_verdict, rounds=5, iterations=1)
    assert len(found) == 6
    assert all(v.scale == "normalised" and v.resampled == "seeds×tasks" for v in found)
