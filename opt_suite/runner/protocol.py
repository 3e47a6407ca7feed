"""The standardized protocol of one spec, end to end: plan the cells, run them, store them.

For each seed: demonstrations on the train tasks -> every method's option discovery -> the
test-time learner with each method's options on every held-out test task, for the evaluation
budget (see :mod:`.plan` for the cells and :mod:`.seeding` for where each random draw comes from).

What each stage's cells hash, how their jobs are built and what is kept of them beside the store
is that stage's object (:mod:`.stage_kinds`); planning itself is in :mod:`.planning`.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from opt_suite.families.base import Task, TaskFamily
from opt_suite.files_guard import read_bounded, unlinked_folder
from opt_suite.options.base import MAX_FILE_BYTES
from opt_suite.runner.backends import Backend, make_backend
from opt_suite.runner.cells import (
    CellJob,
    CellOutcome,
    plain_file_name,
)
from opt_suite.runner.claims import Claims
from opt_suite.runner.estimate import (
    WorkTooLarge,
    available_memory,
    memory_problem,
)
from opt_suite.runner.plan import Cell, Plan
from opt_suite.runner.planning import (
    Components,
    cell_prices,
    code_modules,
    discovery_steps,
    plan_spec,
    resolve_components,
    work_estimate,
)
from opt_suite.runner.progress import Progress
from opt_suite.runner.scheduler import Summary, cell_record, execute_plan
from opt_suite.runner.stage_kinds import STAGE_KINDS, evaluation_job, seed_entry
from opt_suite.spec import Spec, canonical_yaml, spec_hash, to_plain
from opt_suite.stages import Stage
from opt_suite.store.files import (
    EXPERTS_FOLDER,
    cell_dir,
    remove_stale_temporaries,
    write_bytes_atomic,
)
from opt_suite.store.provenance import collect_provenance
from opt_suite.store.reader import split_name
from opt_suite.store.writer import CellRecord, StoreWriter

__all__ = [
    "Components",
    "RunResult",
    "discovery_steps",
    "evaluation_job",
    "plan_spec",
    "resolve_components",
    "run_protocol",
    "work_estimate",
]


@dataclasses.dataclass(frozen=True)
class RunResult:
    """What ``run_protocol`` did: the summary, where results went and how long it took."""

    summary: Summary
    directory: Path
    run_id: int
    wall_s: float
    reuse_note: str


class _Inputs:
    """Builds cell jobs, keeping the outputs of recent cells in memory to avoid re-reading them.

    What a job needs and what a dependent reads of a record are its stage's
    (:data:`.stage_kinds.STAGE_KINDS`); this holds the run's side: its spec, plan and folder.
    """

    def __init__(
        self, spec: Spec, plan: Plan, components: Components, directory: Path, stream: TextIO
    ) -> None:
        self.spec, self.plan, self.components, self.directory = spec, plan, components, directory
        self.stream = stream
        self.cells = plan.by_id()
        self._cache: dict[str, Any] = {}

    def remember(self, cell: Cell, outcome: CellOutcome) -> None:
        output = None if outcome.record is None else STAGE_KINDS[cell.stage].output(outcome.record)
        if output is not None:  # no cell reads an evaluation's or a reference's output
            self._cache[cell.cell_id] = output
        while len(self._cache) > 64:  # bounded: an option set of a big grid is megabytes
            self._cache.pop(next(iter(self._cache)))

    def output(self, cell_id: str) -> Any:
        if cell_id not in self._cache:
            kind = STAGE_KINDS[self.cells[cell_id].stage]
            self._cache[cell_id] = kind.read_output(cell_dir(self.directory, cell_id))
        return self._cache[cell_id]

    def job(self, cell: Cell) -> CellJob:
        return STAGE_KINDS[cell.stage].job(self, cell)

    def common(self, cell: Cell) -> dict[str, Any]:
        return {
            "cell_id": cell.cell_id,
            "label": cell.label,
            "family_cls": self.components.family,
            "family_params": self.spec.family.params,
        }

    def checkpoints(self, family: TaskFamily, tasks: Sequence[Task], seed: Any) -> dict[str, bytes]:
        """The run's checkpoints the source would reuse demonstrating ``tasks`` with ``seed``."""
        from opt_suite.demonstrations.base import SourceContext

        d = self.spec.demonstrations
        context = SourceContext(family, list(tasks), d.trajectories_per_task, d.max_steps, seed)
        found = {}
        for name in self.components.demonstrations(d.params).checkpoint_names(context):
            path = self.directory / EXPERTS_FOLDER / plain_file_name(name)
            if path.is_file() and not path.is_symlink():  # what else is there: retrained
                found[name] = read_bounded(path, MAX_FILE_BYTES, "expert checkpoint")
        return found

    def deps(self, cell: Cell, stage: Stage) -> list[str]:
        """The cells of ``stage`` that ``cell`` reads."""
        return [d for d in cell.deps if self.cells[d].stage is stage]

    def record(self, cell: Cell, outcome: CellOutcome) -> CellRecord:
        self.remember(cell, outcome)
        record = outcome.record
        if record is None or record.stage is not cell.stage:
            raise TypeError(f"{cell.label} returned a record of another stage: {record!r}")
        # Before the cell is recorded: a recorded cell's experts are in the run.
        experts = self.directory / EXPERTS_FOLDER
        for name, data in sorted(record.checkpoints().items()):  # checkpoint, then sidecar
            experts.mkdir(exist_ok=True)
            write_bytes_atomic(experts / plain_file_name(name), data)
        STAGE_KINDS[cell.stage].keep(self.directory, cell, record)
        return cell_record(cell, outcome, **record.stored())


