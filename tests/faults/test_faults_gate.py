"""CI's own results gate can fail: its design reaches alpha, and a large regression exits 1."""

from __future__ import annotations

import json

from report_fakes import write_store
from runner_support import REPO

from opt_suite.cli import main
from opt_suite.report import EpisodeTable, load_baseline
from opt_suite.report.gate import power_problem

CI_BASELINE = REPO / "ci" / "baseline.json"


def test_the_ci_baseline_design_can_reach_alpha():
    baseline = load_baseline(CI_BASELINE)
    pairs = {name: len(b.seeds) * len(b.tasks) for name, b in baseline.methods.items()}
    tasks = max(len(b.tasks) for b in baseline.methods.values())
    assert power_problem(pairs, tasks) is None
    # The same design with one seed fewer could not fail: the check has teeth.
    fewer = {name: n // 2 for name, n in pairs.items()}
    assert power_problem(fewer, tasks) is not None


def test_a_run_much_worse_than_the_ci_baseline_exits_one(tmp_path, capsys):
    """A store whose every auc is 1000 below the CI baseline's: exit 1 naming every method."""
    doc = json.loads(CI_BASELINE.read_text())
    rows = []
    for name, entry in doc["methods"].items():
        for i, seed in enumerate(entry["seeds"]):
            for j, task in enumerate(entry["tasks"]):
                value = entry["metrics"]["auc"][i][j] - 1000.0
                rows += [(name, seed, task, e, value, 10) for e in range(20)]
    run = write_store(
        tmp_path / "run",
        EpisodeTable.from_rows(rows),
        spec_name=doc["spec"]["name"],
        spec_hash=doc["spec"]["hash"],
    )
    capsys.readouterr()
    code = main(["compare", str(run), "--baseline", str(CI_BASELINE)])
    out = capsys.readouterr().out
    assert code == 1, out
    assert out.count("REGRESSION") == len(doc["methods"])


def test_report_and_run_print_the_leaderboard_warnings(tmp_path, capsys):
    from report_fakes import linear_table

    run = write_store(tmp_path / "run", linear_table({"primitives": 0.0, "ours": 1.0}, seeds=2))
    capsys.readouterr()
    assert main(["report", str(run)]) == 0
    err = capsys.readouterr().err
    assert "warning: leaderboard: too few runs for the intervals to mean much" in err


def _atari_like(tmp_path, name, nudge):
    """A store of 2 methods x 3 seeds x 4 tasks with Atari-sized returns (about 5,000)."""
    import numpy as np

    rng = np.random.default_rng(0)
    rows = [
        (m, s, t, e, float(nudge(5000.0 + 100.0 * t + rng.normal(scale=50.0))), 10)
        for m in ("base", "ours")
        for s in range(3)
        for t in range(4)
        for e in range(20)
    ]
    return write_store(tmp_path / name, EpisodeTable.from_rows(rows))


def test_last_bit_differences_are_ties_not_a_regression(tmp_path, capsys):
    """Another CPU summing in another order may make every return a few ulps lower: a sign test
    would call that "worse on all 12 pairs" (p = 2**-12). The gate counts differences within 1e-9
    of the values as ties (p = 1), while a loss of 1e-6 of the values on every pair is a regression.
    """
    import numpy as np

    def down(value, ulps=16):
        for _ in range(ulps):
            value = np.nextafter(value, -np.inf)
        return value

    base = _atari_like(tmp_path, "base", lambda v: v)
    baseline = tmp_path / "baseline.json"
    assert main(["report", str(base), "--export-baseline", str(baseline)]) == 0
    last_bits = _atari_like(tmp_path, "last-bits", down)
    capsys.readouterr()
    code = main(["compare", str(last_bits), "--baseline", str(baseline)])
    out = capsys.readouterr().out
    assert code == 0 and "REGRESSION" not in out, out
    real = _atari_like(tmp_path, "real", lambda v: v * (1 - 1e-6))
    capsys.readouterr()
    assert main(["compare", str(real), "--baseline", str(baseline)]) == 1
    assert capsys.readouterr().out.count("REGRESSION") == 2
