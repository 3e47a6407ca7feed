"""One typed record per stage: what a done cell of that stage produced, and its store round trip.

A cell's job returns its stage's record (:mod:`opt_suite.runner.cells`); the runner hands it to
the store, which keeps its facts as the cell's ``info`` JSON (``cells.info`` and ``cell.json``)
and its data as the cell folder's files, episode rows, curve rows and option-set row; a reader
turns a stored row back into the record's facts (:attr:`opt_suite.store.CellInfo.record`). The
keys of the stored ``info`` are spelled here and nowhere else: the writer and every reader of a
per-cell fact meet at a typed field, not at a string.

The stored layout is the one runs have always been written with (every key, file and row as
before these records existed), so a store written by older code reads the same way. A method's
own facts (``Discovery.info``) stay a free-form dict (:attr:`DiscoveryRecord.method_info`): shown
as they are, never read by key, except the two keys the method contract defines (its warnings and
the env steps it reports).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from opt_suite.stages import CPU_SECONDS_INFO, ZERO_SHOT_INFO, Stage
from opt_suite.store.files import DEMOS_FILE, USAGE_FILE

__all__ = [
    "StageRecord",
    "ClonedFit",
    "DemonstrationsRecord",
    "DiscoveryRecord",
    "EvaluationRecord",
    "ReferencesRecord",
    "RECORD_TYPES",
    "Episodes",
    "record_from_info",
]

#: One test task's episodes: (test task index, returns [E], steps [E], cumulative frames [E]).
Episodes = tuple[int, np.ndarray, np.ndarray, np.ndarray]

#: Writes one file of a cell's folder at the path it is given.
FileWriter = Callable[[Path], None]

# The stored info keys of the runner's own facts (the method's own keys sit beside them).
_DEMONSTRATION_STEPS = "demonstration_steps"
_COUNTED_ENV_STEPS = "counted_env_steps"
_COUNTED_ENV_FRAMES = "counted_env_frames"
_REFERENCE_RANDOM, _REFERENCE_EXPERT, _REFERENCE_PID = "random", "expert", "pid"


@dataclasses.dataclass(frozen=True, eq=False, kw_only=True)
class StageRecord:
    """What every stage's record holds; one subclass per :class:`~opt_suite.stages.Stage`.

    Attributes:
      cpu_seconds: the CPU seconds the cell's job took in the process that ran it (every thread
        of it); None before the runner measured it, and in cells stored before it was recorded.
    """

    stage: ClassVar[Stage]
    cpu_seconds: float | None = None

    def stored(self) -> dict[str, Any]:
        """What the store writes for it: the ``CellRecord`` fields beside the cell's identity."""
        return {
            "info": self.info(),
            "files": self.files(),
            "num_options": self.num_options(),
            "episodes": self.episodes(),
            "curves": self.curves(),
        }

    def info(self) -> dict[str, Any]:
        """The cell's facts as the store keeps them (``cells.info``, ``cell.json``'s ``info``)."""
        return self._facts() | self._cpu()

    def files(self) -> dict[str, FileWriter]:
        """The cell folder's files, name -> writer (``cell.json`` is the store's own)."""
        return {}

    def num_options(self) -> int | None:
        """The option set's size for the store's ``option_sets`` row (discovery only)."""
        return None

    def episodes(self) -> Sequence[Episodes]:
        """The rows of the store's ``episodes`` table (evaluation only)."""
        return ()

    def curves(self) -> dict[str, np.ndarray]:
        """The rows of the store's ``curves`` table, name -> values (discovery only)."""
        return {}

    def checkpoints(self) -> Mapping[str, bytes]:
        """Files the cell's source wrote for the run's ``experts/`` folder, name -> bytes."""
        return {}

    @classmethod
    def from_info(cls, info: Mapping[str, Any]) -> StageRecord:
        """The record's facts from a stored ``info`` (its files and rows stay in the store)."""
        return cls(cpu_seconds=_cpu_of(info))

    def _facts(self) -> dict[str, Any]:
        return {}

    def _cpu(self) -> dict[str, Any]:
        return {} if self.cpu_seconds is None else {CPU_SECONDS_INFO: self.cpu_seconds}


@dataclasses.dataclass(frozen=True, eq=False, kw_only=True)
class DemonstrationsRecord(StageRecord):
    """The demonstrations of one seed on the train tasks.

    Attributes:
      demonstrations: the trajectories (``demonstrations.npz``).
      new_checkpoints: the files the source wrote in its checkpoint folder that the run did not
        have (or had with other bytes), name -> bytes, for the run's ``experts/``.
    """

    stage: ClassVar[Stage] = Stage.DEMONSTRATIONS
    demonstrations: tuple[Any, ...] = ()
    new_checkpoints: Mapping[str, bytes] = dataclasses.field(default_factory=dict)

    def files(self) -> dict[str, FileWriter]:  # noqa: D102
        from opt_suite.demonstrations import save_demonstrations

        demonstrations = list(self.demonstrations)
        return {DEMOS_FILE: lambda path: save_demonstrations(path, demonstrations)}

    def checkpoints(self) -> Mapping[str, bytes]:  # noqa: D102
        return self.new_checkpoints


