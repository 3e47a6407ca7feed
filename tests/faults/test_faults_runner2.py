"""Runner faults, round two: a runner killed by SIGKILL leaves no worker behind, even one that was
still starting when its runner died; ``--address`` at a TCP service that is not Ray is refused in
seconds."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
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


class _Server:
    """A TCP service on 127.0.0.1 that is not Ray: it says ``greeting`` (or nothing) to anyone."""

    def __init__(self, greeting: bytes | None) -> None:
        self.greeting = greeting
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.stop = threading.Event()
        self.held: list[socket.socket] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            if self.greeting is not None:
                conn.sendall(self.greeting)
            self.held.append(conn)  # open and silent, like a service waiting for its protocol

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=10)
        for conn in self.held:
            conn.close()
        self.sock.close()


# A SETTINGS frame with no settings: what an HTTP/2 (gRPC) server such as Ray's GCS says first.
H2_SETTINGS = bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])


@pytest.mark.parametrize(
    "greeting, reason",
    [
        (None, "no HTTP/2 greeting"),
        (b"SSH-2.0-OpenSSH_9.6\r\n", "not an HTTP/2 SETTINGS frame"),
        (b"HTTP/1.1 400 Bad Request\r\n\r\n", "not an HTTP/2 SETTINGS frame"),
    ],
)
def test_a_tcp_service_that_is_not_ray_is_refused_within_seconds(greeting, reason):
    from opt_suite.runner.backends import BackendError, _probe

    server = _Server(greeting)
    try:
        address = f"127.0.0.1:{server.port}"
        with pytest.raises(BackendError) as info:
            _probe(address, timeout=1.0)
        message = str(info.value)
        assert f"the service at {address} is not a Ray cluster" in message and reason in message
        assert "\n" not in message
        # An HTTP/2 server passes the probe (Ray then checks the rest itself).
    finally:
        server.close()
    h2 = _Server(H2_SETTINGS)
    try:
        _probe(f"ray://127.0.0.1:{h2.port}", timeout=1.0)
    finally:
        h2.close()


def test_a_service_that_resets_the_connection_is_unreachable_not_another_protocol():
    # A Ray head going down accepts a connection and resets it: that is a cluster that cannot be
    # reached (the run's "stopped answering" line), not "the service is not a Ray cluster".
    import socket
    import struct
    import threading

    from opt_suite.runner.backends import BackendError, _probe

    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def reset_one() -> None:
        conn, _ = listener.accept()
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        conn.recv(64)  # the client's greeting, then an RST instead of an answer
        conn.close()

    thread = threading.Thread(target=reset_one, daemon=True)
    thread.start()
    try:
        with pytest.raises(BackendError) as info:
            _probe(f"127.0.0.1:{port}", timeout=2.0)
    finally:
        thread.join(timeout=10)
        listener.close()
    assert str(info.value).startswith(f"cannot reach the Ray cluster at 127.0.0.1:{port}: ")


def test_run_against_a_service_that_is_not_ray_exits_2_with_one_line(tmp_path):
    spec = write_spec(tmp_path, seeds=1)
    server = _Server(None)  # silent: ray.init used to wait on it for 10 minutes
    try:
        address = f"127.0.0.1:{server.port}"
        args = cli_command(
            spec, "--out", tmp_path / "out", "--backend", "ray", "--address", address
        )
        result = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=120)
    finally:
        server.close()
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "is not a Ray cluster" in lines[0], result.stderr
    assert not (tmp_path / "out" / "results.sqlite").exists()
