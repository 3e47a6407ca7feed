"""The CI gate: ``compare_runs`` on synthetic runs and ``opt-suite compare`` on real stores."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from report_fakes import linear_table, write_store

from opt_suite.cli import main
from opt_suite.report import (
    BaselineError,
    CompareError,
    EpisodeTable,
    ReportInputs,
    analyse,
    compare_runs,
    export_baseline,
    format_comparison,
    load_baseline,
)
from opt_suite.spec.schema import ReportSpec

SHIFTS = {"primitives": 0.0, "ours": 4.0, "random": 1.0}
GRID = {"seeds": 5, "tasks": 4, "episodes": 20, "noise": 3.0}


def inputs_of(table: EpisodeTable, spec_hash: str = "h1") -> ReportInputs:
    return ReportInputs(table, "gate", spec_hash)


def noisy(shifts=SHIFTS, noise_seed=0, **grid) -> EpisodeTable:
    return linear_table(shifts, **{**GRID, **grid}, noise_seed=noise_seed)


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    inputs = inputs_of(noisy())
    path = tmp_path_factory.mktemp("baseline") / "baseline.json"
    return load_baseline(export_baseline(inputs, analyse(inputs), path))


def shifted(method: str, by: float, **kw) -> EpisodeTable:
    return noisy({**SHIFTS, method: SHIFTS[method] + by}, **kw)


class TestGate:
    def test_identical_run_passes_with_zero_differences(self, baseline):
        result = compare_runs(inputs_of(noisy()), baseline)
        assert result.regressions == []
        for row in result.rows:
            assert (row.test, row.runs) == ("paired", "20 pairs")
            assert row.difference == 0.0 and (row.ci_low, row.ci_high) == (0.0, 0.0)
            assert row.p_value == 1.0
            # described by the one verdict rule: every pair tied, P = 0.5 in every resample
            assert row.verdict is not None and row.verdict.outcome == "equivalent"
            assert (row.verdict.ci_low, row.verdict.ci_high) == (0.5, 0.5)
        text = format_comparison(result)
        assert "(Bonferroni): 3 comparisons at a 95% family-wise confidence" in text
        assert "  ours: equivalent: paired P 0.50 [0.50, 0.50] (98.33% CI [seeds×tasks])" in text

    def test_shifted_down_run_fails(self, baseline):
        # auc drops by 1 per run against a per-run noise of 3 / sqrt(20) ~ 0.67.
        result = compare_runs(inputs_of(shifted("ours", -1.0)), baseline)
        assert result.regressions == ["ours"]
        ours = next(r for r in result.rows if r.method == "ours")
        assert ours.difference == pytest.approx(-1.0)
        assert ours.ci_low < -1.0 < ours.ci_high < 0
        assert ours.p_adjusted <= 0.05
        assert "FAIL: 1 method entry significantly worse on auc: ours" in format_comparison(result)

    def test_shifted_up_run_passes(self, baseline):
        result = compare_runs(inputs_of(shifted("ours", +1.0)), baseline)
        assert result.regressions == []
        ours = next(r for r in result.rows if r.method == "ours")
        assert ours.difference == pytest.approx(1.0) and ours.p_value == 1.0

    def test_rerun_with_fresh_noise_passes(self, baseline):
        # Same distribution, other noise: no method is significantly worse.
        for noise_seed in (1, 2, 3):
            assert compare_runs(inputs_of(noisy(noise_seed=noise_seed)), baseline).regressions == []

    def test_lower_is_better_metric(self, tmp_path):
        # Threshold 0: with r = -10 + e + s + 2t + k (+ noise), runs reach it around episode
        # 15.5 - s - 2t - k. Lower returns reach it later: a regression of episodes_to_threshold.
        settings = ReportSpec(threshold=0.0)
        inputs = ReportInputs(noisy(), "gate", "h1", settings)
        baseline = load_baseline(export_baseline(inputs, analyse(inputs), tmp_path / "b.json"))
        worse = ReportInputs(shifted("random", -3.0), "gate", "h1", settings)
        result = compare_runs(worse, baseline, metric="episodes_to_threshold")
        assert result.regressions == ["random"]
        random = next(r for r in result.rows if r.method == "random")
        assert random.difference > 0
        assert "episodes_to_threshold is better lower" in format_comparison(result)
        better = ReportInputs(shifted("random", 3.0), "gate", "h1", settings)
        assert compare_runs(better, baseline, metric="episodes_to_threshold").regressions == []

    def test_the_stored_thresholds_are_used(self, tmp_path):
        # The same episodes under the default threshold rule would give other thresholds (and
        # other episodes_to_threshold); the baseline's thresholds keep the comparison exact.
        inputs = ReportInputs(noisy(), "gate", "h1", ReportSpec(threshold=0.0))
        baseline = load_baseline(export_baseline(inputs, analyse(inputs), tmp_path / "b.json"))
        rerun = ReportInputs(noisy(), "gate", "h1", ReportSpec(threshold=None))
        assert analyse(rerun).thresholds != analyse(inputs).thresholds
        result = compare_runs(rerun, baseline, metric="episodes_to_threshold")
        assert all(r.difference == 0.0 and r.p_value == 1.0 for r in result.rows)

    def test_holm_correction_is_applied(self, baseline):
        table = shifted("ours", -0.3)
        holm = compare_runs(inputs_of(table), baseline)
        none = compare_runs(inputs_of(table), baseline, correction="none")
        ours = [next(r for r in c.rows if r.method == "ours") for c in (holm, none)]
        assert ours[0].p_value == ours[1].p_value == ours[1].p_adjusted
        assert ours[0].p_adjusted >= ours[0].p_value
        assert "Holm-Bonferroni corrected over 3 method entries" in format_comparison(holm)

    def test_a_run_that_does_not_cover_the_baseline_is_refused(self, baseline):
        def other_seeds(table: EpisodeTable) -> ReportInputs:
            return inputs_of(dataclasses.replace(table, seed=table.seed + 100))

        # No pair in common: there is no unpaired fallback any more (it hid real regressions).
        with pytest.raises(CompareError) as exc:
            compare_runs(other_seeds(shifted("ours", -5.0)), baseline)
        message = str(exc.value)
        assert "does not cover baseline" in message and "60 of its 60" in message
        assert "seeds 0-4 (every task) of primitives, ours, random" in message
        assert "--only-seeds" in message and "--seeds 0-4" in message
        # Three of five seeds: refused, naming the two it lacks, not tested on the three it has.
        with pytest.raises(CompareError, match=r"24 of its 60 .* seeds 3-4 \(every task\)"):
            compare_runs(inputs_of(noisy(seeds=3)), baseline)

    def test_narrowing_the_baseline_compares_the_part_named(self, baseline):
        result = compare_runs(inputs_of(noisy(seeds=3)), baseline, only_seeds=[0, 1, 2])
        assert {r.runs for r in result.rows} == {"12 pairs"}
        assert result.regressions == []
        assert any("narrowed" in w and "36 of its 60" in w for w in result.warnings)
        worse = shifted("ours", -1.5, seeds=3)
        narrowed = compare_runs(inputs_of(worse), baseline, only_seeds=[0, 1, 2])
        assert narrowed.regressions == ["ours"]
        two = noisy({"primitives": 0.0, "ours": 4.0})
        only = compare_runs(inputs_of(two), baseline, only_methods=["primitives", "ours"])
        assert [r.method for r in only.rows] == ["primitives", "ours"]
        with pytest.raises(BaselineError, match=r"no seed \[7\]"):
            compare_runs(inputs_of(noisy()), baseline, only_seeds=[7])
        with pytest.raises(BaselineError, match=r"--only-methods \['nope'\]"):
            compare_runs(inputs_of(noisy()), baseline, only_methods=["nope"])

    def test_a_run_with_more_seeds_than_the_baseline_is_compared_on_the_baseline(self, baseline):
        result = compare_runs(inputs_of(noisy(seeds=6)), baseline)
        assert {r.runs for r in result.rows} == {"20 pairs"}
        assert result.regressions == []
        assert any("seeds 5 are not in the baseline" in w for w in result.warnings)

    def test_methods_not_in_the_baseline_are_reported_not_compared(self, baseline):
        table = noisy({**SHIFTS, "new": 9.0})
        result = compare_runs(inputs_of(table), baseline)
        assert [r.method for r in result.rows] == ["primitives", "ours", "random"]
        assert any("['new'] are not in the baseline" in w for w in result.warnings)

    def test_bad_inputs(self, baseline):
        with pytest.raises(CompareError, match="spec hash differs.*--allow-spec-change"):
            compare_runs(inputs_of(noisy(), spec_hash="other"), baseline)
        allowed = compare_runs(
            inputs_of(noisy(), spec_hash="other"), baseline, allow_spec_change=True
        )
        assert allowed.regressions == [] and "spec hash differs" in allowed.warnings[0]
        with pytest.raises(CompareError, match=r"\['random'\] of baseline .* not in the run"):
            compare_runs(inputs_of(noisy({"primitives": 0.0, "ours": 4.0})), baseline)
        with pytest.raises(CompareError, match="unknown metric 'speed'"):
            compare_runs(inputs_of(noisy()), baseline, metric="speed")
        with pytest.raises(CompareError, match="alpha"):
            compare_runs(inputs_of(noisy()), baseline, alpha=1.5)


class TestBaselineFile:
    def test_round_trip(self, baseline):
        assert list(baseline.methods) == ["primitives", "ours", "random"]
        runs = baseline.methods["primitives"]
        assert runs.seeds == (0, 1, 2, 3, 4) and runs.tasks == (0, 1, 2, 3)
        assert runs.metrics["auc"].shape == (5, 4)
        assert (baseline.spec_name, baseline.spec_hash) == ("gate", "h1")
        assert baseline.final_fraction == 0.1 and baseline.window == 10

    def test_missing_file(self, tmp_path):
        with pytest.raises(BaselineError, match="no such baseline file.*--export-baseline"):
            load_baseline(tmp_path / "none.json")

    @pytest.mark.parametrize(
        ("edit", "message"),
        [
            (lambda d: "{not json", "not a JSON baseline file"),
            (lambda d: {**d, "format": "x"}, "format is not 'opt-suite-baseline'"),
            (lambda d: {**d, "version": 2}, "version 2, expected 1"),
            (lambda d: {**d, "methods": {}}, "methods must be a non-empty mapping"),
            (
                lambda d: {**d, "thresholds": {"0": "high"}},
                "thresholds must map task -> finite number",
            ),
            (
                lambda d: {**d, "methods": {"a": {**d["methods"]["ours"], "seeds": [0]}}},
                r"methods.a.metrics.auc must be a 1 x 4 \(seeds x tasks\) matrix",
            ),
        ],
    )
    def test_malformed_file(self, baseline, tmp_path, edit, message):
        doc = json.loads(baseline.path.read_text())
        changed = edit(doc)
        path = tmp_path / "bad.json"
        path.write_text(changed if isinstance(changed, str) else json.dumps(changed))
        with pytest.raises(BaselineError, match=message):
            load_baseline(path)


@pytest.fixture(scope="module")
def reported(tmp_path_factory):
    """A run and its exported baseline, reported once (the report draws its figures: seconds);
    each of TestCommand's tests gets its own copy."""
    folder = tmp_path_factory.mktemp("compare-base")
    base_dir = write_store(folder / "base", noisy())
    baseline = folder / "baseline.json"
    assert main(["report", str(base_dir), "--export-baseline", str(baseline)]) == 0
    return folder


