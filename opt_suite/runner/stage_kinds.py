"""One object per stage: what its cells hash, how its job is built, and what is kept of it.

:data:`STAGE_KINDS` maps each :class:`~opt_suite.stages.Stage` to its object; the planner
(:mod:`.plan`) asks it what a cell's id hashes, the runner (:mod:`.protocol`) asks it for the
cell's job, for what a dependent cell reads of its record, and to keep what the run keeps beside
the store. What the store writes of a record, and reads back, is the record's own business
(:mod:`opt_suite.store.records`). A new stage is one class here and one record there; a new
per-cell number of an existing stage is one field of its record.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TextIO

from opt_suite.files_guard import read_bounded
from opt_suite.options.base import MAX_FILE_BYTES
from opt_suite.runner.cells import (
    CellJob,
    DemonstrationsJob,
    DiscoveryJob,
    EvaluationJob,
    ReferencesJob,
)
from opt_suite.runner.references import reference_key
from opt_suite.runner.seeding import (
    demonstrations_seed,
    discovery_seed,
    evaluation_seed,
    zero_shot_seed,
)
from opt_suite.spec import to_plain
from opt_suite.stages import Stage
from opt_suite.store.files import OPTIONS_FILE, load_demonstrations
from opt_suite.store.records import (
    DemonstrationsRecord,
    DiscoveryRecord,
    ReferencesRecord,
    StageRecord,
)

if TYPE_CHECKING:
    from opt_suite.demonstrations.base import DemonstrationSource
    from opt_suite.families.base import Task, TaskFamily
    from opt_suite.learners.base import Learner
    from opt_suite.methods.base import Method
    from opt_suite.runner.cell import Cell, Plan
    from opt_suite.runner.components import Components
    from opt_suite.spec import Spec

__all__ = [
    "STAGE_KINDS",
    "DEMONSTRATIONS",
    "DISCOVERY",
    "EVALUATION",
    "REFERENCES",
    "Hashing",
    "JobInputs",
    "StageKind",
    "evaluation_job",
]


@dataclasses.dataclass(frozen=True, eq=False)
class Hashing:
    """What the cells of one plan hash beside their own inputs (see :mod:`.plan`).

    Attributes:
      spec: the spec.
      family_cls, learner_cls, source_cls: the registered classes (their providers enter ``code``).
      train: the train tasks' params, plain.
      provider: names the code that provides a class (:func:`.versions.provider`).
      protocol: the planner's ``PROTOCOL`` (what a cell's inputs mean).

    The planner passes its own ``provider`` and ``PROTOCOL``: one name each decides what every
    cell's ``code`` and ``protocol`` say.
    """

    spec: Spec
    family_cls: type[TaskFamily] | None
    learner_cls: type[Learner] | None
    source_cls: type[DemonstrationSource] | None
    train: list[Any]
    provider: Callable[[type | None], str | None]
    protocol: int

    def common(self, seed: int) -> dict[str, Any]:
        """What every cell of ``seed`` hashes: its seed streams derive from (tasks.seed, seed)."""
        return {
            "protocol": self.protocol,
            "seed": seed,
            "task_seed": self.spec.tasks.seed,
            "family": self._family,
        }

    @functools.cached_property
    def _family(self) -> Any:
        # Once per plan, not once per cell: converting the family's params was most of the
        # planning time of a 1,000-cell plan. Shared by every cell's inputs, which nothing edits.
        return to_plain(self.spec.family)

    def learner(self) -> dict[str, Any]:
        """The learner settings an evaluation hashes."""
        evaluation = to_plain(self.spec.evaluation)
        # The budget: episodes, or frames when given (written only then, so that the ids of cells
        # with an episode budget stay what they were before frame budgets existed).
        budget: tuple[str, ...] = ("episodes",) if evaluation.get("frames") is None else ("frames",)
        # The zero-shot episodes are computed in the evaluation cell: a count that is not the
        # default enters its id (the default is left out, as the spec hash leaves it out).
        budget += ("zero_shot_episodes",) if "zero_shot_episodes" in evaluation else ()
        return {k: evaluation[k] for k in ("learner", "params", *budget, "max_steps")}


class JobInputs(Protocol):
    """What the runner offers a stage building a cell's job (``protocol._Inputs``)."""

    spec: Spec
    plan: Plan
    components: Components
    directory: Path
    stream: TextIO

    def common(self, cell: Cell) -> dict[str, Any]:
        """The ``CellJob`` fields every job has."""

    def output(self, cell_id: str) -> Any:
        """What done cell ``cell_id`` gives the cells that read it (:meth:`StageKind.output`)."""

    def deps(self, cell: Cell, stage: Stage) -> list[str]:
        """The cells of ``stage`` that ``cell`` reads."""

    def checkpoints(self, family: TaskFamily, tasks: Sequence[Task], seed: Any) -> dict[str, bytes]:
        """The run's checkpoints the source would reuse demonstrating ``tasks`` with ``seed``."""


