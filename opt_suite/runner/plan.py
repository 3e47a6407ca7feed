"""Splitting a spec's protocol into cells, each named by a hash of exactly what it depends on.

For every seed index i the protocol is: train the experts and sample demonstrations on the train
tasks; let every method entry discover options; run the test-time learner with each method's options
on every held-out test task. One cell per step; what each hashes is its stage object's ``hashed``
(:mod:`.stage_kinds`), and this module says which cells there are:

- ``demonstrations`` (seed i): family params, the train tasks' params, ``demonstrations`` section;
- ``discovery`` (method entry m, seed i): family params, train tasks, the entry (name, method,
  params), the demonstrations cell's id *if* the entry's ``discovery_budget(params)`` says it
  reads them, and the interaction budget *if* it says the discovery may step envs;
- ``evaluation`` (m, i, test task t): family params, the test task's params and index, the learner
  settings (learner, params, episodes, max_steps) and the discovery cell's id. One cell per test
  task, so that long (deep-RL) evaluations spread over workers and a rerun resumes per task; each
  (task, seed) run has its own seed, so how runs are grouped never changes a number.
- ``references`` (seed i, test task t), when the run measures reference returns (the normalised
  scores' 0 and 1, :mod:`.references`): exactly :func:`.references.reference_key`, which names the
  pair's sealed file too, so that specs sharing a test task, seed, family, source and
  ``max_steps`` share the cell. It depends on no other cell.

Every cell's input also holds ``code``: the versions and source digests of the packages that
provide its family and its method, learner or demonstration source (runner/versions.py: an edit to
an editable plugin, or to opt_suite's own source, gives new ids). A cell id is ``content_hash``
of that input, so editing the spec keeps every cell whose inputs did not change (a new method
entry reuses the demonstrations and the other methods' results; more seeds reuse the old seeds).
Tasks enter through their resolved params, not the ``tasks`` section, so e.g. adding test tasks
keeps the discovery cells whenever the train tasks stay the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from opt_suite.families.base import Task
from opt_suite.runner.cell import Cell, Plan
from opt_suite.runner.stage_kinds import (
    DEMONSTRATIONS,
    DISCOVERY,
    EVALUATION,
    REFERENCES,
    Hashing,
)
from opt_suite.runner.versions import provider
from opt_suite.spec import content_hash, to_plain
from opt_suite.stages import Stage

if TYPE_CHECKING:
    from opt_suite.demonstrations.base import DemonstrationSource
    from opt_suite.families.base import TaskFamily
    from opt_suite.learners.base import Learner
    from opt_suite.methods.base import Method
    from opt_suite.spec import Spec

__all__ = ["PROTOCOL", "KINDS", "Cell", "Plan", "Stage", "build_plan"]

# Bump when the meaning of a cell's inputs or how cells are planned changes (e.g. seeding), so old
# cells are not reused by another planning (CHANGELOG.md says each bump).
# 2: one evaluation cell per test task; 3: dependencies planned from discovery_budget(params).
PROTOCOL = 3
#: The store's names of the stages, in order (``Stage`` values).
KINDS = tuple(stage.value for stage in Stage)


def _make(
    stage: Stage,
    seed: int,
    method: str | None,
    position: int,
    deps: Sequence[str],
    inputs: dict[str, Any],
    task: int | None = None,
) -> Cell:
    return Cell(content_hash(inputs), stage, seed, method, position, tuple(deps), inputs, task)


def build_plan(
    spec: Spec,
    seeds: Sequence[int],
    train_tasks: Sequence[Task],
    test_tasks: Sequence[Task] | Mapping[int, Sequence[Task]],
    method_classes: Sequence[type[Method]],
    *,
    family_cls: type[TaskFamily] | None = None,
    learner_cls: type[Learner] | None = None,
    source_cls: type[DemonstrationSource] | None = None,
    references: bool = False,
) -> Plan:
    """The cells of ``spec`` for ``seeds``.

    Args:
      spec: the loaded ``Spec``.
      seeds: seed indices to run.
      train_tasks: the spec's train tasks (``family.make_tasks``).
      test_tasks: the spec's test tasks, shared by every seed, or each seed's own (a mapping
        from seed index to its tasks: ``tasks.test_per_seed``).
      method_classes: the registered class of each ``spec.methods`` entry, in order (their
        ``discovery_budget`` of the entry's params decides what a discovery depends on).
      family_cls: the registered family class; the versions of the packages providing it, the
        learner, the source and each method enter the cell ids (``code``), so code released at a
        new version never reuses the old version's cells.
      learner_cls: the registered learner class.
      source_cls: the registered demonstration source class.
      references: plan one ``references`` cell per (seed, test task), after the seed's others
        (``report.references``: :func:`.references.references_wanted`).
    """
    # What each cell hashes is its stage's (stage_kinds.py): here, which cells there are.
    train = [to_plain(t.params) for t in train_tasks]
    hashing = Hashing(spec, family_cls, learner_cls, source_cls, train, provider, PROTOCOL)
    by_seed = {
        seed: tuple(test_tasks[seed] if isinstance(test_tasks, Mapping) else test_tasks)
        for seed in seeds
    }
    learner = hashing.learner()
    # What each entry's discovery reads, for its params: the one source of its dependencies.
    entries = zip(method_classes, spec.methods, strict=True)
    declared = [cls.discovery_budget(entry.params) for cls, entry in entries]
    uses = [(bool(reads.demonstrations), reads.interacts) for reads in declared]
    cells: list[Cell] = []
    for seed in seeds:
        demos = _make(
            Stage.DEMONSTRATIONS, seed, None, -1, (), DEMONSTRATIONS.hashed(hashing, seed)
        )
        if any(uses_demos for uses_demos, _ in uses):  # experts are only trained when needed
            cells.append(demos)
        discoveries: dict[str, str] = {}  # entry name -> its discovery cell on this seed
        tests_plain = [to_plain(task.params) for task in by_seed[seed]]  # every entry's tasks
        for position, entry in enumerate(spec.methods):
            uses_demos, uses_budget = uses[position]
            # An entry that takes another's option count (count_entry) reads that discovery:
            # its id enters the inputs only then, so every other cell keeps its id.
            counted = method_classes[position].count_entry(entry.params)
            matched = () if counted is None else (discoveries[counted[1]],)
            inputs = DISCOVERY.hashed(
                hashing,
                seed,
                position,
                method_classes[position],
                demonstrations=demos.cell_id if uses_demos else None,
                interaction_budget=spec.evaluation.interaction_budget if uses_budget else None,
                count_of=matched[0] if matched else None,
            )
            deps = ((demos.cell_id,) if uses_demos else ()) + matched
            discovery = _make(Stage.DISCOVERY, seed, entry.name, position, deps, inputs)
            discoveries[entry.name] = discovery.cell_id
            cells.append(discovery)
            for t, task_params in enumerate(tests_plain):
                inputs = EVALUATION.hashed(
                    hashing, seed, task_params, t, learner, discovery.cell_id
                )
                deps = (discovery.cell_id,)
                cells.append(_make(Stage.EVALUATION, seed, entry.name, position, deps, inputs, t))
        if references:
            for t, task in enumerate(by_seed[seed]):
                key = REFERENCES.hashed(hashing, seed, task)
                cells.append(_make(Stage.REFERENCES, seed, None, -1, (), key, t))
    return Plan(tuple(cells), tuple(train_tasks), by_seed)