class TestCommand:
    @pytest.fixture
    def setup(self, reported, tmp_path):
        shutil.copytree(reported / "base", tmp_path / "base")
        baseline = shutil.copy(reported / "baseline.json", tmp_path / "baseline.json")
        return tmp_path, Path(baseline)

    def run(self, capsys, *argv):
        # The synthetic baselines' rates were never measured (tests/faults/ test that refusal).
        code = main(["compare", *map(str, argv), "--unmeasured-ok"])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    def test_identical_run_exits_zero(self, setup, capsys):
        tmp_path, baseline = setup
        code, out, err = self.run(capsys, tmp_path / "base", "--baseline", baseline)
        assert code == 0, err
        assert "one-sided paired sign-flip permutation test" in out
        assert "two-sample" not in out
        assert "PASS: no method entry is significantly worse on auc" in out

    def test_regression_exits_one_and_prints_the_table(self, setup, capsys):
        tmp_path, baseline = setup
        run = write_store(tmp_path / "worse", shifted("random", -1.5))
        code, out, _ = self.run(capsys, run, "--baseline", baseline, "--alpha", "0.01")
        assert code == 1
        line = next(line for line in out.splitlines() if line.startswith("random"))
        assert "paired" in line and "-1.500" in line and line.endswith("REGRESSION")
        assert "99% CI" in out and "regression if p <= 0.01" in out

    def test_improvement_exits_zero(self, setup, capsys):
        tmp_path, baseline = setup
        run = write_store(tmp_path / "better", shifted("ours", 2.0))
        assert self.run(capsys, run, "--baseline", baseline, "--metric", "final_return")[0] == 0

    def test_spec_hash_mismatch(self, setup, capsys):
        tmp_path, baseline = setup
        run = write_store(tmp_path / "other", noisy(), spec_hash="fedcba9876543210")
        code, _, err = self.run(capsys, run, "--baseline", baseline)
        assert code == 2
        assert (
            "spec hash differs" in err and "--allow-spec-change" in err and "Traceback" not in err
        )
        code, _, err = self.run(capsys, run, "--baseline", baseline, "--allow-spec-change")
        assert code == 0 and "warning: spec hash differs" in err

    def test_method_missing_from_the_run(self, setup, capsys):
        tmp_path, baseline = setup
        run = write_store(tmp_path / "less", noisy({"primitives": 0.0, "ours": 4.0}))
        code, _, err = self.run(capsys, run, "--baseline", baseline)
        assert code == 2 and "['random']" in err and "not in the run" in err

    def test_failed_cell_makes_a_method_missing(self, setup, capsys):
        tmp_path, baseline = setup
        failed = [("ours", s) for s in range(5)]
        run = write_store(tmp_path / "crashed", noisy(), failed=failed)
        code, _, err = self.run(capsys, run, "--baseline", baseline)
        assert code == 2 and "['ours']" in err and "RuntimeError: diverged" in err

    def test_missing_paths_and_bad_files(self, setup, capsys):
        tmp_path, baseline = setup
        code, _, err = self.run(capsys, tmp_path / "nope", "--baseline", baseline)
        assert code == 2 and "no such directory" in err
        code, _, err = self.run(capsys, tmp_path / "base", "--baseline", tmp_path / "none.json")
        assert code == 2 and "no such baseline file" in err
        (tmp_path / "bad.json").write_text("[]")
        code, _, err = self.run(capsys, tmp_path / "base", "--baseline", tmp_path / "bad.json")
        assert code == 2 and "format is not" in err
        (tmp_path / "empty").mkdir()
        code, _, err = self.run(capsys, tmp_path / "empty", "--baseline", baseline)
        assert code == 2 and "no results store" in err

    @pytest.mark.parametrize("bad", [["--alpha", "2"], ["--metric", "speed"], []])
    def test_bad_arguments_exit_two(self, setup, capsys, bad):
        tmp_path, baseline = setup
        argv = [
            "compare",
            str(tmp_path / "base"),
            *(["--baseline", str(baseline)] if bad else []),
            *bad,
        ]
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
        assert "error" in capsys.readouterr().err


