"""Bad inputs and faults: a clear message naming the cell; the rest carries on; retried later."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest
from runner_support import (
    DEFAULT_METHODS,
    fakes,  # noqa: F401  (fixture)
    method,
    numbers,
    run_cli,
    write_spec,
)

import opt_suite.store.writer as store_writer
from opt_suite.store import ResultsStore

pytestmark = pytest.mark.usefixtures("fakes")


def _statuses(out):
    """Status per (kind, method, seed); evaluation cells (one per test task) are summed up: failed
    if one failed, else missing if one is missing, else done."""
    found: dict[tuple, set] = {}
    with ResultsStore(out) as store:
        for c in store.cells():
            found.setdefault((c.kind, c.method, c.seed), set()).add(c.status)
    return {
        key: next(s for s in ("failed", "missing", "done") if s in statuses)
        for key, statuses in found.items()
    }


def _cell_statuses(out) -> list[str]:
    with ResultsStore(out) as store:
        return [c.status for c in store.cells()]


def test_a_raising_method_fails_its_cells_only_and_is_retried(tmp_path, capsys):
    marker = tmp_path / "broken"
    marker.write_text("")
    methods = (*DEFAULT_METHODS, method("flaky", fail_while_exists=str(marker)))
    spec, out = write_spec(tmp_path, methods), tmp_path / "out"
    assert run_cli(spec, "--out", out, "--workers", "0", "--no-report") == 1
    err = capsys.readouterr().err
    assert "FAILED discovery of 'flaky', seed 0 failed: RuntimeError: fake failure while" in err
    # --workers 0: no worker, so the runner's own log has the traceback, and the line names it
    [log] = (out / "logs").glob("runner-*.log")
    assert "failed: discovery of 'flaky', seed 0 failed: RuntimeError: fake failure" in err
    assert f"(traceback in {log})\n" in err
    assert "Traceback (most recent call last)" in log.read_text()
    assert "not run: evaluation of 'flaky', seed 1, test task 2 (needs failed cell" in err
    assert "30 cells (0 reused, 22 computed) 2 failed, 6 not run" in err
    # a RuntimeError of the cell's own code comes back on every rerun: no "rerun to retry"
    assert "would repeat on a rerun: fix the cause named above, then rerun" in err
    assert "rerun the same command to retry" not in err
    statuses = _statuses(out)
    assert statuses[("discovery", "flaky", 1)] == "failed"
    assert statuses[("evaluation", "flaky", 1)] == "missing"
    assert all(s == "done" for (k, m, _), s in statuses.items() if m != "flaky")
    with ResultsStore(out) as store:
        failed = [c for c in store.cells() if c.status == "failed"]
        assert "Traceback" in failed[0].error and failed[0].attempts == 1
        assert store.run().status == "failed" and store.run().cells_failed == 2

    marker.unlink()
    assert run_cli(spec, "--out", out, "--workers", "0", "--no-report") == 0
    assert "(22 reused, 8 computed) all done" in capsys.readouterr().err
    assert set(_statuses(out).values()) == {"done"}
    # a fresh, uninterrupted run gives exactly the same numbers
    assert run_cli(spec, "--out", tmp_path / "clean", "--workers", "0", "--quiet") == 0
    assert numbers(out) == numbers(tmp_path / "clean")


def test_a_failed_cells_traceback_is_in_its_workers_log_which_the_failure_line_names(
    tmp_path, capsys
):
    methods = (*DEFAULT_METHODS, method("broken", fail=True))
    spec, out = write_spec(tmp_path, methods), tmp_path / "out"
    assert run_cli(spec, "--out", out, "--workers", "1", "--quiet", "--no-report") == 1
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("failed: discovery of 'broken'")]
    assert len(lines) == 2  # one per seed
    for line in lines:
        log = line.rpartition("(traceback in ")[2].removesuffix(")")
        assert log.startswith(str(out / "logs" / "worker-")) and log.endswith(".log")
        text = Path(log).read_text()
        assert "Traceback (most recent call last)" in text
        assert "RuntimeError: fake failure in discovery" in text


def test_nan_from_the_learner_fails_that_evaluation(tmp_path, capsys):
    spec = write_spec(tmp_path, learner={"nan_on_task": 2})
    out = tmp_path / "out"
    assert run_cli(spec, "--out", out, "--workers", "0", "--no-report") == 1
    err = capsys.readouterr().err
    assert (
        "evaluation of 'none', seed 0, test task 2 produced NaN/inf on test task 2, episode 9"
        in err
    )
    statuses = _statuses(out)
    assert {k[0] for k, s in statuses.items() if s == "failed"} == {"evaluation"}
    assert all(s == "done" for k, s in statuses.items() if k[0] == "discovery")
    # one cell per test task: only test task 2's cells failed, and nothing of them is stored
    assert _cell_statuses(out).count("failed") == 4
    assert {r.task for r in ResultsStore(out).episodes()} == {0, 1}


def test_a_learner_logging_too_few_episodes_fails_with_the_shapes(tmp_path, capsys):
    spec = write_spec(tmp_path, learner={"short": True})
    assert run_cli(spec, "--out", tmp_path / "out", "--workers", "0", "--quiet") == 1
    err = capsys.readouterr().err
    assert (
        "evaluation of 'rand', seed 1, test task 0 failed: ValueError: the learner logged "
        "returns (9,)" in err
    )
    assert "on chain-5/test/0; expected (10,) each" in err


def test_nan_in_an_option_set_fails_that_discovery(tmp_path, capsys):
    methods = (*DEFAULT_METHODS, method("nan", nan=True))
    out = tmp_path / "out"
    assert run_cli(write_spec(tmp_path, methods), "--out", out, "--workers", "0", "--quiet") == 1
    err = capsys.readouterr().err
    assert "discovery of 'nan', seed 1 produced NaN/inf in its option set (beta)" in err
    assert {m for m in ResultsStore(out).methods()} == {"none", "rand", "nan"}
    assert {r.method for r in ResultsStore(out).episodes()} == {"none", "rand"}


def test_full_disk_while_storing_fails_the_cell_and_loses_nothing(tmp_path, capsys, monkeypatch):
    spec, out = write_spec(tmp_path), tmp_path / "out"
    real = store_writer.write_cell_dir
    calls = {"n": 0}

    def fills_up(directory, cell_id, meta, writers):
        calls["n"] += 1
        if calls["n"] in (3, 6):  # the disk fills up for two of the sixteen cells
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(directory, cell_id, meta, writers)

    monkeypatch.setattr(store_writer, "write_cell_dir", fills_up)
    assert run_cli(spec, "--out", out, "--workers", "0", "--no-report") == 1
    err = capsys.readouterr().err
    assert err.count("FAILED ") == 2 and "finished but could not be stored in" in err
    assert "No space left on device" in err
    # In-process order: 4 discoveries, then evaluations (one per test task). Store #3 (discovery
    # of 'none', seed 1) fails, so its 3 evaluations are not run; store #6 (an evaluation) fails.
    statuses = _statuses(out)
    assert statuses[("discovery", "none", 1)] == "failed"
    assert statuses[("evaluation", "none", 1)] == "missing"
    cells = _cell_statuses(out)
    assert cells.count("failed") == 2 and cells.count("missing") == 3
    assert cells.count("done") == 17  # with the 6 references cells, stored last
    assert list((out / "cells").glob(".tmp-*")) == []  # no half-written folder is left
    monkeypatch.setattr(store_writer, "write_cell_dir", real)
    assert run_cli(spec, "--out", out, "--workers", "0", "--no-report") == 0
    assert "(17 reused, 5 computed) all done" in capsys.readouterr().err
    assert run_cli(spec, "--out", tmp_path / "clean", "--workers", "0", "--quiet") == 0
    assert numbers(out) == numbers(tmp_path / "clean")


def test_unwritable_directory_is_a_clear_error(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert run_cli(write_spec(tmp_path), "--out", blocker / "out") == 2
    err = capsys.readouterr().err
    assert f"opt-suite run: error: cannot write results to {blocker / 'out'}" in err
    assert "Traceback" not in err


def test_a_directory_holding_something_else_is_a_clear_error(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.sqlite").write_text("not a database, but someone's notes " * 100)
    assert run_cli(write_spec(tmp_path), "--out", out) == 2
    err = capsys.readouterr().err
    assert "is not a readable opt-suite results store" in err and "Traceback" not in err


def test_unknown_method_and_bad_params_name_the_key(tmp_path, capsys):
    spec = write_spec(tmp_path, (method("x", kind="no_such_method"),), file="unknown.yaml")
    assert run_cli(spec) == 2
    err = capsys.readouterr().err
    assert "methods[0].method" in err and "no_such_method" in err
    spec = write_spec(tmp_path, (method("x", bogus=1),), file="params.yaml")
    assert run_cli(spec) == 2
    err = capsys.readouterr().err
    assert "methods[0].params.bogus" in err and "Traceback" not in err


def test_unknown_family_is_a_clear_error(tmp_path, capsys):
    spec = write_spec(tmp_path)
    spec.write_text(spec.read_text().replace("name: chain", "name: chian"))
    assert run_cli(spec) == 2
    assert "family.name" in capsys.readouterr().err


def test_a_failing_report_keeps_the_results_and_says_how_to_retry(tmp_path, capsys, monkeypatch):
    import opt_suite.report

    def broken(directory, spec_hash=None):
        raise RuntimeError("plotting exploded")

    monkeypatch.setattr(opt_suite.report, "write_reports", broken)
    out = tmp_path / "out"
    assert run_cli(write_spec(tmp_path), "--out", out, "--workers", "0", "--quiet") == 1
    err = capsys.readouterr().err
    assert "reports not written: RuntimeError: plotting exploded" in err
    # an error of the report code is not a reason to retry, only to fix it
    assert f"`opt-suite report {out}` writes them once the cause is fixed" in err
    assert "retry with" not in err
    assert set(_statuses(out).values()) == {"done"}


def test_retry_hints_only_for_failures_a_rerun_may_not_repeat(tmp_path):
    """A full disk or a lost worker may pass on a rerun; an env's TypeError comes back."""
    from opt_suite.cli.run import retry_hint
    from opt_suite.runner.cells import may_change_on_retry
    from opt_suite.runner.scheduler import Summary

    assert may_change_on_retry(OSError(errno.ENOSPC, "No space left on device"))
    assert may_change_on_retry(MemoryError())
    assert not may_change_on_retry(TypeError("__init__() got an unexpected keyword 'goal_pos'"))
    assert not may_change_on_retry(ValueError("NaN"))
    out = tmp_path / "out"
    both = Summary(failed=[("a", "x"), ("b", "y")], deterministic=["a"])
    assert "retry the 1 failed cell(s) that may succeed on retry (1 would fail again" in (
        retry_hint(both, out)
    )
    fixed = Summary(failed=[("a", "x")], deterministic=["a"])
    assert "rerun the same command" not in retry_hint(fixed, out)
    transient = Summary(failed=[("a", "x")])
    assert "rerun the same command to retry the failed cells" in retry_hint(transient, out)
