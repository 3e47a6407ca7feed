"""Real processes: ``kill -9`` at any moment then resume, and two runners sharing one directory."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
from runner_support import (
    REPO,
    cli_command,
    done_cells,
    fakes,  # noqa: F401  (fixture)
    method,
    numbers,
    run_cli,
    run_subprocess,
    write_spec,
)

from opt_suite.store import ResultsStore

pytestmark = pytest.mark.usefixtures("fakes")

SLOW_METHODS = (method("none", num_options=0, sleep_s=0.15), method("rand", sleep_s=0.15))
SLOW_LEARNER = {"sleep_s": 0.15}


def _slow_spec(folder):
    # 3 seeds x 2 methods x (discovery + 1 test task's evaluation) + 3 references = 15 cells
    return write_spec(folder, SLOW_METHODS, learner=SLOW_LEARNER, seeds=3, test=1)


def _kill_when(out, at_least: int, args, group: bool) -> None:
    """Start a runner, SIGKILL it (or its process group) once ``at_least`` cells are done."""
    proc = subprocess.Popen(
        cli_command(*args),
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while done_cells(out) < at_least and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert proc.poll() is None, "the runner finished before it could be killed"
    if group:
        os.killpg(proc.pid, signal.SIGKILL)
    else:
        proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


@pytest.mark.slow
def test_kill_9_then_rerun_gives_the_numbers_of_an_uninterrupted_run(tmp_path):
    spec = _slow_spec(tmp_path)
    clean, out = tmp_path / "clean", tmp_path / "out"
    assert run_cli(spec, "--out", clean, "--workers", "0", "--quiet", "--no-report") == 0

    # Killed twice at different moments, in-process cells then a pool whose workers die too.
    args = (spec, "--out", out, "--quiet", "--no-report")
    _kill_when(out, 2, (*args, "--workers", "0"), group=False)
    first = done_cells(out)
    _kill_when(out, first + 3, (*args, "--workers", "2"), group=True)
    assert 2 <= first < done_cells(out) < 15
    with ResultsStore(out) as store:
        assert [r.status for r in store.runs()] == ["running", "running"]  # both were killed

    before = done_cells(out)
    result = run_subprocess(*args, "--workers", "2")
    assert result.returncode == 0, result.stderr
    assert f"({before} reused, {15 - before} computed) all done" in result.stderr
    assert numbers(out) == numbers(clean)
    assert list((out / "cells").glob(".tmp-*")) == []


@pytest.mark.slow
def test_two_runners_on_one_directory_share_the_cells(tmp_path):
    spec = _slow_spec(tmp_path)
    clean, out = tmp_path / "clean", tmp_path / "out"
    assert run_cli(spec, "--out", clean, "--workers", "0", "--quiet", "--no-report") == 0
    args = cli_command(spec, "--out", out, "--workers", "1", "--quiet", "--no-report")
    runners = [
        subprocess.Popen(args, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    for runner in runners:
        _, err = runner.communicate(timeout=120)
        assert runner.returncode == 0, err
    with ResultsStore(out) as store:
        runs = store.runs()
        assert len(runs) == 2 and all(r.status == "done" for r in runs)
        # every cell computed exactly once across the two runners
        assert sum(r.cells_computed for r in runs) == 15
    conn = sqlite3.connect(out / "results.sqlite")
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    assert numbers(out) == numbers(clean)


@pytest.mark.slow
def test_the_runner_process_never_imports_tensorflow(tmp_path):
    methods = (method("demo", "fake_demo_options"), method("plain"))
    spec = write_spec(tmp_path, methods, seeds=1)
    argv = ["run", str(spec), "--out", str(tmp_path / "out"), "--workers", "1"]
    code = (
        "import sys; from opt_suite.cli import main; "
        f"code = main({argv!r}); print('tensorflow' in sys.modules, code)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120
    )
    assert result.stdout.strip() == "False 0", result.stderr