class StageKind:
    """One stage: its job, what dependent cells read of its record, what the run keeps of it."""

    stage: ClassVar[Stage]

    def job(self, inputs: JobInputs, cell: Cell) -> CellJob:
        """The job that computes ``cell``."""
        raise NotImplementedError

    def output(self, record: StageRecord) -> Any:
        """What the cells that depend on this one read of its record (None: no cell does)."""
        return None

    def read_output(self, folder: Path) -> Any:
        """:meth:`output` of a done cell, read back from its folder."""
        raise ValueError(f"no cell reads the output of a {self.stage.value} cell")

    def keep(self, directory: Path, cell: Cell, record: StageRecord) -> None:
        """Keep what the run keeps of ``record`` beside the store, before the cell is stored."""


class DemonstrationsKind(StageKind):
    """Demonstrations of one seed on the train tasks."""

    stage = Stage.DEMONSTRATIONS

    def hashed(self, hashing: Hashing, seed: int) -> dict[str, Any]:
        """Family params, the train tasks' params, the ``demonstrations`` section."""
        return {
            **hashing.common(seed),
            "code": {
                "family": hashing.provider(hashing.family_cls),
                "source": hashing.provider(hashing.source_cls),
            },
            "kind": self.stage.value,
            "train_tasks": hashing.train,
            "demonstrations": to_plain(hashing.spec.demonstrations),
        }

    def job(self, inputs: JobInputs, cell: Cell) -> DemonstrationsJob:  # noqa: D102
        spec, components = inputs.spec, inputs.components
        job = DemonstrationsJob(
            **inputs.common(cell),
            tasks=inputs.plan.train_tasks,
            seed=demonstrations_seed(spec.tasks.seed, cell.seed),
            demonstrations_spec=spec.demonstrations,
            source_cls=components.demonstrations,
            keeps_checkpoints=components.demonstrations.uses_checkpoints,
        )
        if not job.keeps_checkpoints:
            return job
        # The checkpoints this cell may reuse travel with it: its worker may be a Ray node that
        # cannot see this directory (DemonstrationsJob).
        checkpoints = inputs.checkpoints(job.family(), job.tasks, job.seed)
        return dataclasses.replace(job, checkpoints=checkpoints)

    def output(self, record: StageRecord) -> Any:  # noqa: D102
        assert isinstance(record, DemonstrationsRecord)
        return list(record.demonstrations)

    def read_output(self, folder: Path) -> Any:  # noqa: D102
        return load_demonstrations(folder)


class DiscoveryKind(StageKind):
    """One method entry's discovery on one seed."""

    stage = Stage.DISCOVERY

    def hashed(
        self,
        hashing: Hashing,
        seed: int,
        position: int,
        method_cls: type[Method],
        demonstrations: str | None,
        interaction_budget: int | None,
        count_of: str | None,
    ) -> dict[str, Any]:
        """Train tasks, the entry, the cells it reads, the interaction budget it is given."""
        return {
            **hashing.common(seed),
            "code": {
                "family": hashing.provider(hashing.family_cls),
                "method": hashing.provider(method_cls),
            },
            "kind": self.stage.value,
            "train_tasks": hashing.train,
            "method": to_plain(hashing.spec.methods[position]),
            "demonstrations": demonstrations,
            "interaction_budget": interaction_budget,
            **({"count_of": count_of} if count_of is not None else {}),
        }

    def job(self, inputs: JobInputs, cell: Cell) -> DiscoveryJob:  # noqa: D102
        from opt_suite.options import from_bytes
        from opt_suite.runner.estimate import discovery_steps

        spec = inputs.spec
        method = inputs.components.methods[cell.position]
        entry = spec.methods[cell.position]
        demos = inputs.deps(cell, Stage.DEMONSTRATIONS)
        # An entry that takes another's option count (Method.count_entry) reads its discovery.
        counted = inputs.deps(cell, Stage.DISCOVERY)
        return DiscoveryJob(
            **inputs.common(cell),
            tasks=inputs.plan.train_tasks,
            # An entry may take another's seed (bc_option's initial_weights_of): same weights.
            seed=discovery_seed(spec.tasks.seed, cell.seed, seed_entry(method, entry, cell)),
            method_cls=method,
            method_params=entry.params,
            demonstrations=inputs.output(demos[0]) if demos else (),
            interaction_budget=discovery_steps(method, entry.params, spec),
            matched_count=len(from_bytes(inputs.output(counted[0]))) if counted else None,
        )

    def output(self, record: StageRecord) -> Any:  # noqa: D102
        assert isinstance(record, DiscoveryRecord)
        return record.options  # the option-set file's bytes

    def read_output(self, folder: Path) -> Any:  # noqa: D102
        # Through the guard: a regular file of bounded size, read without blocking.
        return read_bounded(folder / OPTIONS_FILE, MAX_FILE_BYTES, "option-set file")


