"""Computing one cell, in whatever process runs it (in-process, a local worker or a Ray worker).

A :class:`CellJob` (one subclass per stage: :class:`DemonstrationsJob`, :class:`DiscoveryJob`,
:class:`EvaluationJob`, :class:`ReferencesJob`) carries everything the cell needs — registered
classes (pickled by reference), their params, the tasks, the cell's seed and the outputs of the
cells it depends on, the checkpoints a source may reuse — so a worker needs neither the
registry nor the results directory. :func:`execute`
never raises: an exception (``SystemExit`` and ``KeyboardInterrupt`` raised by the cell's code
included), or a non-finite number in the output, becomes a failed :class:`CellOutcome` whose
message names the cell; only a real Ctrl-C or SIGTERM unwinds it.

Length (over the 400 lines the tree aims for): the four cell kinds, their outcome and the one
execute() that turns any failure into an outcome are the runner's unit of work; the worker
environment is set where cells run.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from opt_suite.families.base import Task, TaskFamily
from opt_suite.interrupts import signals_noted
from opt_suite.stages import CPU_SECONDS_INFO
from opt_suite.store.records import (
    ClonedFit,
    DemonstrationsRecord,
    DiscoveryRecord,
    EvaluationRecord,
    ReferencesRecord,
    StageRecord,
)

if TYPE_CHECKING:
    from opt_suite.demonstrations.base import DemonstrationSource
    from opt_suite.learners.base import Learner
    from opt_suite.methods.base import Method
    from opt_suite.runner.components import Components
    from opt_suite.spec import DemonstrationsSpec, Spec

__all__ = [
    "CellJob",
    "DemonstrationsJob",
    "DiscoveryJob",
    "EvaluationJob",
    "ReferencesJob",
    "CellOutcome",
    "CPU_SECONDS_INFO",
    "execute",
    "worker_environment",
    "apply_worker_environment",
    "init_worker",
    "log_failures_to",
    "warm_up",
]

_T = TypeVar("_T")


@dataclasses.dataclass(frozen=True, eq=False)
class CellJob:
    """What a worker needs to compute one cell; one subclass per stage computes it.

    Attributes:
      cell_id, label: the cell (``label`` names it in messages).
      family_cls, family_params: the task family.
    """

    cell_id: str
    label: str
    family_cls: type[TaskFamily]
    family_params: Any

    def family(self) -> TaskFamily:
        """The family instance (built once per worker process)."""
        return _family(self.family_cls, self.family_params)

    def compute(self) -> tuple[StageRecord, str | None]:
        """The cell's record (its stage's) and a non-finite problem, if any."""
        raise NotImplementedError

    def failure(self, exc: Exception) -> str:
        """The one-line message of a cell whose :meth:`compute` raised ``exc``."""
        return f"{self.label} failed: {type(exc).__name__}: {exc}"


@dataclasses.dataclass(frozen=True, eq=False)
class DemonstrationsJob(CellJob):
    """Demonstrations on the train tasks.

    A source that keeps checkpoints (``uses_checkpoints``) keeps them in a folder of the worker's
    own, filled with ``checkpoints``; the files it writes there come back in the outcome's
    ``checkpoints`` and the runner stores them in the run's ``experts/``. So a cell reads and
    writes the run's checkpoints the same way on any machine — a Ray node that cannot see the
    driver's disk included — and only the runner writes into the run directory.

    Attributes:
      tasks: the train tasks.
      seed: the cell's ``SeedSequence``.
      demonstrations_spec: the spec's ``demonstrations`` section.
      source_cls: the registered demonstration source it names.
      keeps_checkpoints: give the source a checkpoint folder (False: it keeps nothing).
      checkpoints: the run's files this cell may reuse (``source.checkpoint_names``), name ->
        bytes.
    """

    tasks: Sequence[Task]
    seed: np.random.SeedSequence
    demonstrations_spec: DemonstrationsSpec
    source_cls: type[DemonstrationSource]
    keeps_checkpoints: bool = False
    checkpoints: Mapping[str, bytes] = dataclasses.field(default_factory=dict)

    def compute(self) -> tuple[DemonstrationsRecord, str | None]:  # noqa: D102
        if not self.keeps_checkpoints:
            return DemonstrationsRecord(demonstrations=tuple(self._collect(None))), None
        demos, new = in_checkpoint_folder(self.checkpoints, self._collect)
        return DemonstrationsRecord(demonstrations=tuple(demos), new_checkpoints=new), None

    def _collect(self, checkpoint_dir: str | None) -> list[Any]:
        from opt_suite.demonstrations import collect_demonstrations

        demos = collect_demonstrations(
            self.family(),
            list(self.tasks),
            self.demonstrations_spec,
            self.seed,
            self.source_cls,
            checkpoint_dir=checkpoint_dir,
        )
        if not demos:
            raise ValueError("no demonstration was collected")
        return list(demos)


def in_checkpoint_folder(
    checkpoints: Mapping[str, bytes], run: Callable[[str], _T]
) -> tuple[_T, dict[str, bytes]]:
    """``run(folder)`` in a temporary folder filled with ``checkpoints``, and what it wrote there.

    The folder of the worker's own that a source keeping checkpoints is given (a Ray node may not
    see the run's ``experts/``); the files that are new or changed come back, name -> bytes, for
    the runner to store in ``experts/``.
    """
    import tempfile

    with tempfile.TemporaryDirectory(prefix="opt-suite-experts-") as folder:
        for name, data in checkpoints.items():
            (Path(folder) / plain_file_name(name)).write_bytes(data)
        result = run(folder)
        written = {
            path.name: path.read_bytes()
            for path in sorted(Path(folder).iterdir())
            if path.is_file() and not path.name.startswith(".")
        }
    return result, {name: data for name, data in written.items() if checkpoints.get(name) != data}


def plain_file_name(name: str) -> str:
    """``name`` if it names a file within one folder (not a path, not hidden); else ValueError."""
    if not name or "/" in name or "\\" in name or name.startswith("."):
        raise ValueError(f"a checkpoint may not be named {name!r}: expected a plain file name")
    return name


@dataclasses.dataclass(frozen=True, eq=False)
class DiscoveryJob(CellJob):
    """One method entry's option discovery on the train tasks.

    Attributes:
      tasks: the train tasks.
      seed: the cell's ``SeedSequence``.
      method_cls, method_params: the method.
      demonstrations: the demonstrations (methods that use them), else empty.
      interaction_budget: env steps for methods that learn by interacting, else 0.
      matched_count: the option count of the discovery the method's ``count_entry`` names.
    """

    tasks: Sequence[Task]
    seed: np.random.SeedSequence
    method_cls: type[Method]
    method_params: Any
    demonstrations: Sequence[Any] = ()
    interaction_budget: int = 0
    matched_count: int | None = None

    def compute(self) -> tuple[DiscoveryRecord, str | None]:  # noqa: D102
        from opt_suite.methods.base import DiscoveryContext
        from opt_suite.options import OptionSet, to_bytes

        method = self.method_cls(self.method_params)
        context = DiscoveryContext(
            self.family(),
            list(self.tasks),
            list(self.demonstrations),
            self.interaction_budget,
            self.seed,
            matched_count=self.matched_count,
        )
        found = method.discover(context)
        if not isinstance(found.options, OptionSet):
            raise TypeError(
                f"discover() returned options of type {type(found.options).__name__}; expected an "
                "opt_suite.options.OptionSet"
            )
        bad = found.options.non_finite()
        problem = None if bad is None else f"NaN/inf in its option set ({bad})"
        curves = {
            name: np.asarray(values, dtype=np.float64).ravel()
            for name, values in found.curves.items()
        }
        for name in found.files:  # plain names beside the cell's own files
            if name in ("options.npz", "cell.json") or not name or "/" in name or name[0] == ".":
                raise ValueError(f"Discovery.files: a file may not be named {name!r}")
        reads = self.method_cls.discovery_budget(self.method_params).demonstrations
        # The experts' steps it read: its cost, beside frames.
        demonstrated = sum(len(t.actions) for t in self.demonstrations) if reads else 0
        counted = bool(self.interaction_budget)  # whatever the method says it used
        record = DiscoveryRecord(
            options=to_bytes(found.options),
            options_count=len(found.options),
            curves_found=curves,
            method_info=dict(found.info),
            extra_files=dict(found.files),
            demonstration_steps=int(demonstrated) if self.demonstrations and reads else None,
            counted_env_steps=context.budget.steps if counted else None,
            counted_env_frames=context.budget.frames if counted else None,
        )
        return record, problem


@dataclasses.dataclass(frozen=True, eq=False)
class EvaluationJob(CellJob):
    """The test-time learner with one method's options on one test task, for one seed.

    Attributes:
      task: the test task.
      seed: the run's ``SeedSequence``.
      learner_cls, learner_params: the learner.
      options: the bytes of the method's option-set file; the worker loads it with
        :func:`opt_suite.options.from_bytes` (option sets travel as files, never as objects).
      episodes, max_steps: the evaluation budget.
      frames: a budget in emulator frames instead of ``episodes`` (None: episodes); the run then
        logs however many episodes ended within it.
      record_usage: also count how the learner used the options (its ``run_with_usage``, which
        gives the same episodes as ``run``); the outcome's ``usage`` holds one ``OptionUsage``.
      zero_shot_episodes: episodes of the learner's untrained policy over the options (its
        ``zero_shot``), after the learning run, with ``zero_shot_seed`` (a stream of their own);
        their returns go to the record's ``zero_shot_returns``. 0: none.
    """

    task: Task
    seed: np.random.SeedSequence
    learner_cls: type[Learner]
    learner_params: Any
    options: bytes
    episodes: int
    max_steps: int
    frames: int | None = None
    record_usage: bool = False
    zero_shot_episodes: int = 0
    zero_shot_seed: np.random.SeedSequence | None = None

    def compute(self) -> tuple[EvaluationRecord, str | None]:  # noqa: D102
        from opt_suite.learners.base import LearnerContext, LearnerRun
        from opt_suite.options import from_bytes
        from opt_suite.options.policy_start import PolicyStart

        learner = self.learner_cls(self.learner_params)
        runs = [LearnerRun(self.task, self.seed)]
        options = from_bytes(self.options)
        if isinstance(options, PolicyStart) and not learner.clones_policy:
            raise TypeError(
                f"learner {learner.name!r} has no policy to initialise, so it cannot start from "
                "behaviour cloning (a policy start, e.g. bc_ppo); use the tf_agents learner"
            )
        context = LearnerContext(
            self.family(), runs, options, self.episodes, self.max_steps, self.frames
        )
        usage = None
        if self.record_usage:
            if not learner.counts_usage or (self.frames is not None and not learner.frame_budgets):
                raise TypeError(
                    f"learner {learner.name!r} does not count option usage"
                    + ("" if self.frames is None else " within a frame budget")
                )
            pairs = learner.run_with_usage(context)
            logs = [log for log, _ in pairs]
            [usage] = [counts for _, counts in pairs]  # one run: this cell's test task
        else:
            logs = learner.run(context)
        if len(logs) != len(runs):
            raise ValueError(f"the learner returned {len(logs)} logs for {len(runs)} runs")
        episodes = tuple(_checked_log(self.task, log, self.episodes, self.frames) for log in logs)
        problem = _non_finite_episodes(episodes)
        zero_shot = None
        if self.zero_shot_episodes and problem is None:
            zero_shot, problem = self._zero_shot(learner, options)
        [fit] = [log.cloning_fit for log in logs]  # one run: this cell's test task
        record = EvaluationRecord(
            task_episodes=episodes,
            usage=usage,
            zero_shot_returns=None if zero_shot is None else tuple(zero_shot),
            cloning_fit=None if fit is None else ClonedFit(*fit),
        )
        return record, problem

    def _zero_shot(self, learner: Any, options: Any) -> tuple[list[float] | None, str | None]:
        """The untrained policy's returns (None when the learner cannot say) and a problem."""
        from opt_suite.learners.base import LearnerContext, LearnerRun

        if self.zero_shot_seed is None:  # every draw has a seed derived from the spec
            raise ValueError("zero_shot_episodes given without zero_shot_seed")
        run = LearnerRun(self.task, self.zero_shot_seed)
        context = LearnerContext(
            self.family(), [run], options, self.zero_shot_episodes, self.max_steps
        )
        found = learner.zero_shot(context)
        if found is None:
            return None, None
        if len(found) != 1:
            raise ValueError(f"the learner's zero_shot gave {len(found)} return arrays for 1 run")
        returns = np.asarray(found[0], dtype=np.float64)
        if returns.shape != (self.zero_shot_episodes,):
            raise ValueError(
                f"the learner's zero_shot gave returns of shape {returns.shape} on "
                f"{self.task.task_id}; expected ({self.zero_shot_episodes},)"
            )
        if not np.all(np.isfinite(returns)):
            return None, f"NaN/inf in the zero-shot returns on test task {self.task.index}"
        return returns.tolist(), None


