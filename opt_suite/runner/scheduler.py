"""Running a plan's cells as their dependencies complete, storing each one as soon as it finishes.

The loop keeps at most ``backend.capacity`` cells in flight. A cell starts when every cell it
depends on is done and this runner holds its claim (see :mod:`.claims`); cells claimed by another
runner on the same directory are skipped and their results picked up from the store. A cell that
fails — an exception, a NaN, a lost worker, a full disk while storing it — is recorded as failed
and reported; the cells that need it are skipped; everything else carries on.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

from opt_suite.runner.backends import Backend
from opt_suite.runner.cells import CellJob, CellOutcome
from opt_suite.runner.claims import Claims
from opt_suite.runner.plan import Cell, Plan
from opt_suite.runner.progress import Progress
from opt_suite.stages import Stage
from opt_suite.store.schema import StoreError
from opt_suite.store.writer import CellRecord, StoreWriter

__all__ = ["Summary", "execute_plan", "cell_record"]


@dataclasses.dataclass
class Summary:
    """What a run did.

    Attributes:
      total: cells planned.
      reused: cells already done when the run started.
      computed: cells this runner computed and stored.
      by_others: cells another runner on the same directory completed meanwhile.
      failed: (cell label, message) of each failed cell.
      skipped: (cell label, reason) of cells not run because a cell they need failed.
      deterministic: labels of the failed cells whose failure a rerun gives again (an error of
        the cell's own code, a non-finite result: ``cells.may_change_on_retry``).
      compute_s: the cells' own wall time, summed (compute only).
    """

    total: int = 0
    reused: int = 0
    computed: int = 0
    by_others: int = 0
    failed: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    skipped: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    compute_s: float = 0.0
    deterministic: list[str] = dataclasses.field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether every planned cell is done."""
        return not self.failed and not self.skipped


def _phase(inflight: dict[str, Cell], workers: int, waiting: int) -> tuple[str, str]:
    """(phase, detail) for the progress line: the stages of the cells in flight now."""
    kinds = [s.value for s in Stage if any(c.stage is s for c in inflight.values())]
    running = min(len(inflight), max(workers, 1))
    detail = f"{running} running" if inflight else ""
    if len(inflight) > running:
        detail += f", {len(inflight) - running} queued"
    if waiting:
        detail += (", " if detail else "") + f"{waiting} claimed by another runner"
    return (" + ".join(kinds) if kinds else "waiting"), detail


def execute_plan(
    plan: Plan,
    writer: StoreWriter,
    backend: Backend,
    claims: Claims,
    progress: Progress,
    make_job: Callable[[Cell], CellJob],
    make_record: Callable[[Cell, CellOutcome], CellRecord],
    poll_s: float = 0.5,
) -> Summary:
    """Run every cell of ``plan`` that is not done yet.

    Args:
      plan: the cells.
      writer: the store (its done cells are skipped).
      backend: where cells run.
      claims: this runner's claims on the directory.
      progress: drawn after every event.
      make_job: builds a cell's job, loading its dependencies' outputs (may raise OSError).
      make_record: turns a successful outcome into what the store keeps.
      poll_s: how often to look for cells completed by another runner.
    """
    summary = Summary(total=len(plan.cells))
    verified = writer.done_cells(c.cell_id for c in plan.cells)
    done = _without_stale(plan, verified)
    stale = verified - done  # done, but computed from a dependency that is recomputed now
    if stale:
        progress.message(
            f"recomputing {len(stale)} done cell(s) too: a cell they depend on is recomputed, "
            "and what they were computed from must be what the run keeps"
        )
    summary.reused = len(done)
    progress.reuse(done)
    # Demonstrations, then discoveries, then evaluations: long chains start first.
    pending = sorted(
        (c for c in plan.cells if c.cell_id not in done),
        key=lambda c: (c.stage.order, c.seed, c.position),
    )
    bad: set[str] = set()  # failed or skipped: their dependents cannot run
    inflight: dict[str, Cell] = {}
    elsewhere: set[str] = set()

    def fail(
        cell: Cell, message: str, outcome: CellOutcome | None = None, retryable: bool = True
    ) -> None:
        bad.add(cell.cell_id)
        summary.failed.append((cell.label, message))
        if not (retryable and (outcome is None or outcome.retryable)):
            summary.deterministic.append(cell.label)
        progress.failed_cell(cell.cell_id)
        progress.message(f"FAILED {message} [cell {cell.cell_id}]")
        details = outcome.details if outcome is not None else ""
        try:  # best effort: with a full disk, even this may not be writable
            writer.record_failure(
                cell_record(cell, outcome),
                message + ("\n" + details if details else ""),
            )
        except (OSError, StoreError):
            pass

    while pending or inflight:
        # 1. Start every ready cell this runner can claim, up to the backend's capacity.
        for cell in list(pending):
            if any(d in bad for d in cell.deps):
                pending.remove(cell)
                bad.add(cell.cell_id)
                needed = next(d for d in cell.deps if d in bad)
                summary.skipped.append((cell.label, f"needs failed cell {needed}"))
                continue
            if len(inflight) >= backend.capacity:
                # Full: the rest waits for the next round. Scanning every pending cell after
                # each finished one made a run of 30,000 cells quadratic in its scheduler.
                break
            if not all(d in done for d in cell.deps):
                continue
            try:
                claimed = claims.try_claim(cell.cell_id)
            except OSError as exc:  # e.g. no room left for the lock file
                pending.remove(cell)
                fail(cell, f"{cell.label} could not be claimed in {claims.root}: {exc}")
                continue
            if not claimed:
                elsewhere.add(cell.cell_id)
                continue
            elsewhere.discard(cell.cell_id)
            pending.remove(cell)
            if cell.cell_id not in stale and writer.is_done(cell.cell_id):
                # another runner finished it before we claimed it
                claims.release(cell.cell_id)
                done.add(cell.cell_id)
                summary.by_others += 1
                progress.finished(cell.cell_id)
                continue
            try:
                job = make_job(cell)
            except Exception as exc:  # e.g. a dependency's files were deleted or are unreadable
                claims.release(cell.cell_id)
                fail(cell, f"{cell.label} could not load its inputs: {type(exc).__name__}: {exc}")
                continue
            backend.submit(job)
            inflight[cell.cell_id] = cell
        progress.update(*_phase(inflight, backend.workers, len(elsewhere)))

        # 2. Pick up cells that another runner completed.
        for cell_id in list(elsewhere):
            if cell_id not in stale and writer.is_done(cell_id):
                elsewhere.discard(cell_id)
                done.add(cell_id)
                pending[:] = [c for c in pending if c.cell_id != cell_id]
                summary.by_others += 1
                progress.finished(cell_id)
        if not inflight:
            if pending:
                time.sleep(poll_s)  # everything left waits on another runner
            continue

        # 3. Store what finished; one failure never stops the others.
        for outcome in backend.wait(timeout=poll_s if elsewhere else 1.0):
            cell = inflight.pop(outcome.cell_id)
            if outcome.error:
                fail(cell, outcome.error, outcome)
            else:
                try:
                    writer.commit_cell(make_record(cell, outcome))
                except (OSError, StoreError) as exc:
                    fail(
                        cell,
                        f"{cell.label} finished but could not be stored in "
                        f"{writer.directory}: {exc}",
                    )
                except Exception as exc:  # e.g. ragged arrays: the results are not storable
                    message = f"{cell.label} returned results that cannot be stored: {exc!r}"
                    fail(cell, message, retryable=False)
                else:
                    done.add(cell.cell_id)
                    summary.computed += 1
                    summary.compute_s += outcome.wall_s
                    progress.finished(cell.cell_id)
            claims.release(cell.cell_id)
    progress.update("finished", force=True)
    progress.close()
    return summary


def _without_stale(plan: Plan, done: set[str]) -> set[str]:
    """``done`` less every cell with a dependency that is not done (transitively).

    A dependency that is recomputed may not give back what its dependents were computed from: an
    expert retrained after its checkpoint was altered, a nondeterministic method. Recomputing the
    dependents too means that demonstrations and the options learned from them, or options and
    their evaluations, always come from one computation. ``plan.cells`` is in dependency order.
    """
    fresh = set(done)
    for cell in plan.cells:
        if cell.cell_id in fresh and any(d not in fresh for d in cell.deps):
            fresh.discard(cell.cell_id)
    return fresh


def cell_record(cell: Cell, outcome: CellOutcome | None, **results: Any) -> CellRecord:
    """What the store keeps about ``cell``: its identity, timing and ``results`` (if any)."""
    now = time.time()
    return CellRecord(
        cell_id=cell.cell_id,
        kind=cell.stage.value,
        method=cell.method,
        seed=cell.seed,
        inputs=cell.inputs,
        started=outcome.started if outcome else now,
        finished=outcome.finished if outcome else now,
        wall_s=outcome.wall_s if outcome else 0.0,
        host=outcome.host if outcome else "",
        **results,
    )