class EvaluationKind(StageKind):
    """The test-time learner with one entry's options on one test task of one seed."""

    stage = Stage.EVALUATION

    def hashed(
        self,
        hashing: Hashing,
        seed: int,
        task_params: Any,
        task_index: int,
        learner: dict[str, Any],
        discovery: str,
    ) -> dict[str, Any]:
        """The test task's params and index, the learner settings, the discovery cell's id."""
        return {
            **hashing.common(seed),
            "code": {
                "family": hashing.provider(hashing.family_cls),
                "learner": hashing.provider(hashing.learner_cls),
            },
            "kind": self.stage.value,
            "test_task": task_params,
            "test_task_index": task_index,
            "learner": learner,
            "discovery": discovery,
        }

    def job(self, inputs: JobInputs, cell: Cell) -> EvaluationJob:  # noqa: D102
        # Learners that can count their option choices do (same numbers, see run_with_usage);
        # within a frame budget only those that honour one.
        learner = inputs.components.learner
        counts = learner.counts_usage and (
            inputs.spec.evaluation.frames is None or learner.frame_budgets
        )
        options = inputs.output(cell.deps[0])
        return evaluation_job(
            inputs.spec, inputs.components, inputs.plan, cell, options, record_usage=counts
        )


class ReferencesKind(StageKind):
    """The reference returns of one (seed, test task)."""

    stage = Stage.REFERENCES

    def hashed(self, hashing: Hashing, seed: int, task: Task) -> dict[str, Any]:
        """Exactly :func:`.references.reference_key`, which names the pair's sealed file too."""
        return reference_key(hashing.spec, hashing.family_cls, hashing.source_cls, seed, task)

    def job(self, inputs: JobInputs, cell: Cell) -> ReferencesJob:  # noqa: D102
        from opt_suite.runner.references import cached_pair, pair_seeds

        def warn(message: str) -> None:
            print(f"warning: {message}", file=inputs.stream)

        # A pair whose trusted file the run has (a folder written before the pairs were cells,
        # or a cell whose row was lost) is not measured again.
        cached = cached_pair(inputs.directory, cell.inputs, warn)
        job = ReferencesJob(
            **inputs.common(cell),
            spec=inputs.spec,
            components=inputs.components,
            task=inputs.plan.test_task(cell),
            seed=cell.seed,
            cached=cached,
            keeps_checkpoints=inputs.components.demonstrations.uses_checkpoints,
        )
        if cached is not None or not job.keeps_checkpoints:
            return job
        # As a demonstrations cell's: the test task's expert travels with the cell.
        expert_seed = pair_seeds(inputs.spec, cell.seed, job.task)[1]
        checkpoints = inputs.checkpoints(job.family(), [job.task], expert_seed)
        return dataclasses.replace(job, checkpoints=checkpoints)

    def keep(self, directory: Path, cell: Cell, record: StageRecord) -> None:
        """Beside its info, the pair's sealed file (what the spec's references file is made of)."""
        from opt_suite.runner.references import keep_pair

        assert isinstance(record, ReferencesRecord)
        keep_pair(directory, cell.inputs, record.random, record.expert)


DEMONSTRATIONS = DemonstrationsKind()
DISCOVERY = DiscoveryKind()
EVALUATION = EvaluationKind()
REFERENCES = ReferencesKind()

#: Each stage's object: the runner dispatches on it, never on a spelled-out stage.
STAGE_KINDS: dict[Stage, StageKind] = {
    kind.stage: kind for kind in (DEMONSTRATIONS, DISCOVERY, EVALUATION, REFERENCES)
}


def evaluation_job(
    spec: Spec, components: Components, plan: Plan, cell: Cell, options: bytes, **overrides: Any
) -> EvaluationJob:
    """The job of evaluation ``cell`` of ``plan``, given its method's option-set file (bytes).

    The one place an evaluation's inputs are put together, so that a replay (``opt-suite
    option-usage``) runs exactly what the runner ran; ``overrides`` sets further fields
    (``record_usage``).
    """
    assert cell.stage is Stage.EVALUATION and cell.task is not None, cell.label
    task = plan.test_task(cell)
    return EvaluationJob(
        cell_id=cell.cell_id,
        label=cell.label,
        family_cls=components.family,
        family_params=spec.family.params,
        task=task,
        seed=evaluation_seed(spec.tasks.seed, cell.seed, task.index),
        learner_cls=components.learner,
        learner_params=spec.evaluation.params,
        options=options,
        episodes=spec.evaluation.episodes,
        max_steps=spec.evaluation.max_steps,
        frames=spec.evaluation.frames,
        zero_shot_episodes=spec.evaluation.zero_shot_episodes,
        zero_shot_seed=zero_shot_seed(spec.tasks.seed, cell.seed, task.index),
        **overrides,
    )


def seed_entry(method: Any, entry: Any, cell: Cell) -> str:
    """The method entry whose discovery seed ``cell`` takes: its own unless the method names one."""
    borrowed = method.seed_entry(entry.params)
    return borrowed[1] if borrowed else cell.method or ""