@dataclasses.dataclass(frozen=True, eq=False)
class ReferencesJob(CellJob):
    """The reference returns (random and expert) of one (seed, test task), for normalised scores.

    Attributes:
      spec, components: the spec and its registered classes (the expert is its demonstration
        source, called on the test task).
      task: the test task.
      seed: the seed index (the pair's own stream: ``seeding.reference_seed``).
      cached: the pair's (random, expert) from the run's trusted file, when it has one (the
        runner read it: the cell then measures nothing).
      keeps_checkpoints, checkpoints: as :class:`DemonstrationsJob`'s, for the test task's
        expert (``ppo_expert``), which comes back in the outcome's ``checkpoints``.
    """

    spec: Spec
    components: Components
    task: Task
    seed: int
    cached: tuple[float, float] | None = None
    keeps_checkpoints: bool = False
    checkpoints: Mapping[str, bytes] = dataclasses.field(default_factory=dict)

    def compute(self) -> tuple[ReferencesRecord, str | None]:  # noqa: D102
        new: dict[str, bytes] = {}
        if self.cached is not None:
            random, expert = self.cached
        elif not self.keeps_checkpoints:
            random, expert = self._measure(None)
        else:
            (random, expert), new = in_checkpoint_folder(self.checkpoints, self._measure)
        record = ReferencesRecord(
            random=random, expert=expert, pid=os.getpid(), new_checkpoints=new
        )
        return record, None

    def _measure(self, experts: str | None) -> tuple[float, float]:
        from opt_suite.runner.references import measure_pair

        folder = None if experts is None else Path(experts)
        return measure_pair(self.spec, self.components, self.family(), self.task, self.seed, folder)

    def failure(self, exc: Exception) -> str:  # noqa: D102
        from opt_suite.runner.references import ReferenceError

        if isinstance(exc, ReferenceError):  # it names the seed, the task and the cause
            return f"reference returns not measured: {exc}"
        return super().failure(exc)