def test_sign_flip_test_holds_its_level_and_has_power():
    # Under H0 (symmetric differences) the one-sided test rejects about alpha of the time; against
    # a shift of half a standard deviation with 20 pairs it rejects most of the time.
    rng = np.random.default_rng(0)
    from opt_suite import stats

    null = [stats.paired_sign_flip_test(rng.normal(size=20), 500, rng) for _ in range(400)]
    shifted_p = [
        stats.paired_sign_flip_test(rng.normal(size=20) - 0.5, 500, rng) for _ in range(200)
    ]
    assert 0.02 <= np.mean(np.array(null) <= 0.05) <= 0.085
    assert np.mean(np.array(shifted_p) <= 0.05) >= 0.6


class TestGatePower:
    """A gate that cannot fail is refused; an incomplete run is refused."""

    FIVE = {"primitives": 0.0, "a": 1.0, "b": 2.0, "c": 3.0, "d": 4.0}

    def table(self, seeds, shift=0.0):
        shifts = {k: v + shift for k, v in self.FIVE.items()}
        return linear_table(shifts, seeds=seeds, tasks=6, episodes=20, noise=1.0)

    def test_smallest_p_values(self):
        from opt_suite import stats

        assert stats.paired_sign_flip_smallest_p(6, 10_000) == 1 / 64
        assert stats.paired_sign_flip_smallest_p(12, 10_000) == 1 / 4096
        assert stats.paired_sign_flip_smallest_p(20, 10_000) == 1 / 10_001

    def test_one_seed_by_six_tasks_cannot_fail_and_is_refused(self, tmp_path):
        inputs = inputs_of(self.table(seeds=1))
        baseline = load_baseline(export_baseline(inputs, analyse(inputs), tmp_path / "b.json"))
        # A run 1000 auc worse than the baseline: without the power check this passed.
        worse = inputs_of(self.table(seeds=1, shift=-1000.0))
        with pytest.raises(CompareError) as exc:
            compare_runs(worse, baseline)
        message = str(exc.value)
        assert "cannot fail" in message and "0.0781" in message and "x 5 method entries" in message
        assert "at least 7 (seed, task) pairs" in message and "2 seeds x 6 test tasks" in message
        # Uncorrected, 1/64 <= 0.05: the same design can fail, and does.
        assert compare_runs(worse, baseline, correction="none").regressions == list(self.FIVE)

    def test_two_seeds_by_six_tasks_can_fail(self, tmp_path):
        inputs = inputs_of(self.table(seeds=2))
        baseline = load_baseline(export_baseline(inputs, analyse(inputs), tmp_path / "b.json"))
        worse = compare_runs(inputs_of(self.table(seeds=2, shift=-1000.0)), baseline)
        assert worse.regressions == list(self.FIVE)
        assert all(r.p_adjusted == pytest.approx(5 / 4096) for r in worse.rows)

    def test_power_problem_needs_more_permutations_when_pairs_cannot_help(self):
        from opt_suite.report import gate

        assert gate.power_problem({"a": 40}, 8, permutations=10) is not None
        assert "raise --permutations" in gate.power_problem({"a": 40}, 8, permutations=10)
        assert gate.power_problem({"a": 40}, 8, permutations=100) is None

    def test_cli_refuses_and_export_warns(self, tmp_path, capsys):
        base = write_store(tmp_path / "base", self.table(seeds=1))
        baseline = tmp_path / "baseline.json"
        assert main(["report", str(base), "--export-baseline", str(baseline)]) == 0
        err = capsys.readouterr().err
        assert "warning: baseline" in err and "cannot fail" in err
        run = write_store(tmp_path / "worse", self.table(seeds=1, shift=-1000.0))
        code = main(["compare", str(run), "--baseline", str(baseline)])
        err = capsys.readouterr().err
        assert code == 2 and "cannot fail" in err and "Traceback" not in err

    @pytest.mark.parametrize("how", ["failed", "unfinished", "interrupted"])
    def test_incomplete_run_is_refused(self, tmp_path, capsys, how):
        table = linear_table(SHIFTS, **{**GRID, "noise": 3.0})
        base = write_store(tmp_path / "base", table)
        baseline = tmp_path / "baseline.json"
        assert main(["report", str(base), "--export-baseline", str(baseline)]) == 0
        kwargs = {how: [("ours", 0)]} if how != "interrupted" else {}
        run = write_store(tmp_path / "run", table, **kwargs)
        if how == "interrupted":
            import sqlite3

            with sqlite3.connect(run / "results.sqlite") as conn:
                conn.execute("UPDATE runs SET status = 'interrupted'")
        capsys.readouterr()
        code = main(["compare", str(run), "--baseline", str(baseline)])
        err = capsys.readouterr().err
        assert code == 2 and "the run is incomplete" in err, err
        expected = "has status 'interrupted'" if how == "interrupted" else "'ours' seed 0 is"
        assert expected in err


