"""Where cells run: in this process, in a local process pool, or on a Ray cluster.

All three take :class:`~opt_suite.runner.cells.CellJob` objects and hand back
:class:`~opt_suite.runner.cells.CellOutcome` objects as they complete; a cell's numbers depend only
on its job (its seeds travel with it), so every backend and worker count gives the same results.

Length (over the 400 lines the tree aims for): the three backends (inline, process pool, Ray)
share one Backend protocol, and the pool's worker start-up (logging, signals) is only meaningful
next to the pool that uses it (joining a Ray cluster: runner/ray_cluster.py).
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import ctypes
import multiprocessing
import multiprocessing.context
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from opt_suite._numerics import unpinned
from opt_suite.runner.cells import (
    CellJob,
    CellOutcome,
    apply_worker_environment,
    execute,
    init_worker,
    log_failures_to,
    warm_up,
    worker_environment,
)

__all__ = [
    "Backend",
    "InlineBackend",
    "PoolBackend",
    "RayBackend",
    "BackendError",
    "ClusterLost",
    "make_backend",
]


class BackendError(RuntimeError):
    """A backend cannot start (e.g. Ray is not installed or the cluster cannot be reached)."""


class ClusterLost(BackendError):
    """The Ray cluster a run joined stopped answering mid-run (its head died): the run stops."""


class Backend:
    """Runs cell jobs.

    Attributes:
      name: recorded with the run (``inline``, ``local`` or ``ray``).
      workers: processes (or Ray CPUs) computing cells; 0 for in-process.
      capacity: how many cells to keep in flight at once.
    """

    name = "backend"
    workers = 0
    capacity = 1

    def submit(self, job: CellJob) -> None:
        """Start computing ``job``."""
        raise NotImplementedError

    def wait(self, timeout: float | None) -> list[CellOutcome]:
        """Outcomes of submitted jobs completed within ``timeout`` seconds (maybe none)."""
        raise NotImplementedError

    def close(self) -> None:
        """Stop the workers."""


class InlineBackend(Backend):
    """Runs each cell in this process when waited on (``--workers 0``: debugging, profiling)."""

    name = "inline"

    def __init__(self, log_dir: Path | None = None) -> None:
        self._queue: list[CellJob] = []
        # No worker and so no worker log: failed cells' tracebacks go to a log of this process's.
        if log_dir is not None:
            log_failures_to(Path(log_dir) / f"runner-{os.getpid()}.log")
        apply_worker_environment()  # takes effect if TensorFlow is not imported yet
        problem = unpinned()  # workers start with the pins; this process may have missed them
        if problem is not None:
            print(
                f"opt-suite: warning: {problem}; numbers computed in this process (--workers 0) "
                "may differ in their last bits from other machines' (use --workers 1)",
                file=sys.stderr,
            )

    def submit(self, job: CellJob) -> None:  # noqa: D102
        self._queue.append(job)

    def wait(self, timeout: float | None) -> list[CellOutcome]:  # noqa: D102
        return [execute(self._queue.pop(0))] if self._queue else []

    def close(self) -> None:  # noqa: D102
        log_failures_to(None)  # a later run in this process has a log of its own


class PoolBackend(Backend):
    """A pool of ``workers`` spawned processes (not forked: TensorFlow does not survive a fork)."""

    name = "local"

    def __init__(self, workers: int, log_dir: Path | None = None) -> None:
        # One job queued beyond the workers: a worker starts its next cell while this process is
        # still storing the previous one.
        self.capacity = workers + 1
        self.workers = workers
        self._log_dir = None if log_dir is None else str(log_dir)
        self._futures: dict[cf.Future, tuple[str, str]] = {}
        with _signals_deferred():
            self._pool = self._start()
            for _ in range(workers):  # start every worker now, while the runner plans
                self._pool.submit(warm_up)

    def _start(self) -> cf.ProcessPoolExecutor:
        # Workers inherit this process's environment when spawned. ``init_worker`` sets it too,
        # but after unpickling the initializer has imported NumPy, whose OpenBLAS reads its
        # thread count once, at load: set in the initializer only, a worker ran two BLAS threads
        # whose spinning cost NumPy-heavy cells (PPO's NumPy acting) a third of their CPU.
        apply_worker_environment()
        self._context = _RecordingContext(self._log_dir)
        return cf.ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=self._context,
            initializer=_start_worker,
            initargs=(os.getpid(), self._log_dir),
        )

    def submit(self, job: CellJob) -> None:  # noqa: D102
        with _signals_deferred():  # a submit may spawn a worker
            self._futures[self._pool.submit(execute, job)] = (job.cell_id, job.label)

    def wait(self, timeout: float | None) -> list[CellOutcome]:  # noqa: D102
        if not self._futures:
            return []
        done, _ = cf.wait(self._futures, timeout=timeout, return_when=cf.FIRST_COMPLETED)
        outcomes, broken = [], False
        for future in done:
            cell = self._futures.pop(future)
            # exception() rather than result(): a SystemExit or KeyboardInterrupt that escaped a
            # worker is the cell's failure, and must not unwind (or end) this process.
            exc = future.exception()
            if exc is None:
                outcomes.append(future.result())
            else:  # a worker died (killed, out of memory) or pickling failed
                broken = broken or isinstance(exc, cf.process.BrokenProcessPool)
                outcomes.append(_lost(*cell, exc))
        if broken:  # every other job of a broken pool is lost too; start a fresh pool
            for cell in self._futures.values():
                outcomes.append(_lost(*cell, cf.process.BrokenProcessPool("worker pool broke")))
            self._futures.clear()
            self._pool.shutdown(wait=False, cancel_futures=True)
            with _signals_deferred():
                self._pool = self._start()
        return outcomes

    def close(self) -> None:  # noqa: D102
        # Every result has been taken (or the run is abandoned): stop the workers instead of
        # waiting for their orderly exit, which takes TensorFlow about a second per process.
        processes = [p for p in self._context.processes if p.is_alive()]
        manager = getattr(self._pool, "_executor_manager_thread", None)  # None after shutdown
        self._pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()
        for process in processes:
            process.join(timeout=10)
        # CPython 3.11's pool thread closes its wake-up pipe as it exits, and the interpreter's
        # exit hook (concurrent.futures' _python_exit) writes to that pipe without a lock: when
        # both happen at once (a SIGTERM'd run exiting under load) the exit printed "Exception
        # ignored ... OSError: [Errno 9] Bad file descriptor". Joined here, the thread is gone
        # before the hook runs and its closed pipe is skipped.
        if manager is not None:
            manager.join(timeout=10)


def _start_worker(runner_pid: int, log_dir: str | None) -> None:
    """Pool initializer: tie the worker's life to its runner's, then :func:`init_worker`.

    The runner's pid is recorded by the runner, not read here: a worker still importing when its
    runner died (OOM killer, a cluster's job limit, ``kill -9``) finds itself already adopted by
    init, and a parent read then would be init's pid -- such workers used to live on, blocked on a
    queue whose writing end every sibling holds, with the caller's pipes open.
    """
    _die_with(runner_pid)
    init_worker(log_dir)


PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
WATCH_INTERVAL_S = 0.5


def _die_with(runner_pid: int) -> None:
    """Exit this process soon after ``runner_pid`` (its parent) dies, by whatever signal.

    On Linux the kernel sends SIGKILL at the parent's death (``PR_SET_PDEATHSIG``), even to a worker
    stuck in C code holding the GIL; everywhere, a thread polls ``os.getppid()`` as a fallback.
    Checked once after both are in place, for a parent that died before.
    """
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)

    def watch() -> None:
        while os.getppid() == runner_pid:
            time.sleep(WATCH_INTERVAL_S)
        os._exit(1)

    if os.getppid() != runner_pid:
        os._exit(1)
    threading.Thread(target=watch, name="opt-suite-runner-watch", daemon=True).start()


class _RecordingContext(multiprocessing.context.SpawnContext):
    """The spawn context, remembering the worker processes the pool starts through it.

    So that :meth:`PoolBackend.close` can stop them without the executor's private attributes.
    """

    def __init__(self, log_dir: str | None = None) -> None:
        super().__init__()
        self.processes: list[Any] = []
        self.log_dir = log_dir

    # typeshed declares SpawnContext.Process as a class attribute; multiprocessing only ever calls
    # it, which this method supports, but mypy cannot accept a method in a class's place.
    def Process(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]  # noqa: N802
        process = _StartupLoggedProcess(*args, **kwargs)
        process.startup_log = (
            None if self.log_dir is None else os.path.join(self.log_dir, STARTUP_LOG)
        )
        self.processes.append(process)
        return process


# A worker's output goes to its own log once init_worker runs; before that, the interpreter's
# start-up writes to the stderr it inherited. A runner that stops (SIGTERM, Ctrl-C, a broken pool)
# while a worker is still starting can make that start-up fail (its semaphores are gone), and the
# traceback belongs in the run's logs, not on the user's terminal: the run itself reports the
# interruption or the lost cells.
STARTUP_LOG = "workers-startup.log"


class _StartupLoggedProcess(multiprocessing.context.SpawnProcess):
    startup_log: str | None = None

    def start(self) -> None:
        if self.startup_log is None:
            super().start()
            return
        os.makedirs(os.path.dirname(self.startup_log), exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW  # never through a link
        try:
            log = os.open(self.startup_log, flags, 0o644)
        except OSError:  # a link (or no room) there: the start-up chatter stays on stderr
            super().start()
            return
        saved = os.dup(2)
        try:
            sys.stderr.flush()
            os.dup2(log, 2)  # the child inherits fd 2 at the spawn; restored right after
            super().start()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            os.close(log)


class RayBackend(Backend):
    """Cells as Ray tasks (one CPU each) on a local or existing cluster (``--address``)."""

    name = "ray"

    def __init__(
        self, workers: int | None, address: str | None, modules: Sequence[str] = ()
    ) -> None:
        from opt_suite.runner.ray_cluster import (
            NodeCodeMismatch,
            check_nodes,
            follow_ray_start_auth,
            join_hint,
        )

        if address:
            _probe(address)  # before importing Ray: an unreachable cluster fails in seconds
            follow_ray_start_auth()  # before Ray reads its configuration
        try:
            import ray
        except ImportError as exc:
            raise BackendError("--backend ray needs Ray: pip install 'opt-suite[ray]'") from exc
        self._ray = ray
        self._started_here = not ray.is_initialized()
        runtime_env = {"env_vars": worker_environment()}
        try:
            if self._started_here:
                if address:
                    ray.init(address=address, runtime_env=runtime_env, log_to_driver=False)
                else:
                    # "local": a new Ray of this run's own, never a cluster another process
                    # started on this host (ray.init() alone joins the last one `ray start` or a
                    # test cluster wrote to /tmp/ray/ray_current_cluster).
                    ray.init(
                        address="local",
                        num_cpus=workers or None,
                        include_dashboard=False,
                        runtime_env=runtime_env,
                        log_to_driver=False,
                    )
        except Exception as exc:
            where = f"the Ray cluster at {address}" if address else "a local Ray cluster"
            hint = f"; {join_hint(address)}" if address and "connect" in str(exc) else ""
            raise BackendError(f"could not start or join {where}: {exc}{hint}") from exc
        if address and self._started_here:
            # Joined nodes may hold another install: refuse before any cell runs there.
            try:
                check_nodes(ray, modules)
            except NodeCodeMismatch as exc:
                ray.shutdown()
                raise BackendError(f"the Ray cluster at {address}: {exc}") from None
        self.workers = self.capacity = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self._remote = ray.remote(num_cpus=1, max_retries=0)(execute)
        self._refs: dict[Any, tuple[str, str]] = {}
        self._address = address if address and self._started_here else None
        self._gone: str | None = None  # why the joined cluster is gone, once it is
        self._head_checked = time.monotonic()

    def submit(self, job: CellJob) -> None:  # noqa: D102
        self._stop_if_gone()
        self._refs[self._remote.remote(job)] = (job.cell_id, job.label)

    def wait(self, timeout: float | None) -> list[CellOutcome]:  # noqa: D102
        self._stop_if_gone()
        if not self._refs:
            return []
        ready, _ = self._ray.wait(list(self._refs), num_returns=1, timeout=timeout)
        if ready:  # collect everything else already finished too
            ready, _ = self._ray.wait(list(self._refs), num_returns=len(self._refs), timeout=0)
        elif time.monotonic() - self._head_checked > HEAD_CHECK_EVERY_S:
            self._check_head()  # nothing finished for a while: is anyone still there?
        outcomes = []
        for ref in ready:
            cell = self._refs.pop(ref)
            try:
                outcomes.append(self._ray.get(ref))
            except Exception as exc:  # the worker died, or the object was lost
                # Every node's loss looks alike here; only a lost head ends the run. Its cells
                # are then not failed but left undone, for the rerun (the finished ones above are
                # returned first, to be stored).
                if self._check_head() is None:
                    outcomes.append(_lost(*cell, exc))
        return outcomes

    def _check_head(self) -> str | None:
        """Why the joined cluster's head is gone (also kept for the next call), or None."""
        self._head_checked = time.monotonic()
        if self._address is not None and self._gone is None:
            try:
                _probe(self._address)
            except BackendError as exc:
                self._gone = str(exc)
        return self._gone

    def _stop_if_gone(self) -> None:
        if self._gone is not None:
            raise ClusterLost(
                f"the Ray cluster stopped answering mid-run ({self._gone}): its head died or"
                " was stopped; every finished cell is stored, the cells it was running are not:"
                " rerun the same command against a running cluster to compute what is missing"
            )

    def close(self) -> None:  # noqa: D102
        if self._gone is None:  # a lost cluster cancels nothing (and would not answer)
            for ref in self._refs:
                self._ray.cancel(ref, force=True)
        self._refs.clear()
        if self._started_here:
            self._ray.shutdown()


# Ctrl-C and SIGTERM are held back while a worker is being spawned: interrupted half-way, the
# parent would leave the child reading its start-up data from a closed pipe, and the child would
# print a traceback at the user. Children inherit the mask; init_worker unblocks both.
DEFERRED_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM})


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, DEFERRED_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