def run_protocol(
    spec: Spec,
    directory: str | Path,
    *,
    seeds: Sequence[int] | None = None,
    workers: int | None = None,
    backend: str = "local",
    address: str | None = None,
    argv: Sequence[str] = (),
    stream: TextIO | None = None,
    quiet: bool = False,
) -> RunResult:
    """Run ``spec``'s protocol into ``directory``, skipping cells that are already done.

    Args:
      spec: the loaded ``Spec``.
      directory: the results directory (created if missing).
      seeds: seed indices (default ``range(spec.evaluation.seeds)``).
      workers: local worker processes (None: one per core; 0: in this process) or Ray CPUs.
      backend: ``"local"`` or ``"ray"``.
      address: the Ray cluster to join (``--address``).
      argv: the command line, for provenance.
      stream: where progress and messages go (stderr by default).
      quiet: no progress line (messages about failures still appear).

    Raises:
      opt_suite.runner.estimate.WorkTooLarge: the spec cannot fit in memory (nothing was run).
      opt_suite.registry.RegistryError: a family, method or learner is not registered.
      OSError: the directory cannot be created or written.
      opt_suite.runner.backends.BackendError: the backend cannot start.
    """
    stream = stream or sys.stderr
    start = time.monotonic()
    directory = Path(directory)
    seeds = sorted(set(range(spec.evaluation.seeds) if seeds is None else seeds))
    components = resolve_components(spec)
    # Workers start (in the background) before the planning; a backend that cannot start writes
    # nothing.
    # The run's own folders, checked before anything is written: never a link to elsewhere.
    unlinked_folder(directory / "logs", "the worker logs folder")
    unlinked_folder(directory / "claims", "the cell claims folder")
    runner = make_backend(backend, workers, address, directory / "logs", code_modules(components))
    try:
        family, train, tasks, plan = plan_spec(spec, seeds, components)
        _check_memory(spec, seeds, components, family, train, runner.workers)
        if any(c.stage is Stage.DEMONSTRATIONS for c in plan.cells):
            import opt_suite.demonstrations  # noqa: F401  (needed to store them; load it now)
        writer = StoreWriter(directory)
        try:
            run_id, reuse_note, summary = _run(
                spec, plan, components, writer, runner, seeds, argv, stream, quiet
            )
        finally:
            writer.close()
    finally:
        runner.close()
    if summary is not None and any(c.stage is Stage.REFERENCES for c in plan.cells):
        _write_references(spec, components, family, plan, tasks.test, directory, stream, summary)
    return RunResult(summary, directory, run_id, time.monotonic() - start, reuse_note)


