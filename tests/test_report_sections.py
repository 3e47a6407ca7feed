"""Report sections: the leaderboard files as main's code wrote them, plus the CPU seconds table.

``fixtures/sections_golden`` holds the leaderboard files of a small chain run (zero-shot column,
discovery cost, demonstrations, normalised scores) written by the report code before the sections
existed. A fresh run of the same spec must give the same bytes, the new "CPU seconds" and
"Cloning fit" tables aside; a store written before the runner measured CPU seconds and the control
its fit reads as missing and gives exactly the old bytes. ``fixtures/sections_golden/degenerate``
holds the same run's files as the report wrote them before the demonstrations and degenerate
options became sections, with every tabular option flagged as degenerate (thresholds at 0).
``fixtures/sections_golden/normalised`` holds the leaderboard files of synthetic runs whose
reference returns leave some or every (seed, task) pair without a normalised score, written by the
report code before the normalised scores became a section. The golden run's evaluation cells
record their option counts, so a fresh run also gains the "Option usage" table; a store without
them gives the old bytes.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from report_fakes import linear_table, stored_run

from opt_suite.cli import main
from opt_suite.report.cpu_seconds import SECTION as CPU_SECONDS
from opt_suite.report.cpu_seconds import CpuSeconds
from opt_suite.report.demonstrations import SECTION as DEMONSTRATIONS
from opt_suite.report.demonstrations import DemonstrationsKept, TaskDemonstrations
from opt_suite.report.normalise import References
from opt_suite.report.option_usage import totals
from opt_suite.report.option_usage_section import SECTION as OPTION_USAGE
from opt_suite.report.sections import SECTIONS, STORE_SECTIONS, collect_sections
from opt_suite.runner.cells import CPU_SECONDS_INFO
from opt_suite.store import ResultsStore
from opt_suite.store.files import USAGE_FILE

GOLDEN = Path(__file__).resolve().parent / "fixtures" / "sections_golden"
FILES = ("leaderboard.md", "leaderboard.csv", "leaderboard.json", "runs.json")
CPU_TABLE = re.compile(r"## CPU seconds\n.*?(?=\n## |\Z)", re.S)
FIT_TABLE = re.compile(r"## Cloning fit\n.*?(?=\n## |\Z)", re.S)
USAGE_TABLE = re.compile(r"## Option usage\n.*?(?=\n## |\Z)", re.S)
#: What the cloning control records about its fit (issue 35), after the golden files were written.
FIT_INFO = ("fit_accuracy", "fit_log_likelihood", "held_out_accuracy", "held_out_log_likelihood")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("sections") / "out"
    spec = GOLDEN / "spec.yaml"
    assert main(["run", str(spec), "--out", str(out), "--workers", "0", "--quiet"]) == 0
    return out


def test_every_cell_records_its_cpu_seconds(run):
    with ResultsStore(run) as store:
        cells = [c for c in store.cells() if c.status == "done"]
    # 2 demonstrations + 2 entries x 2 seeds x (1 discovery + 2 tasks) + 2 seeds x 2 references
    assert len(cells) == 18
    seconds = [c.info[CPU_SECONDS_INFO] for c in cells]
    assert all(isinstance(s, float) and s >= 0 for s in seconds)
    assert sum(seconds) > 0  # behaviour cloning trains a network: not nothing


def test_the_run_records_its_familys_frame_unit(run):
    with ResultsStore(run) as store:
        assert store.run_family() == {"name": "chain", "frame_unit": "env steps"}


def test_the_leaderboard_is_mains_bytes_plus_the_cpu_cloning_fit_and_usage_tables(run):
    for name in FILES:
        new, old = (run / name).read_text(), (GOLDEN / name).read_text()
        if name == "leaderboard.md":
            (table,) = CPU_TABLE.findall(new)
            assert "| bc | " in table and "| 6 of 6 |" in table
            (fit,) = FIT_TABLE.findall(new)
            assert "| bc | " in fit and "| 2 (0) |" in fit  # one demonstration: none held out
            (usage,) = USAGE_TABLE.findall(new)
            assert "| bc | " in usage and "| primitives |" not in usage  # no options: left out
            new = CPU_TABLE.sub("", FIT_TABLE.sub("", USAGE_TABLE.sub("", new)))
            new = re.sub(r"\n{3,}", "\n\n", new)
        if name == "leaderboard.json":  # one more top-level key each, the rest as before
            found = json.loads(new)
            assert set(found.pop("cloning_fit")) == {"bc"}
            assert set(found.pop("option_usage")) == {"bc"}
            assert found == json.loads(old)
            continue
        assert new == old, name
    assert "cpu" not in json.loads((run / "leaderboard.json").read_text())


def _as_written_before(run, folder):
    """A copy of ``run`` whose cells lack what the runner records since the golden files."""
    shutil.copytree(run, folder)
    with sqlite3.connect(folder / "results.sqlite") as db:  # as the runner wrote cells before
        for key in (CPU_SECONDS_INFO, *FIT_INFO):
            db.execute("UPDATE cells SET info = json_remove(info, ?)", (f"$.{key}",))
        # A learner that counted no option choices recorded no counts file.
        db.execute("UPDATE verification SET files = json_remove(files, ?)", (f'$."{USAGE_FILE}"',))
    db.close()
    return folder


def test_a_store_without_cpu_seconds_reports_mains_bytes_exactly(run, tmp_path):
    old = _as_written_before(run, tmp_path / "old")
    assert main(["report", str(old)]) == 0
    for name in FILES:
        assert (old / name).read_bytes() == (GOLDEN / name).read_bytes(), name


def test_degenerate_options_and_demonstrations_as_sections_give_mains_bytes(
    run, tmp_path, monkeypatch
):
    import opt_suite.report.degenerate as degenerate

    old = _as_written_before(run, tmp_path / "old")
    monkeypatch.setattr(degenerate, "COPY_TERMINATION", 0.0)  # every tabular option a copy
    monkeypatch.setattr(degenerate, "COPY_ACTION", 0.0)
    assert main(["report", str(old)]) == 0
    text = (old / "leaderboard.md").read_text()
    assert text.count("degenerate option: bc, seed ") == 2 and "## Demonstrations" in text
    for name in FILES:
        assert (old / name).read_bytes() == (GOLDEN / "degenerate" / name).read_bytes(), name


def test_section_caveats_go_before_or_after_the_statistics_caveats():
    from opt_suite.report.build import ReportInputs, analyse, leaderboard

    silent = TaskDemonstrations(0, "t/train/0", (0.0,), (3,), (False,))
    inputs = ReportInputs(
        episodes=linear_table({"a": 0.0, "b": 1.0}),
        spec_name="s",
        spec_hash="0" * 64,
        reference_warnings=("no normalised scores: a reference warning",),
        discovery_warnings=("discovery of 'b' (seed 0): a discovery warning",),
        sections={
            "degenerate_options": ("b, seed 0: option 'o' was never chosen",),
            "demonstrations": DemonstrationsKept((silent,), asked=None),
        },
    )
    warnings = leaderboard(inputs, analyse(inputs)).warnings
    order = [
        next(i for i, w in enumerate(warnings) if w.startswith(start))
        for start in (
            "demonstrations score nothing",  # what the methods were given ("inputs")
            "episodes_to_threshold's thresholds come from",  # the statistics' own
            "no normalised scores: a reference warning",
            "degenerate option: b, seed 0",  # what they produced ("outputs")
            "discovery of 'b'",
        )
    ]
    assert order == sorted(order)


def test_the_demonstrations_section_is_left_out_without_demonstrations():
    assert "demonstrations" not in collect_sections([], ["a"], stored_run())
    assert DEMONSTRATIONS.caveats(DemonstrationsKept(())) == ()


def cell(kind, method, status="done", **info):
    return SimpleNamespace(
        cell_id=f"{kind}-{method}", kind=kind, method=method, seed=0, status=status, info=info
    )


def test_cpu_seconds_sum_per_entry_and_stage_over_done_cells_that_recorded_them():
    cells = [
        cell("demonstrations", None, cpu_s=9.0),  # shared by every entry: in no entry's sum
        cell("discovery", "a", cpu_s=2.0),
        cell("discovery", "a", cpu_s=3.0),
        cell("evaluation", "a", cpu_s=0.5),
        cell("evaluation", "a"),  # stored before the runner measured it
        cell("evaluation", "a", status="failed", cpu_s=100.0),
        cell("evaluation", "b", cpu_s=1.25),
        cell("evaluation", "gone", cpu_s=7.0),  # not reported
    ]
    found = CPU_SECONDS.collect(cells, ["a", "b"], stored_run())
    assert found == {"a": CpuSeconds(5.0, 0.5, 3, 4), "b": CpuSeconds(0.0, 1.25, 1, 1)}
    text = CPU_SECONDS.markdown(found, {})
    assert "| a | 5.00 | 0.50 | 3 of 4 |" in text and "| b | 0.00 | 1.25 | 1 of 1 |" in text
    assert CPU_SECONDS.json(found) == {}


def test_a_run_with_nothing_measured_has_no_section():
    cells = [cell("evaluation", "a"), cell("discovery", "a", demonstration_steps=4)]
    found = collect_sections(cells, ["a"], stored_run())
    assert "cpu_seconds" not in found and "zero_shot_return" not in found
    assert "demonstrations" not in found and "degenerate_options" not in found
    assert found["discovery_cost"]["a"].demonstration_steps == 4


def test_the_registry_keys_are_unique_in_the_order_the_leaderboard_shows_them():
    assert len({s.key for s in SECTIONS}) == len(SECTIONS)
    assert [s.key for s in SECTIONS] == [
        "normalised",  # its JSON key before the others', as before it was a section
        "zero_shot_return",
        "discovery_cost",
        "cloning_fit",
        "cpu_seconds",
        "option_usage",
        "demonstrations",  # after the other sections' parts of leaderboard.md, as before
        "degenerate_options",
    ]
    assert list(SECTIONS[1:]) == list(STORE_SECTIONS)  # every other one collects from the store
    assert {s.caveat_place for s in SECTIONS} == {"inputs", "scale", "outputs"}
    assert [s.key for s in SECTIONS if s.markdown_place == "tables"] == ["normalised"]


def _synthetic_inputs(case):
    """The synthetic runs of ``fixtures/sections_golden/normalised`` (as main's code reported)."""
    from report_fakes import linear_table

    from opt_suite.report.build import ReportInputs
    from opt_suite.spec.schema import ReportSpec

    name, per_seed = case.rsplit("-", 1)
    experts = {
        "some_undefined": [[10.0, 10.0, 10.0], [10.0, -12.0, 10.0], [10.0, 10.0, 10.0]],
        "all_undefined": [[-20.0] * 3] * 3,
    }
    refs = References(
        (0, 1, 2), (0, 1, 2), np.full((3, 3), -10.0), np.array(experts[name]), "optimal expert"
    )
    return ReportInputs(
        episodes=linear_table({"a": 0.0, "b": 1.0, "c": 2.0}, seeds=3, tasks=3, noise=1.0),
        spec_name="s",
        spec_hash="0" * 64,
        settings=ReportSpec(baseline="a", bootstrap=200),
        references=refs,
        tasks_per_seed=per_seed == "per_seed",
    )


# curves.png's normalised panel has no line when no pair has a scale (main's code warns too).
@pytest.mark.filterwarnings("ignore:No artists with labels found")
@pytest.mark.parametrize(
    "case", ["some_undefined-shared", "some_undefined-per_seed", "all_undefined-shared"]
)
def test_normalised_scores_as_a_section_give_mains_bytes_with_undefined_references(case, tmp_path):
    from opt_suite.report.build import write_report_files

    write_report_files(_synthetic_inputs(case), tmp_path)
    for name in ("leaderboard.md", "leaderboard.csv", "leaderboard.json"):
        expected = (GOLDEN / "normalised" / case / name).read_bytes()
        assert (tmp_path / name).read_bytes() == expected, name
    text = (tmp_path / "leaderboard.md").read_text()
    if case.startswith("all"):  # no pair has a scale: the caveat says so, and no table
        assert "NO NORMALISED SCORES" in text and "**Normalised scores" not in text
    else:  # between the auc split and the verdicts, naming the pair without a scale
        assert "(seed 1 task 1)" in text and "n = 6 of 9 pairs remain" in text
        split, table, verdicts = (
            text.index(f"**{title}") for title in ("The auc split", "Normalised", "Verdicts")
        )
        assert split < table < verdicts


def test_the_normalised_section_shows_the_cores_estimates():
    from opt_suite.report.build import analyse, leaderboard
    from opt_suite.report.normalised_section import SECTION as NORMALISED

    inputs = _synthetic_inputs("some_undefined-shared")
    board = leaderboard(inputs, analyse(inputs))
    part = board.sections["normalised"]
    assert part.references is inputs.references and part.table is not None
    assert part.table.tasks == ("0", "2") and part.table.pairs == (6, 9)
    for row in board.rows:  # the very estimates the core computed, not a second computation
        assert dict(part.table.rows)[row.method] == row.normalised
    found = NORMALISED.json(part)["normalised"]["methods"]["b"]["auc"]
    assert found["iqm"] == next(r for r in board.rows if r.method == "b").normalised["auc"].iqm
    (caveat,) = NORMALISED.caveats(part)
    assert caveat in board.warnings


def test_option_usage_is_option_usages_own_numbers_from_the_recorded_counts(run):
    from opt_suite.report.section import StoredRun
    from opt_suite.report.usage_replay import view_usage
    from opt_suite.run_view import RunView
    from opt_suite.spec.stored import stored_sections

    with RunView(run) as view:  # opt-suite option-usage's reader: it reads what the run recorded
        runs, notes = view_usage(view, ["bc"], view.store.seeds())
        assert any("counted their option choices when they ran" in n for n in notes)
        found = OPTION_USAGE.collect(
            view.store.cells(),
            ["primitives", "bc"],
            StoredRun(view.store, stored_sections(view.store.spec_yaml())),
        )
    assert list(found) == ["bc"]  # primitives have no options: left out
    usage = found["bc"]
    assert (usage.runs, usage.of_runs) == (4, 4)
    assert usage.all == totals(runs, "all", 0.1) and usage.last == totals(runs, "last", 0.1)
    assert usage.all.decisions > 0 and usage.all.option_calls > 0  # the learner chose the option
    doc = json.loads((run / "leaderboard.json").read_text())["option_usage"]["bc"]
    assert doc["option_fraction"] == pytest.approx(usage.all.option_fraction)
    assert doc["mean_option_length"] == pytest.approx(usage.all.mean_option_length)
    assert doc["runs"] == 4


def test_option_usage_is_left_out_when_no_cell_recorded_counts():
    cells = [cell("evaluation", "a", cpu_s=1.0), cell("evaluation", "b")]
    assert OPTION_USAGE.collect(cells, ["a", "b"], stored_run()) == {}
    assert "option_usage" not in collect_sections(cells, ["a", "b"], stored_run())
