"""Signals: SIGTERM unwinds a run like Ctrl-C (status interrupted, no leaked semaphore, no orphan
worker); an unreachable Ray cluster fails fast with one line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from runner_support import (
    PLUGIN,
    REPO,
    cli_command,
    done_cells,
    fakes,  # noqa: F401  (fixture)
    forget_registered,
    method,
    numbers,
    register_plugin,
    run_cli,
    write_spec,
)

from opt_suite.store import ResultsStore

pytestmark = pytest.mark.usefixtures("fakes")


def _slow_spec(folder, pids):
    methods = (
        method("none", num_options=0, sleep_s=0.15, record_pid_in=str(pids)),
        method("rand", sleep_s=0.15, record_pid_in=str(pids)),
    )
    return write_spec(folder, methods, learner={"sleep_s": 0.15}, seeds=3)  # 12 cells


@pytest.fixture(scope="module")
def slow_spec(tmp_path_factory):
    """The slow spec, the file its cells write their pids to, and the numbers of its
    uninterrupted run: computed once, what each test's interrupted-then-resumed run must equal."""
    folder = tmp_path_factory.mktemp("slow-spec")
    pids = folder / "pids.txt"
    spec = _slow_spec(folder, pids)
    clean = folder / "clean"
    with pytest.MonkeyPatch.context() as monkeypatch:
        register_plugin(monkeypatch, PLUGIN)
        assert run_cli(spec, "--out", clean, "--workers", "0", "--quiet", "--no-report") == 0
        uninterrupted = numbers(clean)
    forget_registered()
    return spec, pids, uninterrupted


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _terminate_after(out, at_least, args):
    proc = subprocess.Popen(
        cli_command(*args), cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 90
    while done_cells(out) < at_least and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert proc.poll() is None, "the runner finished before it could be signalled"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    return proc.returncode, err


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["0", "2"])
def test_sigterm_marks_the_run_interrupted_and_leaks_nothing(tmp_path, workers, slow_spec):
    spec, pids, clean = slow_spec
    out = tmp_path / "out"
    pids.unlink(missing_ok=True)  # the pids of this test's runs only
    args = (spec, "--out", out, "--workers", workers, "--quiet", "--no-report")
    code, err = _terminate_after(out, 3, args)
    assert code == 128 + signal.SIGTERM, err
    assert "interrupted (SIGTERM)" in err
    assert "leaked semaphore" not in err and "Traceback" not in err, err
    with ResultsStore(out) as store:
        run = store.run()
    assert run.status == "interrupted" and run.finished is not None
    time.sleep(0.5)
    workers_seen = {int(p) for p in pids.read_text().split()} - {os.getpid()}
    assert not [p for p in workers_seen if _alive(p)], "a worker outlived its runner"
    # Resuming gives the numbers of an uninterrupted run.
    assert run_cli(spec, "--out", out, "--workers", "0", "--quiet", "--no-report") == 0
    assert numbers(out) == clean


@pytest.mark.slow
def test_sigterm_at_random_moments_never_leaves_a_wrong_result(tmp_path, slow_spec):
    """Terminate at random moments, rerun each time: the end result equals an uninterrupted run."""
    spec, _, clean = slow_spec
    out = tmp_path / "out"
    rng = np.random.default_rng(0)
    args = cli_command(spec, "--out", out, "--workers", "2", "--quiet", "--no-report")
    for _ in range(5):
        proc = subprocess.Popen(args, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(float(rng.uniform(0.3, 3.0)))
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        # -SIGTERM: signalled while Python was still starting, before any handler or run existed.
        assert proc.returncode in (0, 128 + signal.SIGTERM, -signal.SIGTERM), err
        assert b"Traceback" not in err and b"leaked semaphore" not in err
    assert run_cli(spec, "--out", out, "--workers", "0", "--quiet", "--no-report") == 0
    assert numbers(out) == clean


@pytest.mark.parametrize("address", ["127.0.0.1:1", "ray://127.0.0.1:1", "nonsense"])
def test_unreachable_ray_address_fails_fast_with_one_line(tmp_path, address):
    spec = write_spec(tmp_path, seeds=1)
    result = subprocess.run(
        [*cli_command(spec, "--out", tmp_path / "out", "--backend", "ray", "--address", address)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,  # fails in seconds; waiting for a cluster that never answers fails here
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and address in lines[0], result.stderr
    assert not (tmp_path / "out" / "results.sqlite").exists()


def test_probe_times_out_on_a_silent_host():
    # 192.0.2.0/24 is TEST-NET-1 (RFC 5737): never routed, so a connection can only time out
    # (or be refused at once by a local firewall). The probe's own timeout is 1 s; without it
    # the kernel retries for about two minutes, past the subprocess timeout (not a timed assert).
    code = (
        "from opt_suite.runner.backends import BackendError, _probe\n"
        "try:\n"
        "    _probe('192.0.2.1:6379', timeout=1.0)\n"
        "except BackendError as exc:\n"
        "    print(exc)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert "cannot reach the Ray cluster at 192.0.2.1:6379" in result.stdout
