"""CI's own results gate can fail: its design reaches alpha, and a large regression exits 1."""

from __future__ import annotations

import json
import re

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
    code = main(["compare", str(last_bits), "--baseline", str(baseline), "--unmeasured-ok"])
    out = capsys.readouterr().out
    assert code == 0 and "REGRESSION" not in out, out
    real = _atari_like(tmp_path, "real", lambda v: v * (1 - 1e-6))
    capsys.readouterr()
    assert main(["compare", str(real), "--baseline", str(baseline), "--unmeasured-ok"]) == 1
    assert capsys.readouterr().out.count("REGRESSION") == 2


def _design(tmp_path, name, *, per_seed=False, draw=0, spec_hash="0123456789abcdef"):
    from report_fakes import linear_table

    table = linear_table({"primitives": 0.0, "ours": 1.0}, seeds=3, tasks=4, noise=0.1)
    return write_store(
        tmp_path / name, table, spec_hash=spec_hash, tasks_per_seed=per_seed, draw=draw
    )


def _refused(capsys, argv):
    capsys.readouterr()
    code = main(argv)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line and not line.startswith("warning:")]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, (code, err)
    return lines[0]


def test_a_baseline_of_another_task_draw_is_refused_even_with_allow_spec_change(tmp_path, capsys):
    """Shared vs per seed (both ways), and a shared draw of other tasks: never paired by index."""
    shared = _design(tmp_path, "shared")
    per_seed = _design(tmp_path, "per-seed", per_seed=True, spec_hash="fedcba9876543210")
    other = _design(tmp_path, "other", draw=7, spec_hash="00ff00ff00ff00ff")
    for run in (shared, per_seed):
        assert main(["report", str(run)]) == 0
    published = ["--baseline", str(shared / "runs.json"), "--unmeasured-ok"]
    assert main(["compare", str(shared), *published]) == 0
    flags = ["--allow-spec-change"]
    line = _refused(
        capsys, ["compare", str(per_seed), "--baseline", str(shared / "runs.json"), *flags]
    )
    assert "shared by every seed, the run drawn per seed" in line, line
    line = _refused(
        capsys, ["compare", str(shared), "--baseline", str(per_seed / "runs.json"), *flags]
    )
    assert "drawn per seed (tasks.test_per_seed), the run shared" in line, line
    line = _refused(
        capsys, ["compare", str(other), "--baseline", str(shared / "runs.json"), *flags]
    )
    assert "drew other test tasks than the run" in line and "task draw differs" in line, line


def test_gate_rates_refuses_per_seed_draws_instead_of_relabelling_their_tasks(tmp_path, capsys):
    from report_fakes import linear_table

    base = write_store(
        tmp_path / "base",
        linear_table({"primitives": 0.0, "ours": 1.0}, seeds=2, tasks=4),
        tasks_per_seed=True,
    )
    assert main(["report", str(base)]) == 0
    fresh = _design(tmp_path, "fresh", per_seed=True)  # seeds 0-2; 2 is fresh
    line = _refused(capsys, ["gate-rates", str(fresh), "--baseline", str(base / "runs.json")])
    assert "per seed" in line and "relabelling" in line, line


def test_a_baseline_with_a_key_twice_or_a_nan_is_refused_with_its_line(tmp_path, capsys):
    run = _design(tmp_path, "run")
    assert main(["report", str(run)]) == 0
    text = (run / "runs.json").read_text()

    def line_of(changed, needle, nth):
        at = [m.start() for m in re.finditer(re.escape(needle), changed)][nth]
        return changed[:at].count("\n") + 1

    twice = tmp_path / "twice.json"
    # A second "auc" in the last method's metrics (every method has one): Python's json would
    # silently keep the last one.
    at = text.rindex('"metrics": {') + len('"metrics": {')
    changed = text[:at] + '"auc": [[0.0]],' + text[at:]
    twice.write_text(changed)
    line = _refused(capsys, ["compare", str(run), "--baseline", str(twice)])
    second = line_of(changed, '"auc":', -1)
    assert f"twice.json:{second}:" in line, line
    assert "key 'auc' twice" in line, line
    doc = json.loads(text)
    doc["methods"]["ours"]["metrics"]["auc"][1][2] = "NOT-A-NUMBER"
    changed = json.dumps(doc, indent=1).replace('"NOT-A-NUMBER"', "NaN")
    nan = tmp_path / "nan.json"
    nan.write_text(changed)
    line = _refused(capsys, ["compare", str(run), "--baseline", str(nan)])
    where = line_of(changed, "NaN", 0)
    assert f"nan.json:{where}:" in line and "finite number" in line, line


def _store_below(tmp_path, baseline_path, by: float):
    """A store of the baseline's spec whose every auc is ``by`` below the baseline's."""
    doc = json.loads(baseline_path.read_text())
    rows = []
    for name, entry in doc["methods"].items():
        for i, seed in enumerate(entry["seeds"]):
            for j, task in enumerate(entry["tasks"]):
                value = entry["metrics"]["auc"][i][j] - by
                rows += [(name, seed, task, e, value, 10) for e in range(20)]
    return doc, write_store(
        tmp_path / "run",
        EpisodeTable.from_rows(rows),
        spec_name=doc["spec"]["name"],
        spec_hash=doc["spec"]["hash"],
    )


def test_the_seed_level_test_refuses_the_two_seed_ci_baseline_in_one_line(tmp_path, capsys):
    # With the seed as the unit the quick spec's 2 seeds reach p = 1/4, x 5 entries: no result
    # could fail, so compare refuses (exit 2) and says how many seeds it needs.
    _, run = _store_below(tmp_path, CI_BASELINE, 1000.0)
    capsys.readouterr()
    code = main(["compare", str(run), "--baseline", str(CI_BASELINE), "--unit", "seed"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert "2 seeds (the seed-level test)" in err[0] and "at least 7 seeds" in err[0]
