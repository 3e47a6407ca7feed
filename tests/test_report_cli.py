"""``write_reports`` and ``opt-suite report`` on real stores, written as the runner does."""

from __future__ import annotations

import csv
import json
import logging
import subprocess
import sys

import pytest
from report_fakes import linear_table, write_store

from opt_suite.cli import main
from opt_suite.report import REPORT_FILES, ReportDataError, load_baseline, write_reports
from opt_suite.report.source import load_inputs
from opt_suite.spec.schema import ReportSpec
from opt_suite.store import StoreError
from opt_suite.store.writer import StoreWriter

SETTINGS = ReportSpec(threshold=0.0, bootstrap=100)


@pytest.fixture
def store(tmp_path):
    return write_store(
        tmp_path / "run", linear_table({"primitives": 0.0, "ours": 5.0}), report=SETTINGS
    )


def test_write_reports_from_a_store(store):
    paths = write_reports(store)
    assert [p.name for p in paths] == list(REPORT_FILES)
    assert all(p.parent == store for p in paths)
    with (store / "returns.csv").open() as f:
        rows = list(csv.reader(f))
    assert rows[1] == ["primitives", "0", "0", "0", "-10.0", "100", "100"]
    doc = json.loads((store / "leaderboard.json").read_text())
    assert doc["spec"] == {"name": "synthetic", "hash": "0123456789abcdef"}
    assert doc["protocol"]["thresholds"] == {"0": 0.0, "1": 0.0}  # the stored spec's report section


def test_write_reports_in_a_fresh_process(store):
    # The package loads its names lazily: in a process that has imported nothing else (what
    # `opt-suite run` is at its report step), write_reports must still find every name it uses.
    code = f"from opt_suite.report import write_reports; print(len(write_reports({str(store)!r})))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(len(REPORT_FILES))


def test_inputs_carry_spec_settings_and_pictures(store):
    (store / "pictures" / "ours").mkdir(parents=True)
    (store / "pictures" / "ours" / "seed0.png").write_bytes(b"\x89PNG")
    inputs, warnings = load_inputs(store)
    assert warnings == []
    assert inputs.methods == ("primitives", "ours")
    assert inputs.settings == SETTINGS
    assert inputs.pictures == ("pictures/ours/seed0.png",)
    assert len(inputs.episodes) == 2 * 2 * 2 * 20


def test_failed_and_unfinished_cells_are_left_out_with_warnings(tmp_path, caplog):
    table = linear_table({"primitives": 0.0, "ours": 5.0, "broken": 1.0})
    store = write_store(
        tmp_path,
        table,
        report=SETTINGS,
        failed=[("ours", 1), ("broken", 0), ("broken", 1)],
        unfinished=[("primitives", 1)],
    )
    inputs, warnings = load_inputs(store)
    assert inputs.methods == ("primitives", "ours")
    assert set(inputs.episodes.seed.tolist()) == {0}
    text = "\n".join(warnings)
    assert "status 'failed'" in text
    assert "'ours' seed 1 is failed: RuntimeError: diverged" in text
    assert "'primitives' seed 1 is missing" in text
    assert "no completed evaluation: ['broken']" in text
    with caplog.at_level(logging.WARNING, logger="opt_suite.report"):
        write_reports(store)
    assert "broken" in caplog.text
    doc = json.loads((store / "leaderboard.json").read_text())
    assert doc["protocol"]["seeds"] == 1


def test_no_store_and_no_episodes(tmp_path):
    with pytest.raises(StoreError, match="no results store"):
        write_reports(tmp_path)
    store = write_store(tmp_path / "r", linear_table({"a": 0.0}), unfinished=[("a", 0), ("a", 1)])
    with pytest.raises(ReportDataError, match="no completed evaluation episodes"):
        write_reports(store)


class TestCommand:
    def test_report_and_export_baseline(self, store, capsys):
        baseline = store.parent / "ci" / "baseline.json"
        assert main(["report", str(store), "--export-baseline", str(baseline)]) == 0
        out = capsys.readouterr().out
        assert f"wrote {store / 'leaderboard.md'}" in out
        assert f"wrote baseline {baseline}" in out
        loaded = load_baseline(baseline)
        assert list(loaded.methods) == ["primitives", "ours"]
        assert loaded.methods["ours"].metrics["auc"].tolist() == [[4.5, 6.5], [5.5, 7.5]]
        assert loaded.thresholds == {"0": 0.0, "1": 0.0}

    def test_missing_directory(self, tmp_path, capsys):
        assert main(["report", str(tmp_path / "nope")]) == 2
        assert "nope: no such directory" in capsys.readouterr().err

    def test_directory_without_results(self, tmp_path, capsys):
        assert main(["report", str(tmp_path)]) == 2
        err = capsys.readouterr().err
        assert "no results store" in err and "Traceback" not in err

    def test_store_without_a_run(self, tmp_path, capsys):
        StoreWriter(tmp_path).close()
        assert main(["report", str(tmp_path)]) == 2
        assert "records no run yet" in capsys.readouterr().err

    def test_incomplete_results(self, tmp_path, capsys):
        store = write_store(tmp_path, linear_table({"a": 0.0}), unfinished=[("a", 0), ("a", 1)])
        assert main(["report", str(store)]) == 2
        assert "no completed evaluation episodes" in capsys.readouterr().err


def _imports_after(argv: list[str]) -> set[str]:
    code = (
        "import json, sys\n"
        "from opt_suite.cli import main\n"
        f"main({argv!r})\n"
        "print(json.dumps(sorted(m.split('.')[0] for m in sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_report_does_not_import_tensorflow(store):
    assert "tensorflow" not in _imports_after(["report", str(store)])


def test_compare_imports_neither_tensorflow_nor_matplotlib(store):
    baseline = store / "baseline.json"
    assert main(["report", str(store), "--export-baseline", str(baseline)]) == 0
    modules = _imports_after(["compare", str(store), "--baseline", str(baseline)])
    assert "opt_suite" in modules
    assert not {"tensorflow", "matplotlib"} & modules
