"""The results store: atomic cell commits, the read API, concurrency and crash safety."""

from __future__ import annotations

import errno
import sqlite3
import subprocess
import sys
import time

import numpy as np
import pytest

from opt_suite.methods.base import TabularOptionSet
from opt_suite.store import ResultsStore, StoreError
from opt_suite.store.files import OPTIONS_FILE, cell_dir
from opt_suite.store.provenance import collect_provenance
from opt_suite.store.writer import CellRecord, StoreWriter


def _record(cell_id, kind, method, seed, **extra):
    now = time.time()
    return CellRecord(
        cell_id=cell_id,
        kind=kind,
        method=method,
        seed=seed,
        inputs={"seed": seed},
        started=now,
        finished=now + 1,
        wall_s=1.0,
        host="h",
        **extra,
    )


def _options(m=2, S=3, A=2):
    mu = np.full((m, S, A), 1.0 / A)
    return TabularOptionSet(mu, np.full((m, S), 0.5))


def _populate(directory, methods=("primitives", "ours"), seeds=(0, 1), tasks=(0, 1), episodes=3):
    writer = StoreWriter(directory)
    run = writer.begin_run(
        spec_name="toy",
        spec_hash="abc",
        spec_yaml="name: toy\n",
        provenance=collect_provenance(),
        backend="local",
        workers=1,
        seeds=seeds,
        argv=["run", "toy.yaml"],
    )
    plan = []
    for seed in seeds:
        plan.append((f"demo{seed}", "demonstrations", None, seed, -1))
        for pos, m in enumerate(methods):
            plan.append((f"disc-{m}-{seed}", "discovery", m, seed, pos))
            plan.append((f"eval-{m}-{seed}", "evaluation", m, seed, pos))
    writer.record_plan(run, plan, [("test", t, f"toy/test/{t}", {"goal": t}) for t in tasks])
    for seed in seeds:
        for pos, m in enumerate(methods):
            options = _options()
            writer.commit_cell(
                _record(
                    f"disc-{m}-{seed}",
                    "discovery",
                    m,
                    seed,
                    files={OPTIONS_FILE: options.save},
                    num_options=len(options),
                    curves={"jhat": np.array([1.0, np.nan, 3.0 + seed])},
                )
            )
            episodes_rows = [
                (
                    t,
                    np.arange(episodes) + 10.0 * pos + seed + 0.1 * t,
                    np.arange(episodes) + 5,
                    np.cumsum(4 * (np.arange(episodes) + 5)),  # frame skip 4
                )
                for t in tasks
            ]
            writer.commit_cell(
                _record(f"eval-{m}-{seed}", "evaluation", m, seed, episodes=episodes_rows)
            )
    return writer, run


def test_missing_store_is_a_clear_error(tmp_path):
    with pytest.raises(StoreError, match="no results store"):
        ResultsStore(tmp_path)


def test_read_api_returns_what_was_written(tmp_path):
    writer, run = _populate(tmp_path)
    writer.finish_run(run, "done", {"total": 10, "reused": 0, "computed": 10, "failed": 0})
    store = ResultsStore(tmp_path)
    assert store.methods() == ["primitives", "ours"]
    assert store.seeds() == [0, 1]
    assert [t.task_id for t in store.tasks("test")] == ["toy/test/0", "toy/test/1"]
    assert store.spec_yaml() == "name: toy\n"
    assert (tmp_path / "spec.yaml").read_text() == "name: toy\n"
    info = store.run()
    assert info.status == "done" and info.cells_total == 10 and info.finished is not None
    assert info.versions["numpy"] == np.__version__

    rows = store.episodes("ours")
    assert len(rows) == 2 * 2 * 3
    assert rows[0].method == "ours" and rows[0].ret == pytest.approx(10.0)
    arrays = store.episode_arrays("ours")
    assert arrays.returns.shape == (2, 2, 3) and arrays.seeds == (0, 1) and arrays.tasks == (0, 1)
    # seed 1, task 1, episode 2: 2 + 10 * 1 + 1 + 0.1
    assert arrays.returns[1, 1, 2] == pytest.approx(13.1)
    assert arrays.steps[0, 0].tolist() == [5, 6, 7]
    assert arrays.frames[0, 0].tolist() == [20, 44, 72]
    assert rows[2].frames == 72

    curve = store.curves("primitives", "jhat")
    assert [c.step for c in curve] == [0, 1, 2, 0, 1, 2]
    assert np.isnan(curve[1].value) and curve[5].value == 4.0

    options = store.option_set("ours", 1)
    assert options is not None and options.mu.shape == (2, 3, 2)
    assert store.option_set("ours", 7) is None
    statuses = {c.cell_id: c.status for c in store.cells()}
    assert statuses["eval-ours-0"] == "done" and statuses["demo0"] == "missing"


def test_later_runs_hide_cells_they_did_not_plan(tmp_path):
    writer, first = _populate(tmp_path)
    writer.finish_run(first, "done", {})  # a live run of another spec would refuse the next
    # A second run (a changed spec) planning only one method: the store shows only that one.
    run = writer.begin_run(
        spec_name="toy",
        spec_hash="def",
        spec_yaml="name: toy2\n",
        provenance={},
        backend="local",
        workers=1,
        seeds=[0],
        argv=[],
    )
    writer.record_plan(run, [("eval-ours-0", "evaluation", "ours", 0, 0)], [])
    store = ResultsStore(tmp_path)
    assert store.methods() == ["ours"]
    assert {r.seed for r in store.episodes()} == {0}
    assert len(store.runs()) == 2


