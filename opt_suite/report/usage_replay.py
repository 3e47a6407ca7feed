"""The option counts of a run's evaluation cells: read where the run recorded them, else replayed.

A learner that counts its choices (``counts_usage``) stores each evaluation cell's counts in
``cells/<id>/option_usage.npz``; those are read. Cells of older runs (and every cell with
``replay=True``) are replayed: the same spec, the same planned cells (the plan rebuilt from the
stored spec must name exactly the stored cell ids), the runner's own seeds and job
(:func:`opt_suite.runner.protocol.evaluation_job`) and the stored option-set files (digests
checked), with the learner counting — and every replayed episode's return and steps must equal
the stored ones exactly, or nothing is reported (:data:`REPLAY_DIFFERS`).

The run is opened through :class:`opt_suite.run_view.RunView`; every problem is its
:class:`~opt_suite.run_view.RunViewError`, one line.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from opt_suite.report.option_usage import RunUsage, run_usage
from opt_suite.run_view import RunView, RunViewError
from opt_suite.stages import Stage

__all__ = ["REPLAY_DIFFERS", "recorded_counts", "view_usage"]

REPLAY_DIFFERS = "replay differs from the stored run — the code changed since; rerun the spec"

# Stored returns and steps of one (method, seed, test task): the replay must give exactly these.
_Episodes = tuple[np.ndarray, np.ndarray]


def view_usage(
    view: RunView,
    methods: list[str],
    seeds: list[int],
    *,
    replay: bool = False,
    cache: dict[str, Any] | None = None,
) -> tuple[list[RunUsage], list[str]]:
    """Per completed evaluation cell of ``methods`` with options: its counts; and notes for people.

    ``cache`` (cell id -> outcome) shares replays between views of the same directory (a sweep's
    variants share cells).

    Raises:
      RunViewError: the learner does not count, stored cells the current code does not plan, a
        replay that fails or differs from the stored episodes, counts that do not add up.
    """
    components = view.components()
    if not components.learner.counts_usage:
        raise RunViewError(
            f"{view.directory}: the learner {view.spec().evaluation.learner!r} does not count"
            " option usage (smdp_q_learning and tf_agents do)"
        )
    check = view.check_cells([Stage.EVALUATION], methods, seeds)
    if check.unplanned:
        raise RunViewError(
            f"{view.directory}: {len(check.unplanned)} stored evaluation cells are not those the "
            f"stored spec plans with the current code (their inputs changed): {REPLAY_DIFFERS}"
        )
    stored = _stored_episodes(view, methods)
    from opt_suite.files_guard import read_bounded
    from opt_suite.options.base import MAX_FILE_BYTES

    option_files = {  # reopened through the guard: a FIFO or /dev/zero link there is refused
        (m, s): read_bounded(path, MAX_FILE_BYTES, "option-set file")
        for m in methods
        for s in seeds
        if (path := view.store.option_set_file(m, s)) is not None
    }
    from opt_suite.options import from_bytes

    sizes = {key: len(from_bytes(data)) for key, data in option_files.items()}
    with_options = [m for m in methods if any(sizes.get((m, s), 0) for s in seeds)]
    notes = []
    left_out = [m for m in methods if m not in with_options]
    if left_out:
        notes.append(f"left out (no options on any seed): {', '.join(left_out)}")
    plan = view.plan(seeds)
    counter = _Counter(view, plan, option_files, cache if cache is not None else {})
    runs, read, missing, started = [], 0, 0, time.perf_counter()
    for cell in check.planned:
        if cell.method not in with_options:
            continue
        if cell.cell_id not in check.done:
            missing += 1
            continue
        assert cell.task is not None, cell.label
        task = plan.test_task(cell).index
        key = (cell.method or "", cell.seed, task)
        usage = None if replay else recorded_counts(view.store, cell.cell_id)
        if usage is not None:  # counted by the run itself, with these very episodes
            read += 1
        else:
            usage = counter.replay(cell, stored.get(key))
        if key not in stored or not np.array_equal(
            np.asarray(usage.steps).sum(axis=1), stored[key][1]
        ):
            raise RunViewError(
                f"{cell.label}: its option counts do not add up to the stored episodes' steps"
            )
        runs.append(run_usage(cell.method or "", cell.seed, int(task), usage))
    notes += _notes(view, missing, read, counter, time.perf_counter() - started)
    return runs, notes


def _stored_episodes(view: RunView, methods: list[str]) -> dict[tuple[str, int, int], _Episodes]:
    stored = {}
    for method in methods:
        rows = view.store.episodes(method)
        for seed_task in {(r.seed, r.task) for r in rows}:
            mine = [r for r in rows if (r.seed, r.task) == seed_task]
            stored[(method, *seed_task)] = (
                np.array([r.ret for r in mine], dtype=np.float64),
                np.array([r.steps for r in mine], dtype=np.int64),
            )
    return stored


def recorded_counts(store: Any, cell_id: str) -> Any:
    """The option counts evaluation cell ``cell_id`` recorded when it ran; None: it recorded none.

    The one reader of ``cells/<id>/option_usage.npz`` (digest checked by the store): this module,
    the option-usage section and the degenerate options' "never chosen" read the counts here.
    Returns an :class:`opt_suite.learners.base.OptionUsage`.
    """
    from opt_suite.store.files import USAGE_FILE

    path = store.recorded_file(cell_id, USAGE_FILE)
    if path is None:
        return None
    from opt_suite.learners.base import OptionUsage  # only when counts were recorded

    return OptionUsage.load(path)


class _Counter:
    """Replays evaluation cells with the learner counting, checking each against the store."""

    def __init__(
        self, view: RunView, plan: Any, option_files: dict[Any, bytes], cache: dict[str, Any]
    ) -> None:
        self.view, self.plan, self.option_files, self.cache = view, plan, option_files, cache
        self.replayed = self.reused = 0

    def replay(self, cell: Any, stored: _Episodes | None) -> Any:
        """The counts of ``cell``'s replay, after checking its episodes equal ``stored``."""
        from opt_suite.runner.cells import execute
        from opt_suite.runner.protocol import evaluation_job

        if cell.cell_id in self.cache:
            outcome = self.cache[cell.cell_id]
            self.reused += 1
        else:
            data = self.option_files[(cell.method, cell.seed)]
            spec, components = self.view.spec(), self.view.components()
            job = evaluation_job(spec, components, self.plan, cell, data, record_usage=True)
            outcome = execute(job)
            if outcome.error:
                raise RunViewError(f"replay of {cell.label} failed: {outcome.error}")
            self.cache[cell.cell_id] = outcome
            self.replayed += 1
        [(_, returns, steps, _frames)] = outcome.record.task_episodes
        usage = outcome.record.usage
        check_replay(cell.label, stored, returns, steps)
        return usage


