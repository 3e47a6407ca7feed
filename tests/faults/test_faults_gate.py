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