@dataclasses.dataclass(frozen=True)
class ClonedFit:
    """A cloning control's fit (``methods.base.CLONING_FIT_KEYS``; None: not recorded).

    Attributes:
      accuracy, log_likelihood: on the demonstrations it was cloned on.
      held_out_accuracy, held_out_log_likelihood: a second clone's, on held-out demonstrations.
    """

    accuracy: float
    log_likelihood: float | None
    held_out_accuracy: float | None
    held_out_log_likelihood: float | None


@dataclasses.dataclass(frozen=True, eq=False, kw_only=True)
class DiscoveryRecord(StageRecord):
    """One method entry's discovery on one seed.

    Attributes:
      options: the option-set file's bytes (``options.npz``; stored by the store's
        ``option_sets`` row with :attr:`options_count`).
      options_count: how many options the set holds.
      curves_found: the method's training curves, name -> 1-D float64 array.
      method_info: the method's own facts (``Discovery.info``), shown as they are.
      extra_files: the method's extra files (``Discovery.files``), name -> bytes.
      demonstration_steps: the steps of the demonstrations it read (None: it read none).
      counted_env_steps, counted_env_frames: what the context's envs counted (None: it was given
        no interaction budget), whatever the method reports itself.
    """

    stage: ClassVar[Stage] = Stage.DISCOVERY
    options: bytes = b""
    options_count: int = 0
    curves_found: Mapping[str, np.ndarray] = dataclasses.field(default_factory=dict)
    method_info: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    extra_files: Mapping[str, bytes] = dataclasses.field(default_factory=dict)
    demonstration_steps: int | None = None
    counted_env_steps: int | None = None
    counted_env_frames: int | None = None

    @property
    def warnings(self) -> tuple[str, ...]:
        """The method's one-line warnings (``Discovery.info[DISCOVERY_WARNINGS]``)."""
        from opt_suite.methods.base import DISCOVERY_WARNINGS

        return tuple(str(line) for line in self.method_info.get(DISCOVERY_WARNINGS) or ())

    @property
    def cloning_fit(self) -> ClonedFit | None:
        """A cloning control's fit to the demonstrations (None: the method recorded none)."""
        return _cloning_fit_of(self.method_info)

    @property
    def reported_env_steps(self) -> int:
        """The env steps the method reports itself (``Discovery.info["env_steps"]``; 0: none)."""
        return int(self.method_info.get("env_steps", 0))

    @property
    def env_frames(self) -> float:
        """The frames it interacted for: counted by the runner, else reported by the method."""
        return float(self.counted_env_frames or 0) or float(self.reported_env_steps)

    def _facts(self) -> dict[str, Any]:
        runner = {
            _DEMONSTRATION_STEPS: self.demonstration_steps,
            _COUNTED_ENV_STEPS: self.counted_env_steps,
            _COUNTED_ENV_FRAMES: self.counted_env_frames,
        }
        return {**self.method_info, **{k: v for k, v in runner.items() if v is not None}}

    def files(self) -> dict[str, FileWriter]:  # noqa: D102
        from opt_suite.store.files import OPTIONS_FILE

        found = {name: _bytes_writer(data) for name, data in self.extra_files.items()}
        return {OPTIONS_FILE: _bytes_writer(self.options), **found}

    def num_options(self) -> int | None:  # noqa: D102
        return self.options_count

    def curves(self) -> dict[str, np.ndarray]:  # noqa: D102
        return dict(self.curves_found)

    @classmethod
    def from_info(cls, info: Mapping[str, Any]) -> DiscoveryRecord:  # noqa: D102
        runner = (_DEMONSTRATION_STEPS, _COUNTED_ENV_STEPS, _COUNTED_ENV_FRAMES, CPU_SECONDS_INFO)
        return cls(
            method_info={k: v for k, v in info.items() if k not in runner},
            demonstration_steps=_int_or_none(info.get(_DEMONSTRATION_STEPS)),
            counted_env_steps=_int_or_none(info.get(_COUNTED_ENV_STEPS)),
            counted_env_frames=_int_or_none(info.get(_COUNTED_ENV_FRAMES)),
            cpu_seconds=_cpu_of(info),
        )