PROBE_TIMEOUT_S = 5.0

#: While no cell finishes, how often a run on a joined cluster checks that its head still answers.
HEAD_CHECK_EVERY_S = 10.0

# HTTP/2's client connection preface (RFC 9113 Sec. 3.4) and an empty SETTINGS frame: Ray's GCS and
# its client server (ray://) speak gRPC, i.e. HTTP/2, and a server must answer with a SETTINGS frame
# of its own (a 9-byte header of type 0x4 on stream 0).
_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
_H2_SETTINGS = 0x4


def _probe(address: str, timeout: float = PROBE_TIMEOUT_S) -> None:
    """Fail fast unless a gRPC (HTTP/2) server answers at a Ray ``--address``.

    ``ray.init`` keeps retrying an unreachable cluster for about 20 s and logs every attempt, and
    waits for minutes on a TCP service that is not Ray; a connection attempt and the HTTP/2
    greeting tell both apart within ``2 * timeout`` seconds (10 s by default). ``auto`` and
    ``local`` are Ray's own names and are left to it.
    """
    if address in ("auto", "local"):
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise BackendError(f"--address {address!r} is not HOST:PORT (or ray://HOST:PORT)")
    try:
        connection = socket.create_connection((host.strip("[]"), int(port)), timeout=timeout)
        with connection:
            problem = _h2_problem(connection, time.monotonic() + timeout)
    except OSError as exc:  # refused, unreachable, timed out, or reset by a head going down
        reason = "timed out" if isinstance(exc, TimeoutError) else (exc.strerror or str(exc))
        raise BackendError(
            f"cannot reach the Ray cluster at {address}: {reason} (is `ray start --head` running"
            " there, and is the port open?)"
        ) from None
    if problem is not None:
        raise BackendError(
            f"the service at {address} is not a Ray cluster: {problem} (Ray's address is the head"
            " node's GCS port, 6379 by default, or ray://HOST:10001 for Ray Client)"
        )


