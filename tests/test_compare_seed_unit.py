"""The gate with the seed as the unit (``compare_runs(..., unit="seed")``, ``--unit seed``).

Synthetic runs where every number is chosen by hand: the return of episode ``e`` of seed ``s`` on
task ``t`` for method ``m`` is ``-10 + e + 3 t + shift[m] + offset[m][s]``, so a run's auc differs
from the baseline's by exactly ``offset[m][s]`` on every task of seed ``s`` -- a seed-clustered
difference, like fresh options shared by all the tasks of their seed.
"""

from __future__ import annotations

import numpy as np
import pytest
from report_fakes import write_store

from opt_suite.cli import main
from opt_suite.report import (
    CompareError,
    EpisodeTable,
    ReportInputs,
    analyse,
    compare_runs,
    export_baseline,
    format_comparison,
    load_baseline,
)
from opt_suite.report.gate import power_problem, seed_differences, task_ranges

SHIFTS = {"a": 0.0, "b": 4.0}
TASKS, EPISODES = 6, 10


def table(seeds: int, offsets: dict[str, list[float]] | None = None) -> EpisodeTable:
    offsets = offsets or {}
    rows = [
        (m, s, t, e, -10.0 + e + 3.0 * t + shift + offsets.get(m, [0.0] * seeds)[s], 100 + e)
        for m, shift in SHIFTS.items()
        for s in range(seeds)
        for t in range(TASKS)
        for e in range(EPISODES)
    ]
    return EpisodeTable.from_rows(rows)


def inputs_of(t: EpisodeTable) -> ReportInputs:
    return ReportInputs(t, "gate", "h1")


def baseline_of(seeds: int, tmp_path):
    inputs = inputs_of(table(seeds))
    return load_baseline(export_baseline(inputs, analyse(inputs), tmp_path / "b.json"))


def test_seed_differences_divide_each_task_by_its_range_then_average_per_seed():
    diff = np.array([[1.0, -4.0, 3.0], [2.0, 2.0, -6.0]])
    ranges = np.array([2.0, 4.0, 0.0])  # task 2 has no spread: its difference counts as it is
    # seed 0: (1/2 - 4/4 + 3) / 3 = 2.5 / 3; seed 1: (2/2 + 2/4 - 6) / 3 = -4.5 / 3
    np.testing.assert_allclose(seed_differences(diff, ranges), [2.5 / 3, -1.5])


def test_task_ranges_span_every_entry_and_seed_of_the_baseline(tmp_path):
    baseline = baseline_of(3, tmp_path)
    # per task: a's seeds are all equal (no seed term), b is 4 higher: range 4 on every task
    np.testing.assert_allclose(task_ranges(baseline, "auc"), [4.0] * TASKS)


def test_a_seed_clustered_rerun_alarms_the_pair_test_but_not_the_seed_test(tmp_path):
    # Five seeds' options 3 worse on all their tasks, three 1 better: 48 pairs all of one sign
    # within a seed. The pair test sees 30 negative pairs and calls it a regression; the seed
    # test sees 8 units, and exactly 13 of the 2**8 sign patterns of (-3 x 5, +1 x 3) have a sum
    # <= the observed -12 (all five 3s negative: 8 patterns; four of them and all three 1s
    # negative: 5), so p = 13/256 > 0.05 before Holm's factor 2.
    baseline = baseline_of(8, tmp_path)
    clustered = inputs_of(table(8, {"a": [-3.0] * 5 + [1.0] * 3}))
    pair = compare_runs(clustered, baseline)
    assert pair.regressions == ["a"]
    seed = compare_runs(clustered, baseline, unit="seed")
    assert seed.regressions == []
    row = next(r for r in seed.rows if r.method == "a")
    assert (row.test, row.runs) == ("seed-level", "8 seeds")
    assert row.p_value == pytest.approx(13 / 256)
    assert row.p_adjusted == pytest.approx(min(1.0, 2 * 13 / 256))
    assert row.difference == pytest.approx(-12 / 8)  # the raw mean difference, as with pairs
    assert "seed-level sign-flip permutation test" in format_comparison(seed)


def test_every_seed_worse_gives_the_smallest_p_value_by_hand(tmp_path):
    baseline = baseline_of(7, tmp_path)
    worse = compare_runs(inputs_of(table(7, {"b": [-0.4] * 7})), baseline, unit="seed")
    b = next(r for r in worse.rows if r.method == "b")
    assert b.p_value == pytest.approx(1 / 128)  # all 7 seed means negative: 1 of 2**7 patterns
    assert b.p_adjusted == pytest.approx(2 / 128) and worse.regressions == ["b"]
    a = next(r for r in worse.rows if r.method == "a")
    assert a.p_value == 1.0  # an exact replay: every difference a tie