@dataclasses.dataclass(frozen=True, eq=False)
class CellOutcome:
    """The result of one cell; ``error`` is None on success.

    Attributes:
      cell_id: the cell.
      error: one-paragraph message naming the cell and the cause (None on success).
      details: the traceback of a failure.
      started, finished, wall_s, host: when and where it ran (``wall_s`` covers the compute only).
      record: what the cell produced, its stage's record (:mod:`opt_suite.store.records`), with
        its CPU seconds; None for a failure.
      retryable: whether a failure may not happen again on a rerun (a lost worker, a full disk);
        False for an error of the cell's own code or a non-finite result, which the same inputs
        and seeds give again (:func:`may_change_on_retry`).
    """

    cell_id: str
    error: str | None
    details: str = ""
    started: float = 0.0
    finished: float = 0.0
    wall_s: float = 0.0
    host: str = ""
    record: StageRecord | None = None
    retryable: bool = True


def worker_environment() -> dict[str, str]:
    """Environment every worker runs with: one thread per op, deterministic TensorFlow kernels.

    Parallelism comes from running cells side by side; a multi-threaded reduction could also sum in
    an order that depends on the thread count, and results must not depend on the worker count.
    """
    return {
        "TF_NUM_INTRAOP_THREADS": "1",
        "TF_NUM_INTEROP_THREADS": "1",
        "TF_DETERMINISTIC_OPS": "1",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }


def apply_worker_environment() -> None:
    """Write :func:`worker_environment` into this process's environment (set values are kept).

    Each variable is read once, when its library loads: it takes effect for libraries this
    process (or a process it spawns later) has not loaded yet.
    """
    for key, value in worker_environment().items():
        os.environ.setdefault(key, value)


#: Where :func:`execute` appends a failed cell's traceback in this process (None: nowhere but the
#: store). A pool worker's own log (:func:`init_worker`), or the runner's for ``--workers 0``.
_FAILURE_LOG: Path | None = None


def log_failures_to(path: Path | None) -> None:
    """Append the traceback of every cell that fails in this process to ``path`` (None: stop)."""
    global _FAILURE_LOG
    _FAILURE_LOG = path


def _logged(error: str, details: str) -> str:
    """``error`` naming the log its traceback was appended to (unchanged when there is none).

    The store keeps the traceback too, but a user reading ``failed: ...`` should not need SQL to
    see it: the line names the file to open.
    """
    if _FAILURE_LOG is None or not details:
        return error
    try:
        _FAILURE_LOG.parent.mkdir(parents=True, exist_ok=True)
        sys.stderr.flush()  # a worker's stderr is this file too: keep its lines in order
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW  # never through a link
        with open(os.open(_FAILURE_LOG, flags, 0o644), "a", encoding="utf-8") as log:
            log.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {error}\n{details}\n")
    except OSError:  # a full disk: the store still has the traceback
        return error
    return f"{error} (traceback in {_FAILURE_LOG})"


