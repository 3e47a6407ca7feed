"""Bad input to the pool unit (``compare --unit pool``): one located line, exit 2, never a PASS.

A pool too small for the run, a run on other test tasks, a baseline of test tasks drawn per seed,
a pool unit recorded or stamped wrongly: each is refused before any statistics, naming the file.
"""

from __future__ import annotations

import json

from report_fakes import linear_table, write_store

from opt_suite.cli import main

SHIFTS = {"primitives": 0.0, "ours": 2.0}


def _store(path, seeds, tasks=6, tasks_per_seed=False):
    table = linear_table(SHIFTS, seeds=seeds, tasks=tasks, noise=1.0)
    return write_store(path, table, tasks_per_seed=tasks_per_seed)


def _pool_baseline(tmp_path, seeds, tasks_per_seed=False):
    base = _store(tmp_path / "base", seeds, tasks_per_seed=tasks_per_seed)
    baseline = tmp_path / "pool.json"
    assert main(["report", str(base), "--export-baseline", str(baseline), "--unit", "pool"]) == 0
    return baseline


def _compare(capsys, run, baseline, *flags):
    capsys.readouterr()
    code = main(["compare", str(run), "--baseline", str(baseline), "--unmeasured-ok", *flags])
    captured = capsys.readouterr()
    return code, captured.out, captured.err.strip().splitlines()


def test_a_pool_too_small_for_the_run_is_one_located_line(tmp_path, capsys):
    baseline = _pool_baseline(tmp_path, seeds=10)  # a run of 4 seeds leaves 6 < 16 in the pool
    code, out, err = _compare(capsys, _store(tmp_path / "run", seeds=4), baseline)
    assert code == 2 and out == "" and len(err) == 1, err
    assert err[0].startswith(f"opt-suite compare: baseline {baseline}: ")
    assert "holds 6 seeds other than the run's 4" in err[0] and "at least 4 x" in err[0]


def test_a_run_on_other_test_tasks_is_one_located_line(tmp_path, capsys):
    baseline = _pool_baseline(tmp_path, seeds=24)
    code, out, err = _compare(capsys, _store(tmp_path / "run", seeds=2, tasks=5), baseline)
    assert code == 2 and out == "" and len(err) == 1, err
    # the task draw differs before the pool is even formed (opt_suite.report.task_draw)
    assert err[0].startswith(f"opt-suite compare: baseline {baseline} drew other test tasks")


def test_a_pool_of_tasks_drawn_per_seed_is_one_located_line(tmp_path, capsys):
    baseline = _pool_baseline(tmp_path, seeds=24, tasks_per_seed=True)
    run = _store(tmp_path / "run", seeds=2, tasks_per_seed=True)
    code, out, err = _compare(capsys, run, baseline)
    assert code == 2 and out == "" and len(err) == 1, err
    assert str(baseline) in err[0] and "per seed" in err[0]


def test_a_stamp_of_an_unknown_unit_is_one_located_line(tmp_path, capsys):
    baseline = _pool_baseline(tmp_path, seeds=24)
    doc = json.loads(baseline.read_text())
    doc["measured_rates"] = {
        "unit": "pools", "metric": "auc", "alpha": 0.05, "correction": "holm", "reruns": 20,
        "false_alarms": 0, "power": {"0.1": 1.0}, "power_by_entry": {"0.1": {"primitives": 1.0,
        "ours": 1.0}}, "baseline_digest": "0" * 64, "date": "2026-11-29",
    }  # fmt: skip
    baseline.write_text(json.dumps(doc))
    code, out, err = _compare(capsys, _store(tmp_path / "run", seeds=2), baseline)
    assert code == 2 and out == "" and len(err) == 1, err
    assert f"{baseline}: measured_rates.unit is 'pools'" in err[0]


def test_a_recorded_unknown_unit_is_one_located_line(tmp_path, capsys):
    baseline = _pool_baseline(tmp_path, seeds=24)
    baseline.write_text(baseline.read_text().replace('"gate_unit": "pool"', '"gate_unit": "pools"'))
    code, out, err = _compare(capsys, _store(tmp_path / "run", seeds=2), baseline)
    assert code == 2 and out == "" and len(err) == 1, err
    assert "settings.gate_unit must be one of pair, seed, pool, got 'pools'" in err[0]
    assert str(baseline) in err[0]