def _stored_seeds(directory: Path) -> list[int]:
    """The seeds the run directory's store holds evaluations of (none when it cannot say)."""
    from opt_suite.store import ResultsStore, StoreError

    try:
        store = ResultsStore(directory)
    except StoreError:
        return []
    try:
        return [int(s) for s in store.seeds()]
    except StoreError:
        return []
    finally:
        store.close()


#: The claim (runner/claims.py) a runner holds while it writes a spec's reference returns.
REFERENCES_CLAIM = "references-{spec_hash}"


def _write_references(
    spec: Spec,
    components: Components,
    family: TaskFamily,
    plan: Plan,
    test: Callable[[int], Sequence[Task]],
    directory: Path,
    stream: TextIO,
    summary: Summary,
) -> None:
    """Write ``references/spec-<hash>.json`` (what the report reads) from the references cells.

    The plan's references cells measured every (seed, test task) of this run in the workers, each
    into its sealed ``references/<cell id>.json``; this reads them back. Every seed the store
    holds is written, not only this run's: the report reads them all (a run of --seeds 1-2 into
    a folder that holds seed 0). A pair of such a seed that has no trusted file (its seed was run
    with ``report.references: none``, or its file was deleted) is measured here, in this
    process. Runners into one folder take turns (a claim held for the step) and each reads the
    stored seeds inside its turn, so a later writer never drops a seed an earlier one wrote.

    A failed references cell (already in ``summary.failed``, naming its cause) makes the file
    hold its error instead of the returns (the report then has no normalised scores and says
    why); so does a failure to measure a stored seed's pair, added to ``summary.failed``.
    """
    from opt_suite.runner.references import SPEC_FORMAT, ReferenceError, measure_references
    from opt_suite.store.files import references_file
    from opt_suite.store.sealed import write_sealed

    def warn(message: str) -> None:
        print(f"warning: {message}", file=stream)

    def write_error(message: str) -> None:
        path = references_file(directory, spec_hash(spec))
        path.parent.mkdir(parents=True, exist_ok=True)
        write_sealed(path, {"format": SPEC_FORMAT, "error": message})

    labels = {c.label for c in plan.cells if c.stage is Stage.REFERENCES}
    failed = [message for label, message in summary.failed if label in labels]
    with Claims(directory).held(REFERENCES_CLAIM.format(spec_hash=spec_hash(spec))):
        if failed:
            write_error(failed[0])
            return
        every = sorted(set(plan.test_tasks) | set(_stored_seeds(directory)))
        try:
            measure_references(spec, components, family, test, every, directory, warn)
        except ReferenceError as exc:
            message = f"reference returns not measured: {exc}"
            summary.failed.append(("references", message))
            summary.deterministic.append("references")  # the same inputs fail the same way
            write_error(message)


def _check_memory(
    spec: Spec,
    seeds: Sequence[int],
    components: Components,
    family: TaskFamily,
    train: Sequence[Task],
    workers: int,
) -> None:
    """Refuse, before anything is computed or recorded, a spec that cannot fit in memory."""
    problem = memory_problem(
        work_estimate(spec, seeds, components, family, train), workers, available_memory()
    )
    if problem is not None:
        raise WorkTooLarge(problem)