def init_worker(log_dir: str | None = None) -> None:
    """Process-pool initializer: set :func:`worker_environment` before anything imports TF.

    Sends the worker's stdout/stderr (TensorFlow's C++ start-up chatter included) to
    ``log_dir/worker-<pid>.log`` so the progress line stays readable, and the traceback of every
    cell that fails there too; exits the worker when the runner is gone (``kill -9`` leaves no
    one to take its result).
    """
    apply_worker_environment()
    if log_dir is not None:
        Path(log_dir).mkdir(parents=True, exist_ok=True)
        log = Path(log_dir) / f"worker-{os.getpid()}.log"
        fd = os.open(
            log,
            os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW,  # never through a link
            0o644,
        )
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        log_failures_to(log)
    # The runner spawns workers with Ctrl-C and SIGTERM blocked (see backends); a worker must die
    # on them, e.g. when the runner terminates it (one pending since the spawn is delivered here,
    # after the output went to the log).
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="opt-suite-parent-watch", daemon=True).start()


def warm_up() -> None:
    """A no-op job that makes the pool start a worker (importing this module) ahead of time."""


_FAMILIES: dict[tuple[type, str], TaskFamily] = {}


def _family(cls: type[TaskFamily], params: Any) -> TaskFamily:
    # Families may precompute models; build each one once per worker process.
    key = (cls, repr(params))
    if key not in _FAMILIES:
        _FAMILIES.clear()
        _FAMILIES[key] = cls(params)
    return _FAMILIES[key]