def _h2_problem(connection: socket.socket, deadline: float) -> str | None:
    """Why the server on ``connection`` is not an HTTP/2 (gRPC) server, or None if it is."""
    try:
        connection.sendall(_H2_PREFACE)
        header = b""
        while len(header) < 9:
            connection.settimeout(max(0.01, deadline - time.monotonic()))
            chunk = connection.recv(9 - len(header))
            if not chunk:
                return "it closed the connection without an HTTP/2 greeting"
            header += chunk
    except TimeoutError:
        return "no HTTP/2 greeting within the probe's time"
    except ConnectionError:
        # Accepted, then reset or aborted: a server going away (a Ray head dying answers so),
        # not one speaking another protocol. The caller says the cluster cannot be reached.
        raise
    except OSError as exc:
        return f"the connection failed ({exc.strerror or exc})"
    stream = int.from_bytes(header[5:9], "big") & 0x7FFFFFFF
    if header[3] != _H2_SETTINGS or stream != 0:
        return f"it answered {header[:9]!r}, not an HTTP/2 SETTINGS frame"
    return None


def _lost(cell_id: str, label: str, exc: BaseException) -> CellOutcome:
    now = time.time()
    return CellOutcome(
        cell_id,
        f"{label} failed: its worker was lost ({type(exc).__name__}: {exc})",
        started=now,
        finished=now,
    )


def make_backend(
    kind: str,
    workers: int | None,
    address: str | None,
    log_dir: Path | None = None,
    modules: Sequence[str] = ("opt_suite",),
) -> Backend:
    """The backend for ``--backend kind``: ``local`` (``workers`` 0: this process) or ``ray``.

    Local workers write their output to ``log_dir`` (Ray keeps its workers' logs itself). The
    nodes of a joined Ray cluster must run ``modules`` (top-level packages computing the cells) at
    this process's versions.
    """
    if kind == "ray":
        return RayBackend(workers, address, modules)
    if kind != "local":
        raise BackendError(f"unknown backend {kind!r} (expected 'local' or 'ray')")
    count = (os.cpu_count() or 1) if workers is None else workers
    return InlineBackend(log_dir) if count == 0 else PoolBackend(count, log_dir)