class TestPublishedRunData:
    """Every report's ``runs.json`` is a baseline: a user gates their own run against it."""

    def test_runs_json_gates_a_later_run(self, tmp_path):
        from opt_suite.report import write_report_files

        write_report_files(inputs_of(noisy()), tmp_path)
        published = load_baseline(tmp_path / "runs.json")
        assert published.threshold_unit == "episodes"
        doc = json.loads((tmp_path / "runs.json").read_text())
        ours = doc["methods"]["ours"]
        assert set(ours["metrics"]) == {
            "auc",
            "final_return",
            "episodes_to_threshold",
            "jump_start",
            "improvement",
        }
        assert np.array(ours["metrics"]["auc"]).shape == (5, 4)  # per run, not aggregates
        assert compare_runs(inputs_of(noisy()), published).regressions == []
        worse = compare_runs(inputs_of(shifted("ours", -1.0)), published, metric="jump_start")
        assert worse.regressions == ["ours"]

    def test_threshold_units_must_agree(self, baseline):
        frames = dataclasses.replace(inputs_of(noisy()), frame_budget=20 * 150)
        with pytest.raises(CompareError, match="counts episodes_to_threshold in episodes"):
            compare_runs(frames, baseline, metric="episodes_to_threshold")

    def test_the_table_describes_the_difference_over_seeds_and_tasks(self, baseline):
        same = compare_runs(inputs_of(noisy()), baseline)
        for row in same.rows:  # a rerun ties every pair
            assert row.paired_improvement == 0.5
            assert (row.task_ci_low, row.task_ci_high) == (0.0, 0.0)
        worse = compare_runs(inputs_of(shifted("ours", -1.0)), baseline)
        ours = next(r for r in worse.rows if r.method == "ours")
        # Every (seed, task) auc drops by exactly 1: the run loses every pair, and both intervals
        # are the shift itself.
        assert ours.paired_improvement == 0.0
        assert ours.task_ci_low == pytest.approx(-1.0) and ours.task_ci_high == pytest.approx(-1.0)
        text = format_comparison(worse)
        assert "CI tasks" in text and "P(run>base)" in text