@dataclasses.dataclass(frozen=True, eq=False, kw_only=True)
class EvaluationRecord(StageRecord):
    """The test-time learner with one method's options on one test task, for one seed.

    Attributes:
      task_episodes: the learning run's episodes (one entry: its test task).
      usage: how the learner used the options (an ``OptionUsage``, ``option_usage.npz``), when
        it counted them; else None.
      zero_shot_returns: the untrained policy's returns over the options, when the spec asks for
        them and the learner can say; else None.
      cloning_fit: the fit of the policy the learner cloned before its run (``bc_ppo``), under
        the keys of a discovery cell's (``methods.base.CLONING_FIT_KEYS``); None: it cloned none,
        or the cell was stored before it was recorded.
    """

    stage: ClassVar[Stage] = Stage.EVALUATION
    task_episodes: tuple[Episodes, ...] = ()
    usage: Any = None
    zero_shot_returns: tuple[float, ...] | None = None
    cloning_fit: ClonedFit | None = None

    def _facts(self) -> dict[str, Any]:
        from opt_suite.methods.base import CLONING_FIT_KEYS

        facts: dict[str, Any] = {}
        if self.zero_shot_returns is not None:
            facts[ZERO_SHOT_INFO] = list(self.zero_shot_returns)
        if self.cloning_fit is not None:
            fit = self.cloning_fit
            values = (
                fit.accuracy,
                fit.log_likelihood,
                fit.held_out_accuracy,
                fit.held_out_log_likelihood,
            )
            facts.update(
                {k: v for k, v in zip(CLONING_FIT_KEYS, values, strict=True) if v is not None}
            )
        return facts

    def files(self) -> dict[str, FileWriter]:  # noqa: D102
        usage = self.usage
        return {} if usage is None else {USAGE_FILE: lambda path: usage.save(path)}

    def episodes(self) -> Sequence[Episodes]:  # noqa: D102
        return self.task_episodes

    @classmethod
    def from_info(cls, info: Mapping[str, Any]) -> EvaluationRecord:  # noqa: D102
        returns = info.get(ZERO_SHOT_INFO)
        zero_shot = None if returns is None else tuple(float(r) for r in returns)
        return cls(
            zero_shot_returns=zero_shot,
            cloning_fit=_cloning_fit_of(info),
            cpu_seconds=_cpu_of(info),
        )


@dataclasses.dataclass(frozen=True, eq=False, kw_only=True)
class ReferencesRecord(StageRecord):
    """The reference returns of one (seed, test task): the normalised scores' 0 and 1.

    Attributes:
      random, expert: the mean returns of the uniform random policy and of the expert.
      pid: the process that measured (or read) them.
      new_checkpoints: as :class:`DemonstrationsRecord`'s, for the test task's expert.
    """

    stage: ClassVar[Stage] = Stage.REFERENCES
    random: float = float("nan")
    expert: float = float("nan")
    pid: int = 0
    new_checkpoints: Mapping[str, bytes] = dataclasses.field(default_factory=dict)

    def _facts(self) -> dict[str, Any]:
        return {
            _REFERENCE_RANDOM: self.random,
            _REFERENCE_EXPERT: self.expert,
            _REFERENCE_PID: self.pid,
        }

    def checkpoints(self) -> Mapping[str, bytes]:  # noqa: D102
        return self.new_checkpoints

    @classmethod
    def from_info(cls, info: Mapping[str, Any]) -> ReferencesRecord:  # noqa: D102
        return cls(
            random=float(info.get(_REFERENCE_RANDOM, float("nan"))),
            expert=float(info.get(_REFERENCE_EXPERT, float("nan"))),
            pid=int(info.get(_REFERENCE_PID, 0)),
            cpu_seconds=_cpu_of(info),
        )


#: Each stage's record type: the one place a stage's stored ``kind`` meets its record.
RECORD_TYPES: dict[Stage, type[StageRecord]] = {
    record.stage: record
    for record in (DemonstrationsRecord, DiscoveryRecord, EvaluationRecord, ReferencesRecord)
}


def record_from_info(kind: str, info: Mapping[str, Any]) -> StageRecord:
    """The facts of a stored cell of stage ``kind`` (a ``Stage`` value), from its ``info``."""
    return RECORD_TYPES[Stage(kind)].from_info(info)


def _bytes_writer(data: bytes) -> FileWriter:
    def write(path: Path) -> None:
        Path(path).write_bytes(data)

    return write


def _cpu_of(info: Mapping[str, Any]) -> float | None:
    seconds = info.get(CPU_SECONDS_INFO)
    return None if seconds is None else float(seconds)


def _cloning_fit_of(info: Mapping[str, Any]) -> ClonedFit | None:
    """The fit stored under ``CLONING_FIT_KEYS`` (None: no accuracy recorded)."""
    from opt_suite.methods.base import CLONING_FIT_KEYS

    if CLONING_FIT_KEYS[0] not in info:
        return None
    accuracy, *rest = (_float_or_none(info.get(k)) for k in CLONING_FIT_KEYS)
    return ClonedFit(float(accuracy or 0.0), *rest)


def _float_or_none(value: Any) -> float | None:
    return None if value is None else float(value)


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)