def test_runs_of_the_same_spec_add_up(tmp_path):
    writer, _ = _populate(tmp_path, seeds=(0, 1))
    run = writer.begin_run(
        spec_name="toy",
        spec_hash="abc",  # the same spec, run for another seed
        spec_yaml="name: toy\n",
        provenance={},
        backend="local",
        workers=1,
        seeds=[5],
        argv=[],
    )
    writer.record_plan(run, [("eval-ours-5", "evaluation", "ours", 5, 1)], [])
    writer.commit_cell(
        _record(
            "eval-ours-5",
            "evaluation",
            "ours",
            5,
            episodes=[(0, np.ones(3), np.ones(3), np.arange(1, 4))],
        )
    )
    store = ResultsStore(tmp_path)
    assert store.seeds() == [0, 1, 5]
    assert store.episode_arrays("ours").seeds == (0, 1, 5)
    assert len([c for c in store.cells() if c.cell_id == "eval-ours-0"]) == 1  # no duplicates


def test_failed_commit_leaves_no_done_cell_and_no_partial_folder(tmp_path):
    writer = StoreWriter(tmp_path)

    def full_disk(path):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    with pytest.raises(OSError):
        writer.commit_cell(_record("c1", "discovery", "m", 0, files={OPTIONS_FILE: full_disk}))
    assert not writer.is_done("c1")
    assert not cell_dir(tmp_path, "c1").exists()
    assert list((tmp_path / "cells").iterdir()) == []


def test_crash_between_folder_and_rows_recomputes_the_cell(tmp_path):
    writer = StoreWriter(tmp_path)
    cell_dir(tmp_path, "c1").mkdir(parents=True)  # a folder renamed in, then the process died
    assert not writer.is_done("c1")
    record = _record(
        "c1", "evaluation", "m", 0, episodes=[(0, np.ones(2), np.ones(2), np.arange(1, 3))]
    )
    writer.commit_cell(record)  # the retry replaces the stale folder
    assert writer.is_done("c1")
    assert writer.done_cells(["c1", "c2"]) == {"c1"}


def test_failure_then_success_counts_attempts(tmp_path):
    writer = StoreWriter(tmp_path)
    record = _record(
        "c1", "evaluation", "m", 0, episodes=[(0, np.ones(2), np.ones(2), np.arange(1, 3))]
    )
    writer.record_failure(record, "boom")
    assert not writer.is_done("c1")
    writer.commit_cell(record)
    row = writer.conn.execute("SELECT status, error, attempts FROM cells").fetchone()
    assert row == ("done", None, 2)


def test_rows_of_a_failed_transaction_are_rolled_back(tmp_path):
    writer = StoreWriter(tmp_path)
    bad = _record(
        "c1", "evaluation", "m", 0, episodes=[(0, np.ones(3), np.ones(2), np.ones(2))]
    )  # ragged
    with pytest.raises(ValueError):
        writer.commit_cell(bad)
    assert writer.conn.execute("SELECT COUNT(*) FROM episodes").fetchone()[0] == 0
    assert not writer.is_done("c1")


def test_two_writers_on_one_store(tmp_path):
    first, second = StoreWriter(tmp_path), StoreWriter(tmp_path)
    for i in range(20):
        writer = first if i % 2 else second
        writer.commit_cell(
            _record(
                f"c{i}", "evaluation", "m", i, episodes=[(0, np.ones(4), np.ones(4), np.arange(4))]
            )
        )
    assert first.done_cells([f"c{i}" for i in range(20)]) == {f"c{i}" for i in range(20)}
    mode = first.conn.execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_other_schema_version_is_refused(tmp_path):
    StoreWriter(tmp_path).close()
    conn = sqlite3.connect(tmp_path / "results.sqlite")
    conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="schema version 99"):
        StoreWriter(tmp_path)


def test_package_versions_do_not_import_tensorflow():
    code = (
        "import sys; from opt_suite.store.provenance import collect_provenance; "
        "p = collect_provenance(); assert 'numpy' in p['versions'], p; "
        "print('tensorflow' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_provenance_records_the_cpu_model(tmp_path):
    # Bit-identity is promised per CPU model: a run must say which one computed it.
    from opt_suite.store.provenance import cpu_model

    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\n")
    assert cpu_model(info) == "AMD EPYC 7B13"
    assert cpu_model(tmp_path / "missing") != ""
    assert collect_provenance()["cpu"] == cpu_model()


def test_the_latest_run_view_of_the_plan_is_indexed(tmp_path):
    # ResultsStore._plan takes MAX(run_id) per (kind, method, seed) for every plan row: without
    # the index SQLite scans the whole plan per row, quadratic in the plan.
    _populate(tmp_path)
    conn = sqlite3.connect(tmp_path / "results.sqlite")
    steps = conn.execute(
        "EXPLAIN QUERY PLAN SELECT MAX(q.run_id) FROM plan q"
        " WHERE q.kind = 'evaluation' AND q.method IS 'ours' AND q.seed = 0"
    ).fetchall()
    assert any("plan_groups" in step[-1] for step in steps), steps


def test_is_done_checks_the_one_cell_it_is_asked_about(tmp_path):
    writer, _ = _populate(tmp_path)
    assert writer.is_done("eval-ours-0") and writer.is_done("disc-ours-1")
    assert not writer.is_done("no-such-cell")
    # a done cell whose episode rows were altered fails verification, as in check_done
    writer.conn.execute("UPDATE episodes SET ret = ret + 1 WHERE cell_id = 'eval-ours-0'")
    assert not writer.is_done("eval-ours-0")
    assert writer.is_done("eval-ours-1")
