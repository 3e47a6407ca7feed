"""How long the reports of a paper-sized run take (written at the end of every run).

The paper's protocol: 6 method entries x 5 seeds x 24 test tasks x 100 episodes (72,000 episodes),
2,000 bootstrap resamples per interval. ``opt-suite compare`` uses 10,000 permutations per method.

    pytest benchmarks/bench_report.py -n 0 --benchmark-only
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from report_fakes import linear_table  # noqa: E402

from opt_suite.report import (  # noqa: E402
    ReportInputs,
    analyse,
    compare_runs,
    export_baseline,
    load_baseline,
    write_report_files,
)
from opt_suite.stats import iqm, stratified_bootstrap_ci  # noqa: E402

SHIFTS = {f"method{i}": float(i) for i in range(5)} | {"primitives": 0.0}
TABLE = linear_table(SHIFTS, seeds=5, tasks=24, episodes=100, noise=5.0)
INPUTS = ReportInputs(TABLE, "paper-size", "h")


def test_bench_write_report_files(benchmark, tmp_path):
    paths = benchmark.pedantic(write_report_files, args=(INPUTS, tmp_path), rounds=3, iterations=1)
    assert len(paths) == 7  # REPORT_FILES, runs.json included


def test_bench_iqm_ci_2000(benchmark):
    scores = np.random.default_rng(0).normal(size=(5, 24))
    ci = benchmark(lambda: stratified_bootstrap_ci(scores, iqm, 2000, np.random.default_rng(0)))
    assert ci[0] < ci[1]


def test_bench_compare(benchmark, tmp_path):
    baseline = load_baseline(export_baseline(INPUTS, analyse(INPUTS), tmp_path / "b.json"))
    result = benchmark.pedantic(compare_runs, args=(INPUTS, baseline), rounds=3, iterations=1)
    assert result.regressions == []