def execute(job: CellJob) -> CellOutcome:
    """Compute ``job``'s cell; failures (exceptions, NaN) come back as an outcome, never raised."""
    started = time.time()
    clock = time.perf_counter()
    cpu_clock = time.process_time()
    host = socket.gethostname()
    record: StageRecord | None = None
    with signals_noted() as arrived:
        try:
            record, problem = job.compute()
            error = None if problem is None else f"{job.label} produced {problem}"
            details = ""
        except Exception as exc:  # any failure of a method/learner must not stop the other cells
            error = job.failure(exc)
            details = traceback.format_exc()
            retryable = may_change_on_retry(exc)
        except (SystemExit, KeyboardInterrupt) as exc:
            if arrived:  # a real Ctrl-C or SIGTERM: the run unwinds (cli.run marks it interrupted)
                raise
            # Raised by the cell's own code (an env calling sys.exit(0)): a failed cell, not the
            # end of the run, and never an exit status of 0.
            error = (
                f"{job.label} failed: {type(exc).__name__}({exc}) raised by the cell's code "
                "(an env, method or learner), not by a signal"
            )
            details = traceback.format_exc()
            retryable = False  # the same code exits the same way on a rerun
        else:
            retryable = False  # a NaN from the same inputs and seeds comes back the same
    if error is not None:
        error = _logged(error, details)
    wall = time.perf_counter() - clock
    if not error and record is not None:  # every stage's record keeps it
        cpu = round(time.process_time() - cpu_clock, 3)
        record = dataclasses.replace(record, cpu_seconds=cpu)
    return CellOutcome(
        job.cell_id,
        error,
        details,
        started,
        started + wall,
        wall,
        host,
        record=None if error else record,
        retryable=retryable if error else True,
    )


#: Failures that come from the machine, not from the cell's inputs: a rerun may not meet them.
_MACHINE_ERRORS = (OSError, MemoryError, TimeoutError, ConnectionError)


def may_change_on_retry(exc: BaseException) -> bool:
    """Whether a cell that raised ``exc`` may succeed when run again with the same inputs.

    A cell is a function of its inputs and seeds, so any error of the code it runs (a
    ``TypeError`` an env raises on a kwarg, a ``ValueError`` of a method) comes back on every
    rerun; only the machine's failures (files, memory, time-outs, connections) may not.
    """
    return isinstance(exc, _MACHINE_ERRORS)


def _checked_log(
    task: Task, log: Any, episodes: int, budget: int | None = None
) -> tuple[int, Any, Any, Any]:
    """(task index, returns, steps, frames) of a learner's log, its shapes and frames checked.

    With a frame ``budget`` the log holds the episodes that ended within it: at least one, all
    of one length, the last ending at or before the budget.
    """
    returns = np.asarray(log.returns, dtype=np.float64)
    steps = np.asarray(log.steps)
    frames = np.asarray(log.frames)
    if budget is not None:
        episodes = len(returns)
        if episodes == 0:
            raise ValueError(
                f"no episode ended within evaluation.frames = {budget} on {task.task_id}: the "
                "learning curve would be empty (raise evaluation.frames)"
            )
    if {returns.shape, steps.shape, frames.shape} != {(episodes,)}:
        raise ValueError(
            f"the learner logged returns {returns.shape}, steps {steps.shape} and frames "
            f"{frames.shape} on {task.task_id}; expected ({episodes},) each"
        )
    if budget is not None and frames[-1] > budget:
        raise ValueError(
            f"the learner logged an episode ending at frame {int(frames[-1])} on {task.task_id}, "
            f"past evaluation.frames = {budget}"
        )
    if np.any(np.diff(frames) < 0) or np.any(frames < 0):
        raise ValueError(
            f"the learner logged frames that are not a cumulative count on {task.task_id} "
            f"(negative or decreasing): {frames[:10].tolist()}..."
        )
    return task.index, returns, steps.astype(np.float64), frames.astype(np.float64)


def _non_finite_episodes(
    episodes: Sequence[tuple[int, np.ndarray, np.ndarray, np.ndarray]],
) -> str | None:
    """Describe the first NaN/inf in an evaluation's episodes, or None when all are finite."""
    for task, returns, steps, _frames in episodes:
        if not (np.all(np.isfinite(returns)) and np.all(np.isfinite(steps))):
            bad = int(np.argmin(np.isfinite(returns) & np.isfinite(steps)))
            return f"NaN/inf on test task {task}, episode {bad}"
    return None
