"""Runner faults, round two: a runner killed by SIGKILL leaves no worker behind, even one that was
still starting when its runner died."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from runner_support import (
    REPO,
    cli_command,
    fakes,  # noqa: F401  (fixture)
    method,
    write_spec,
)

pytestmark = pytest.mark.usefixtures("fakes")


def _children(pid: int) -> set[int]:
    """Pids whose parent is ``pid`` (from /proc; Linux)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces, so split after its closing bracket.
        fields = stat.rpartition(")")[2].split()
        if int(fields[1]) == pid:
            found.add(int(entry.name))
    return found


def _running(pid: int) -> bool:
    """Alive and not a zombie waiting for init to reap it."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def _wait_gone(pids: set[int], timeout: float) -> set[int]:
    deadline = time.monotonic() + timeout
    while (alive := {p for p in pids if _running(p)}) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux)")
@pytest.mark.parametrize("moment", ["starting", "computing"])
def test_sigkill_of_the_runner_leaves_no_worker(tmp_path, moment):
    spec = write_spec(
        tmp_path,
        (method("none", num_options=0, sleep_s=2.0), method("rand", sleep_s=2.0)),
        learner={"sleep_s": 2.0},
    )
    out = tmp_path / "out"
    args = cli_command(spec, "--out", out, "--workers", "2", "--quiet", "--no-report")
    # The caller's pipes: a worker that outlives its runner keeps them open and hangs the caller.
    runner = subprocess.Popen(args, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 120
        # "starting": kill as soon as a worker exists (it is still importing, before its pool
        # initializer ran); "computing": once the first cell's outputs are being stored.
        while time.monotonic() < deadline and runner.poll() is None:
            workers |= _children(runner.pid)
            ready = bool(workers) if moment == "starting" else (out / "cells").is_dir()
            if ready:
                break
            time.sleep(0.01)
        assert runner.poll() is None, "the runner finished before it could be killed"
        assert workers, "no worker was seen"
        workers |= _children(runner.pid)
        os.kill(runner.pid, signal.SIGKILL)
        runner.wait(timeout=30)
        left = _wait_gone(workers, timeout=60)
        assert not left, f"workers {sorted(left)} outlived their runner"
        # Nothing holds the caller's pipes any more: reading them reaches the end.
        runner.communicate(timeout=30)
    finally:
        for pid in workers | {runner.pid}:
            if _running(pid):
                os.kill(pid, signal.SIGKILL)
        runner.communicate(timeout=30)
