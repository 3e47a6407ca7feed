"""Report sections: the leaderboard files as main's code wrote them, plus the CPU seconds table.

``fixtures/sections_golden`` holds the leaderboard files of a small chain run (zero-shot column,
discovery cost, demonstrations, normalised scores) written by the report code before the sections
existed. A fresh run of the same spec must give the same bytes, the new "CPU seconds" and
"Cloning fit" tables aside; a store written before the runner measured CPU seconds and the control
its fit reads as missing and gives exactly the old bytes. ``fixtures/sections_golden/degenerate``
holds the same run's files as the report wrote them before the demonstrations and degenerate
options became sections, with every tabular option flagged as degenerate (thresholds at 0).
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from pathlib import Path
from types import SimpleNamespace

import pytest
from report_fakes import linear_table, stored_run

from opt_suite.cli import main
from opt_suite.report.cpu_seconds import SECTION as CPU_SECONDS
from opt_suite.report.cpu_seconds import CpuSeconds
from opt_suite.report.demonstrations import SECTION as DEMONSTRATIONS
from opt_suite.report.demonstrations import DemonstrationsKept, TaskDemonstrations
from opt_suite.report.sections import SECTIONS, collect_sections
from opt_suite.runner.cells import CPU_SECONDS_INFO
from opt_suite.store import ResultsStore

GOLDEN = Path(__file__).resolve().parent / "fixtures" / "sections_golden"
FILES = ("leaderboard.md", "leaderboard.csv", "leaderboard.json", "runs.json")
CPU_TABLE = re.compile(r"## CPU seconds\n.*?(?=\n## |\Z)", re.S)
FIT_TABLE = re.compile(r"## Cloning fit\n.*?(?=\n## |\Z)", re.S)
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


def test_the_leaderboard_is_mains_bytes_plus_the_cpu_and_cloning_fit_tables(run):
    for name in FILES:
        new, old = (run / name).read_text(), (GOLDEN / name).read_text()
        if name == "leaderboard.md":
            (table,) = CPU_TABLE.findall(new)
            assert "| bc | " in table and "| 6 of 6 |" in table
            (fit,) = FIT_TABLE.findall(new)
            assert "| bc | " in fit and "| 2 (0) |" in fit  # one demonstration: none held out
            new = re.sub(r"\n{3,}", "\n\n", CPU_TABLE.sub("", FIT_TABLE.sub("", new)))
        if name == "leaderboard.json":  # the fit is one more top-level key, the rest as before
            found = json.loads(new)
            assert set(found.pop("cloning_fit")) == {"bc"} and found == json.loads(old)
            continue
        assert new == old, name
    assert "cpu" not in json.loads((run / "leaderboard.json").read_text())


def _as_written_before(run, folder):
    """A copy of ``run`` whose cells lack what the runner records since the golden files."""
    shutil.copytree(run, folder)
    with sqlite3.connect(folder / "results.sqlite") as db:  # as the runner wrote cells before
        for key in (CPU_SECONDS_INFO, *FIT_INFO):
            db.execute("UPDATE cells SET info = json_remove(info, ?)", (f"$.{key}",))
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
    return SimpleNamespace(kind=kind, method=method, seed=0, status=status, info=info)


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
        "zero_shot_return",
        "discovery_cost",
        "cloning_fit",
        "cpu_seconds",
        "demonstrations",  # after the other sections' parts of leaderboard.md, as before
        "degenerate_options",
    ]
    assert {s.caveat_place for s in SECTIONS} == {"inputs", "outputs"}