def test_power_problem_counts_seeds_with_the_seed_as_the_unit(tmp_path):
    five = dict.fromkeys("abcde", 6)
    message = power_problem(five, 6, unit="seed")
    assert message is not None and "6 seeds (the seed-level test)" in message
    assert "at least 7 seeds per method entry" in message
    assert power_problem(dict.fromkeys("abcde", 7), 6, unit="seed") is None
    # 12 (seed, task) pairs can fail as pairs; the same 2 seeds cannot as seeds
    assert power_problem({"a": 12, "b": 12}, 6) is None
    with pytest.raises(CompareError, match="cannot fail.*2 seeds"):
        compare_runs(inputs_of(table(2)), baseline_of(2, tmp_path), unit="seed")


def test_an_unknown_unit_is_refused(tmp_path):
    with pytest.raises(CompareError, match="unit must be one of"):
        compare_runs(inputs_of(table(2)), baseline_of(2, tmp_path), unit="task")


def test_compare_and_gate_rates_take_the_same_unit(tmp_path, capsys):
    write_store(tmp_path / "base", table(7))
    assert (
        main(["report", str(tmp_path / "base"), "--export-baseline", str(tmp_path / "b.json")]) == 0
    )
    write_store(tmp_path / "run", table(7, {"a": [-1.0] * 7}))
    capsys.readouterr()
    args = ["--baseline", str(tmp_path / "b.json"), "--unit", "seed"]
    fresh = table(14, {"a": [0.5 * (-1) ** s for s in range(14)]})
    write_store(tmp_path / "fresh", fresh)
    code = main(["gate-rates", str(tmp_path / "fresh"), *args, "--degradation", "0.5", "--stamp"])
    out = capsys.readouterr().out
    # seeds 0-6 replay the baseline; 7-13 alternate +-0.5: 4 better, 3 worse, never flagged;
    # half of each task's range (2 auc) below on all 7 seeds is caught for both entries
    assert code == 0 and "1 reruns under fresh seeds" in out
    assert "unit seed" in out and "false alarms 0/1" in out
    assert "power at 0.5 of each task's range: 1.000" in out
    # Stamped with what it measured, the baseline is one compare accepts for the same test.
    assert main(["compare", str(tmp_path / "run"), *args]) == 1
    out = capsys.readouterr().out
    assert "seed-level" in out and "7 seeds" in out and "FAIL: 1 method entry" in out
    assert "measured rates (" in out and "false alarms 0/1; 50% loss caught 1.00" in out


def test_a_baseline_records_its_test_and_compare_refuses_another(tmp_path, capsys):
    # Exported with --unit seed, the baseline says so (settings.gate_unit): compare and gate-rates
    # use it without being told, a refresh keeps it, and another --unit is one line, exit 2.
    write_store(tmp_path / "base", table(7))
    baseline = tmp_path / "b.json"
    export = ["report", str(tmp_path / "base"), "--export-baseline", str(baseline)]
    assert main([*export, "--unit", "seed"]) == 0
    assert load_baseline(baseline).gate_unit == "seed"
    write_store(tmp_path / "run", table(7, {"a": [-1.0] * 7}))
    capsys.readouterr()
    unmeasured = ["--unmeasured-ok"]
    assert main(["compare", str(tmp_path / "run"), "--baseline", str(baseline), *unmeasured]) == 1
    assert "seed-level" in capsys.readouterr().out
    assert (
        main(["compare", str(tmp_path / "run"), "--baseline", str(baseline), "--unit", "pair"]) == 2
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "settings.gate_unit is 'seed'" in err[0] and str(baseline) in err[0]
    code = main(
        ["gate-rates", str(tmp_path / "run"), "--baseline", str(baseline), "--unit", "pair"]
    )
    assert code == 2 and "settings.gate_unit is 'seed'" in capsys.readouterr().err
    assert main(export) == 0  # a refresh without --unit keeps the recorded test
    assert load_baseline(baseline).gate_unit == "seed"


def test_report_refuses_unit_without_a_baseline_and_a_bad_recorded_unit(tmp_path, capsys):
    write_store(tmp_path / "base", table(2))
    assert main(["report", str(tmp_path / "base"), "--unit", "seed"]) == 2
    assert "--unit records the gate's test in a baseline" in capsys.readouterr().err
    baseline = tmp_path / "b.json"
    assert main(["report", str(tmp_path / "base"), "--export-baseline", str(baseline)]) == 0
    assert load_baseline(baseline).gate_unit is None  # not recorded: compare's default, pair
    baseline.write_text(
        baseline.read_text().replace('"test_tasks"', '"gate_unit": "task", "test_tasks"')
    )
    with pytest.raises(
        Exception, match="settings.gate_unit must be one of pair, seed, pool, got 'task'"
    ):
        load_baseline(baseline)