def _run(
    spec: Spec,
    plan: Plan,
    components: Components,
    writer: StoreWriter,
    runner: Backend,
    seeds: Sequence[int],
    argv: Sequence[str],
    stream: TextIO,
    quiet: bool,
) -> tuple[int, str, Summary]:
    """Record the run, execute its plan and record how it ended (also when interrupted)."""
    directory = writer.directory
    remove_stale_temporaries(directory)
    family = components.family  # recorded so that the report names its frames without it
    provenance = {
        **collect_provenance(),
        "family": {"name": family.name, "frame_unit": family.frame_unit},
    }
    reuse_note = _reuse_note(writer, spec_hash(spec), provenance.get("git_commit"), plan)
    run_id = writer.begin_run(
        spec_name=spec.name,
        spec_hash=spec_hash(spec),
        spec_yaml=canonical_yaml(spec),
        provenance=provenance,
        backend=runner.name,
        workers=runner.workers,
        seeds=seeds,
        argv=argv,
    )
    per_seed = spec.tasks.test_per_seed
    test = {split_name(s if per_seed else None): tests for s, tests in plan.test_tasks.items()}
    tasks = [("train", task) for task in plan.train_tasks] + [
        (split, task) for split, tests in test.items() for task in tests
    ]
    writer.record_plan(
        run_id,
        [(c.cell_id, c.kind, c.method, c.seed, c.position) for c in plan.cells],
        [(split, task.index, task.task_id, to_plain(task.params)) for split, task in tasks],
    )
    if reuse_note:
        print(reuse_note, file=stream)
    _, rejected = writer.check_done(c.cell_id for c in plan.cells)
    labels = {c.cell_id: c.label for c in plan.cells}
    for cell_id, problem in rejected.items():
        print(f"recomputing {labels[cell_id]} [cell {cell_id}]: {problem}", file=stream)
    inputs = _Inputs(spec, plan, components, directory, stream)
    claims = Claims(directory)
    prices = cell_prices(spec, components, plan)  # the ETA's: the cost model's (planning.py)
    progress = Progress(len(plan.cells), stream=stream, enabled=not quiet, prices=prices)
    summary: Summary | None = None
    try:
        summary = execute_plan(plan, writer, runner, claims, progress, inputs.job, inputs.record)
    finally:
        progress.close()
        claims.release_all()
        counts = {"total": len(plan.cells)}
        if summary is not None:
            counts.update(
                reused=summary.reused, computed=summary.computed, failed=len(summary.failed)
            )
        status = "interrupted" if summary is None else "done" if summary.ok else "failed"
        writer.finish_run(run_id, status, counts)
    return run_id, reuse_note, summary


def _reuse_note(writer: StoreWriter, new_hash: str, commit: str | None, plan: Plan) -> str:
    """Say what is reused when the directory already holds results (of this spec or another).

    Cells are named by what the spec gives them, not by the code that computes them, so the note
    also warns when the code's git commit differs from the one that computed earlier cells.
    """
    row = writer.last_run()
    if row is None:
        return ""
    done = writer.done_cells(c.cell_id for c in plan.cells)
    code = ""
    if done and row[1] != commit:
        code = (
            f"\nnote: the code changed since the last run in {writer.directory} (git {row[1]} -> "
            f"{commit}); reused cells keep the old code's results (use a fresh --out to recompute)"
        )
    if row[0] == new_hash:
        return f"resuming: {len(done)} of {len(plan.cells)} cells already done" + code
    kinds = {
        stage.value: sum(1 for c in plan.cells if c.stage is stage and c.cell_id in done)
        for stage in Stage
    }
    detail = ", ".join(f"{n} {k}" for k, n in kinds.items() if n)
    return (
        f"the spec changed since the last run in {writer.directory} "
        f"({row[0][:12]} -> {new_hash[:12]}): reusing {len(done)} of {len(plan.cells)} cells "
        f"whose inputs are unchanged" + (f" ({detail})" if detail else "") + code
    )


_seed_entry = seed_entry  # its old name here (tests/test_bc_option.py)