def check_replay(label: str, stored: _Episodes | None, returns: Any, steps: Any) -> None:
    """Raise RunViewError unless the replayed returns and steps equal the stored ones exactly."""
    if stored is None:
        raise RunViewError(f"{label}: the store has no episodes for it: {REPLAY_DIFFERS}")
    old_returns, old_steps = stored
    if old_returns.shape != returns.shape:
        raise RunViewError(
            f"{label}: {old_returns.size} stored episodes, {returns.size} replayed: "
            f"{REPLAY_DIFFERS}"
        )
    differs = np.flatnonzero((old_returns != returns) | (old_steps != steps))
    if differs.size:
        e = int(differs[0])
        raise RunViewError(
            f"{label}: episode {e}: stored return {old_returns[e]!r} in {old_steps[e]} steps, "
            f"replayed {returns[e]!r} in {int(steps[e])} steps ({differs.size} episodes differ):"
            f" {REPLAY_DIFFERS}"
        )


def _notes(view: RunView, missing: int, read: int, counter: _Counter, wall: float) -> list[str]:
    from opt_suite.store.files import USAGE_FILE
    from opt_suite.store.provenance import collect_provenance

    notes = []
    if missing:
        notes.append(
            f"{missing} evaluation cells of these methods are not done (failed or not run yet) "
            "and are left out"
        )
    if read:
        notes.append(
            f"{read} evaluation cells counted their option choices when they ran (read from "
            f"cells/<id>/{USAGE_FILE})"
        )
    if counter.replayed or counter.reused:
        commit = collect_provenance().get("git_commit") or "unknown"
        notes.append(
            f"replayed {counter.replayed} evaluation cells in {wall:.1f} s"
            + (f" ({counter.reused} shared with another variant)" if counter.reused else "")
            + f" from the stored option sets with the current code (git {commit}; the run's: "
            f"{view.info.git_commit or 'unknown'}); every replayed episode's return and steps"
            " equal the stored ones exactly"
        )
    return notes
