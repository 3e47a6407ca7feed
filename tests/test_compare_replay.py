"""Exact replay before the statistics: ``compare`` says "identical" or names the changed cells, and
refreshing a baseline prints what moved."""

from __future__ import annotations

import json

import numpy as np
import pytest
from report_fakes import write_store
from test_compare import inputs_of, noisy, shifted

from opt_suite.cli import main
from opt_suite.report import compare_runs
from opt_suite.report.baseline import BaselineRuns
from opt_suite.report.replay import format_replay, replay


def grid(values: np.ndarray) -> dict[str, BaselineRuns]:
    return {"m": BaselineRuns((0, 1), (0, 1, 2), {"auc": values, "final_return": values * 2})}


class TestReplay:
    def test_identical_grids(self):
        values = np.arange(6, dtype=float).reshape(2, 3)
        r = replay(grid(values), grid(values.copy()))
        assert r.identical and r.compared == 6 and r.changed == ()
        assert format_replay(r).startswith("replay: identical: all 6")

    def test_a_change_in_the_last_bit_is_named(self):
        values = np.arange(6, dtype=float).reshape(2, 3) + 0.1
        moved = values.copy()
        moved[1, 2] = np.nextafter(moved[1, 2], np.inf)
        r = replay(grid(moved), grid(values))
        assert not r.identical and r.changed == (("m", 1, 2),)
        text = format_replay(r)
        assert "1 of 6 cells" in text and "seed 1 task 2" in text

    def test_any_stored_metric_counts_and_nan_equals_nan(self):
        values = np.array([[np.nan, 1.0, 2.0], [3.0, 4.0, 5.0]])
        new = grid(values.copy())
        new["m"].metrics["final_return"][0, 1] += 1.0  # auc unchanged, another metric moved
        r = replay(new, grid(values))
        assert r.changed == (("m", 0, 1),)

    def test_cells_are_matched_by_seed_and_task_not_position(self):
        values = np.arange(6, dtype=float).reshape(2, 3)
        reordered = {"m": BaselineRuns((1, 0), (0, 1, 2), {"auc": values[::-1].copy()})}
        assert replay(reordered, {"m": BaselineRuns((0, 1), (0, 1, 2), {"auc": values})}).identical

    def test_nothing_in_common_is_not_called_identical(self):
        values = np.zeros((2, 3))
        r = replay({"other": grid(values)["m"]}, grid(values))
        assert not r.identical and "nothing to compare" in format_replay(r)


class TestGateReplay:
    def test_rerun_is_identical_and_a_shift_is_named(self, tmp_path):
        from opt_suite.report import analyse, export_baseline, load_baseline

        inputs = inputs_of(noisy())
        baseline = load_baseline(export_baseline(inputs, analyse(inputs), tmp_path / "b.json"))
        same = compare_runs(inputs_of(noisy()), baseline)
        assert same.replay is not None and same.replay.identical
        # A shift too small to be a regression is still a change, named method by method.
        moved = compare_runs(inputs_of(shifted("ours", 0.01)), baseline)
        assert moved.regressions == []
        assert moved.replay is not None
        assert {name for name, _, _ in moved.replay.changed} == {"ours"}
        assert moved.replay.methods["ours"][1] == 20 and moved.replay.methods["random"][1] == 0


class TestCommands:
    @pytest.fixture
    def setup(self, tmp_path):
        base_dir = write_store(tmp_path / "base", noisy())
        baseline = tmp_path / "baseline.json"
        assert main(["report", str(base_dir), "--export-baseline", str(baseline)]) == 0
        return tmp_path, baseline

    def test_compare_prints_replay_before_the_table(self, setup, capsys):
        tmp_path, baseline = setup
        capsys.readouterr()
        argv = ["compare", str(tmp_path / "base"), "--baseline", str(baseline), "--unmeasured-ok"]
        assert main(argv) == 0
        out = capsys.readouterr().out
        assert out.index("replay: identical") < out.index("one-sided paired sign-flip")

    def test_require_identical_fails_a_changed_run_that_passes_the_test(self, setup, capsys):
        tmp_path, baseline = setup
        run = write_store(tmp_path / "nudged", shifted("ours", 0.01))
        argv = ["compare", str(run), "--baseline", str(baseline), "--unmeasured-ok"]
        assert main(argv) == 0  # no regression
        out = capsys.readouterr().out
        assert "replay: changed: 20 of 60 cells" in out and "ours: 20 of 20 cells changed" in out
        assert main([*argv, "--require-identical"]) == 1
        assert "does not replay the baseline exactly" in capsys.readouterr().out

    def test_refreshing_a_baseline_prints_what_moved(self, setup, capsys):
        tmp_path, baseline = setup
        run = write_store(tmp_path / "new", shifted("random", 0.5))
        capsys.readouterr()
        assert main(["report", str(run), "--export-baseline", str(baseline)]) == 0
        out = capsys.readouterr().out
        assert "random: 20 of 20 cells changed" in out and "primitives: unchanged" in out
        assert json.loads(baseline.read_text())["format"] == "opt-suite-baseline"

    def test_a_file_that_is_not_a_baseline_is_not_overwritten(self, setup, capsys):
        tmp_path, _ = setup
        mine = tmp_path / "notes.json"
        mine.write_text('{"mine": true}')
        code = main(["report", str(tmp_path / "base"), "--export-baseline", str(mine)])
        assert code == 2
        assert "not an opt-suite baseline" in capsys.readouterr().err
        assert mine.read_text() == '{"mine": true}'
