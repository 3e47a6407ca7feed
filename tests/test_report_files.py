"""The report files written from synthetic results: names, columns, JSON shape and hand numbers."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from report_fakes import linear_table

from opt_suite.report import REPORT_FILES, ReportInputs, write_report_files
from opt_suite.report.curves import curve_bands
from opt_suite.report.episodes import learning_curves
from opt_suite.spec.schema import ReportSpec

SETTINGS = ReportSpec(threshold=0.0, bootstrap=200)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """Primitives (shift 0) and ours (shift 5), 2 seeds x 2 tasks x 20 episodes (report_fakes)."""
    out = tmp_path_factory.mktemp("report")
    (out / "pictures").mkdir()
    inputs = ReportInputs(
        linear_table({"primitives": 0.0, "ours": 5.0}),
        spec_name="toy-spec",
        spec_hash="feedc0de",
        settings=SETTINGS,
        methods=("primitives", "ours"),
        pictures=("pictures/ours-seed0.png",),
    )
    return out, write_report_files(inputs, out)


def test_every_file_is_written(report):
    out, paths = report
    assert [p.name for p in paths] == list(REPORT_FILES)
    assert all((out / name).stat().st_size > 0 for name in REPORT_FILES)


def test_returns_csv_is_every_episode_in_spec_order(report):
    out, _ = report
    with (out / "returns.csv").open() as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["method", "seed", "task", "episode", "return", "steps", "frames"]
    assert len(rows) == 1 + 2 * 2 * 2 * 20
    # r = -10 + e + s + 2t + k; steps = 100 + e; frames = the run's steps so far.
    assert rows[1] == ["primitives", "0", "0", "0", "-10.0", "100", "100"]
    assert rows[2] == ["primitives", "0", "0", "1", "-9.0", "101", "201"]
    assert rows[20 + 1] == ["primitives", "0", "1", "0", "-8.0", "100", "100"]
    assert rows[-1] == ["ours", "1", "1", "19", "17.0", "119", str(sum(range(100, 120)))]


def test_leaderboard_json_shape_and_numbers(report):
    out, _ = report
    doc = json.loads((out / "leaderboard.json").read_text())
    assert set(doc) == {
        "spec",
        "warnings",
        "methods",
        "probability_of_improvement",
        "paired_probability_of_improvement",
        "verdicts",
        "protocol",
    }
    # 2 seeds: the intervals are flagged; the returns rise by 1 per episode: learning is seen.
    assert len(doc["warnings"]) == 1 and "too few runs" in doc["warnings"][0]
    assert doc["spec"] == {"name": "toy-spec", "hash": "feedc0de"}
    assert list(doc["methods"]) == ["ours", "primitives"]  # best auc IQM first
    for per_metric in doc["methods"].values():
        assert set(per_metric) == {
            "auc",
            "final_return",
            "episodes_to_threshold",
            "jump_start",
            "improvement",
        }
        for fields in per_metric.values():
            assert set(fields) == {
                "mean",
                "se",
                "iqm",
                "ci_low",
                "ci_high",
                "task_ci_low",
                "task_ci_high",
            }
    # primitives' auc runs: -0.5 + s + 2t = -0.5, 1.5, 0.5, 2.5 -> mean 1, se sqrt(5/3)/2, IQM
    # (drop one at each end) mean(0.5, 1.5) = 1.
    auc = doc["methods"]["primitives"]["auc"]
    assert auc["mean"] == pytest.approx(1.0)
    assert auc["se"] == pytest.approx(np.sqrt(5 / 3) / 2)
    assert auc["iqm"] == pytest.approx(1.0)
    assert auc["ci_low"] <= 1.0 <= auc["ci_high"]
    assert auc["task_ci_low"] <= 1.0 <= auc["task_ci_high"]
    # The first 10% of 20 episodes is episodes 0 and 1: jump start -9.5 + s + 2t (mean -8); the
    # rest (episodes 2..19, mean e = 10.5) sits 10 above it on every run.
    assert doc["methods"]["primitives"]["jump_start"]["mean"] == pytest.approx(-8.0)
    assert doc["methods"]["primitives"]["improvement"]["iqm"] == pytest.approx(10.0)
    # ours' episodes_to_threshold runs: 11, 10, 10, 10 -> mean 10.25.
    assert doc["methods"]["ours"]["episodes_to_threshold"]["mean"] == pytest.approx(10.25)
    poi = doc["probability_of_improvement"]
    assert poi["baseline"] == "primitives"
    assert list(poi["methods"]) == ["ours"]
    # Every ours run beats every primitives run on the same task, on every metric.
    certain = dict.fromkeys(
        ("probability", "ci_low", "ci_high", "task_ci_low", "task_ci_high"), 1.0
    )
    for metric in ("auc", "final_return", "episodes_to_threshold", "jump_start"):
        assert poi["methods"]["ours"][metric] == certain
        # ...and so does every run of the same seed and task.
        assert doc["paired_probability_of_improvement"]["methods"]["ours"][metric] == certain
    # improvement is 10 for both: every pair ties.
    assert doc["paired_probability_of_improvement"]["methods"]["ours"]["improvement"][
        "probability"
    ] == pytest.approx(0.5)
    protocol = doc["protocol"]
    assert (protocol["seeds"], protocol["tasks"], protocol["episodes"]) == (2, 2, 20)
    assert protocol["lower_is_better"] == ["episodes_to_threshold"]
    assert protocol["thresholds"] == {"0": 0.0, "1": 0.0}
    assert protocol["threshold_unit"] == "episodes"
    assert protocol["threshold_rule"] == "report.threshold = 0 on every task"
    assert "normalised" not in doc  # no reference returns
    # ours wins every pair, but 2 seeds give no verdict; the default margins are recorded.
    verdicts = doc["verdicts"]
    assert (verdicts["baseline"], verdicts["metric"], list(verdicts["methods"])) == (
        "primitives",
        "auc",
        ["ours"],
    )
    ours = verdicts["methods"]["ours"]
    assert (ours["outcome"], ours["scale"], ours["effect"]) == ("inconclusive", "P", 1.0)
    assert ours["caveat"].startswith("NO VERDICT: 2 seeds")
    assert "1 comparison at a 95% family-wise confidence" in verdicts["familywise"]
    assert protocol["equivalence"] == {"normalised": 0.1, "p": 0.1}
    assert (
        "| ours | inconclusive: paired P 1.00 [1.00, 1.00] (95% CI [seeds×tasks]);"
        in (out / "leaderboard.md").read_text()
    )


def test_leaderboard_csv(report):
    out, _ = report
    with (out / "leaderboard.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == [
        "method",
        "metric",
        "runs",
        "mean",
        "se",
        "iqm",
        "ci_low",
        "ci_high",
        "p_improvement",
        "p_improvement_ci_low",
        "p_improvement_ci_high",
        "task_ci_low",
        "task_ci_high",
        "p_improvement_task_ci_low",
        "p_improvement_task_ci_high",
        "paired_p_improvement",
        "paired_p_ci_low",
        "paired_p_ci_high",
        "paired_p_task_ci_low",
        "paired_p_task_ci_high",
    ]
    assert [(r["method"], r["metric"]) for r in rows] == [
        (m, k)
        for m in ("ours", "primitives")
        for k in ("auc", "final_return", "episodes_to_threshold", "jump_start", "improvement")
    ]
    ours_final = rows[1]
    # ours' final returns 8.5 + s + 2t + 5: 13.5, 15.5, 14.5, 16.5 -> mean 15.
    assert float(ours_final["mean"]) == pytest.approx(15.0)
    assert ours_final["runs"] == "4"
    assert float(ours_final["p_improvement"]) == 1.0
    assert float(ours_final["paired_p_improvement"]) == 1.0
    assert rows[5]["method"] == "primitives"
    assert rows[5]["p_improvement"] == rows[5]["paired_p_improvement"] == ""  # not against itself


def test_leaderboard_markdown(report):
    out, _ = report
    text = (out / "leaderboard.md").read_text()
    assert "# Leaderboard: toy-spec" in text
    assert "hash `feedc0de`" in text
    assert "2 seeds × 2 test tasks × 20 episodes" in text
    table = [line for line in text.splitlines() if line.startswith("|")]
    assert table[0].startswith("| method | auc ↑: mean ± s.e. | auc: IQM [95% CI seeds] [tasks] |")
    assert table[0].endswith(
        "| P(auc > primitives) [seeds] [tasks] | paired P(auc > primitives) [seeds] [tasks] |"
    )
    assert table[2].startswith("| ours | 6.00 ± 0.65 |")
    assert table[2].endswith("| 1.00 [1.00, 1.00] [1.00, 1.00] | 1.00 [1.00, 1.00] [1.00, 1.00] |")
    assert table[3].startswith("| primitives | 1.00 ± 0.65 | 1.00 [")
    assert table[3].endswith("| — | — |")
    assert "episodes_to_threshold ↓" in table[0]
    # The second table splits the auc: jump start -8 (ours +5), improvement 10 for both.
    split = text.index("**The auc split: jump start and improvement**")
    assert "| ours | -3.00 [" in text[split:] and "| 10.00 [10.00, 10.00]" in text[split:]
    assert "[seeds] resamples seeds with replacement within each task" in text
    assert "paired P = the fraction of (seed, task) pairs" in text


def test_curves_png_and_its_numbers(report):
    out, _ = report
    data = (out / "curves.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    curves = learning_curves(linear_table({"primitives": 0.0}))
    mean, se = curve_bands(curves["primitives"])
    # mean over s, t in {0, 1} of -10 + e + s + 2t = e - 8.5; spread of s + 2t: 0, 2, 1, 3.
    np.testing.assert_allclose(mean, np.arange(20) - 8.5)
    np.testing.assert_allclose(se, np.sqrt(5 / 3) / 2)


def test_index_html_is_self_contained(report):
    out, _ = report
    page = (out / "index.html").read_text()
    assert '<img src="curves.png"' in page
    assert 'src="pictures/ours-seed0.png"' in page
    assert "<td>ours</td>" in page and "<td>primitives</td>" in page
    assert "feedc0de" in page
    assert "http" not in page and "<script" not in page


def test_no_baseline_entry_means_no_improvement_column(tmp_path):
    inputs = ReportInputs(
        linear_table({"a": 0.0, "b": 1.0}), "x", "h", ReportSpec(baseline=None, bootstrap=100)
    )
    write_report_files(inputs, tmp_path)
    doc = json.loads((tmp_path / "leaderboard.json").read_text())
    assert doc["probability_of_improvement"] == {"baseline": None, "methods": {}}
    assert "P(" not in (tmp_path / "leaderboard.md").read_text()


def test_one_run_has_no_standard_error(tmp_path):
    inputs = ReportInputs(linear_table({"a": 0.0}, seeds=1, tasks=1), "x", "h", SETTINGS)
    write_report_files(inputs, tmp_path)
    doc = json.loads((tmp_path / "leaderboard.json").read_text())
    assert doc["methods"]["a"]["auc"]["se"] is None
    assert "-0.50 ± n/a" in (tmp_path / "leaderboard.md").read_text()


def test_reports_are_deterministic(tmp_path):
    inputs = ReportInputs(linear_table({"primitives": 0.0, "ours": 0.5}, noise=3.0), "x", "h")
    write_report_files(inputs, tmp_path / "a")
    write_report_files(inputs, tmp_path / "b")
    for name in ("leaderboard.json", "leaderboard.csv", "leaderboard.md", "returns.csv"):
        assert (tmp_path / "a" / name).read_text() == (tmp_path / "b" / name).read_text()


def test_fig1a_is_drawn_from_training_curves_and_shown_in_index_html(tmp_path):
    from opt_suite.report.fig1a import training_curves
    from opt_suite.store import CurveRow

    rows = [
        CurveRow("ours", seed, name, step, value)
        for seed in (0, 1)
        for name, values in {
            "jhat": [-9.0, -4.0, -6.0, -3.0],
            "likelihood": [-0.9, -0.4, -0.5, -0.2],
            "terminations": [0.9, 0.5, 0.6, 0.4],
            "option_round": [0.0, 0.0, 1.0, 1.0],
            "kl": [0.0, 0.0, 0.1, 0.1],
        }.items()
        for step, value in enumerate(values)
    ] + [CurveRow("other", 0, "loss", 0, 1.0)]  # a method without Ĵ curves is left out
    training = training_curves(rows)
    assert set(training) == {"ours"} and set(training["ours"]) == {0, 1}
    np.testing.assert_array_equal(training["ours"][1]["jhat"], [-9.0, -4.0, -6.0, -3.0])
    inputs = ReportInputs(
        linear_table({"primitives": 0.0, "ours": 5.0}),
        spec_name="toy-spec",
        spec_hash="feedc0de",
        settings=SETTINGS,
        training=training,
    )
    paths = write_report_files(inputs, tmp_path / "with")
    assert [p.name for p in paths] == [*REPORT_FILES, "fig1a.png"]
    assert (tmp_path / "with" / "fig1a.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert 'src="fig1a.png"' in (tmp_path / "with" / "index.html").read_text()
    plain = ReportInputs(inputs.episodes, "toy-spec", "feedc0de", SETTINGS)
    assert [p.name for p in write_report_files(plain, tmp_path / "without")] == list(REPORT_FILES)
    assert "fig1a" not in (tmp_path / "without" / "index.html").read_text()


def test_fig1a_legend_names_every_line_it_draws():
    # Two seeds are two lines per entry: the bold one is named with its seed, the faint ones share
    # one legend entry (a legend with one name for two curves misled readers).
    import matplotlib.pyplot as plt

    from opt_suite.report.fig1a import fig1a_figure

    values = {
        "jhat": np.array([-9.0, -4.0]),
        "likelihood": np.array([-0.9, -0.4]),
        "terminations": np.array([0.9, 0.5]),
        "option_round": np.array([0.0, 0.0]),
    }
    fig = fig1a_figure({"ours": {0: values, 3: values}}, "t")
    try:
        texts = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    finally:
        plt.close(fig)
    assert texts == ["ours, seed 0", "other seeds (faint)"]
    fig = fig1a_figure({"ours": {0: values}}, "t")
    try:
        assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["ours, seed 0"]
    finally:
        plt.close(fig)


class TestCaveats:
    """The leaderboard warns when its intervals or its ranking cannot mean much."""

    def write(self, tmp_path, table):
        write_report_files(ReportInputs(table, "x", "h", SETTINGS), tmp_path)
        doc = json.loads((tmp_path / "leaderboard.json").read_text())
        return (
            doc["warnings"],
            (tmp_path / "leaderboard.md").read_text(),
            (tmp_path / "index.html").read_text(),
        )

    def test_enough_seeds_and_learning_give_no_warning(self, tmp_path):
        warnings, md, page = self.write(tmp_path, linear_table({"a": 0.0, "b": 1.0}, seeds=5))
        assert warnings == [] and "Warning" not in md and "Warning" not in page

    def test_few_seeds_are_flagged_everywhere(self, tmp_path):
        warnings, md, page = self.write(tmp_path, linear_table({"a": 0.0, "b": 1.0}, seeds=2))
        assert warnings == [
            "too few runs for the intervals to mean much: a, b have 2 seeds per task; the"
            " stratified bootstrap resamples seeds within tasks and understates the uncertainty"
            " with fewer than 5 (raise evaluation.seeds)"
        ]
        assert f"> **Warning:** {warnings[0]}" in md and "too few runs" in page

    def test_flat_noisy_curves_mean_nothing_learned(self, tmp_path):
        rng = np.random.default_rng(0)
        rows = [
            (m, s, t, e, float(rng.normal()), 10)
            for m in ("a", "b")
            for s in range(5)
            for t in range(3)
            for e in range(30)
        ]
        from opt_suite.report import EpisodeTable

        warnings, md, _ = self.write(tmp_path, EpisodeTable.from_rows(rows))
        assert len(warnings) == 1 and warnings[0].startswith("nothing learned")
        assert "ranking is noise" in md

    def test_one_learning_method_is_enough(self, tmp_path):
        from opt_suite.report.caveats import learned

        curves = learning_curves(linear_table({"a": 0.0}, seeds=5), None)
        assert learned(curves["a"], 0.1)
        flat = linear_table({"a": 0.0}, seeds=5, episodes=1)
        assert not learned(learning_curves(flat, None)["a"], 0.1)


def test_discovery_png_draws_interaction_curves_and_is_shown_in_index_html(tmp_path):
    from opt_suite.report.interaction_curves import interaction_curves
    from opt_suite.store import CurveRow

    rows = [
        CurveRow("critic", seed, name, step, value)
        for seed in (0, 1)
        for name, values in {
            "steps_per_episode": [400.0 + seed, 90.0, 20.0],
            "mean_option_duration": [2.0, 1.5, float("nan")],
        }.items()
        for step, value in enumerate(values)
    ]
    rows += [CurveRow("budget", 0, "steps_per_episode", 0, 5.0)]
    rows += [CurveRow("budget", 1, "steps_per_episode", s, 6.0) for s in range(2)]  # ragged
    rows += [CurveRow("ours", 0, "jhat", 0, -1.0)]  # no interaction curve: left out
    curves = interaction_curves(rows)
    assert set(curves) == {"critic", "budget"}
    # Seeds that ran different numbers of episodes are cut to the shortest.
    np.testing.assert_array_equal(curves["budget"]["steps_per_episode"], [[5.0], [6.0]])
    curves.pop("budget")
    np.testing.assert_array_equal(curves["critic"]["steps_per_episode"][1], [401.0, 90.0, 20.0])
    assert curves["critic"]["mean_option_duration"].shape == (2, 3)
    inputs = ReportInputs(
        linear_table({"primitives": 0.0, "critic": 5.0}),
        spec_name="toy-spec",
        spec_hash="feedc0de",
        settings=SETTINGS,
        interaction=curves,
    )
    paths = write_report_files(inputs, tmp_path / "with")
    assert [p.name for p in paths] == [*REPORT_FILES, "discovery.png"]
    assert (tmp_path / "with" / "discovery.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert 'src="discovery.png"' in (tmp_path / "with" / "index.html").read_text()


def test_an_incomplete_run_says_what_it_left_out_in_every_leaderboard_file(tmp_path):
    reason = "discovery of 'ours' seed 3 is failed: NonFiniteObjective: training diverged"
    inputs = ReportInputs(
        linear_table({"primitives": 0.0, "ours": 5.0}),
        spec_name="toy-spec",
        spec_hash="feedc0de",
        settings=SETTINGS,
        incomplete=(reason,),
    )
    write_report_files(inputs, tmp_path)
    board = json.loads((tmp_path / "leaderboard.json").read_text())
    assert board["warnings"][0] == f"incomplete run, left out: {reason}"
    assert reason in (tmp_path / "leaderboard.md").read_text()
    assert reason in (tmp_path / "index.html").read_text().replace("&#x27;", "'")
