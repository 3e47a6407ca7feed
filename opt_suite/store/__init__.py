"""The results store of one run directory: an embedded SQLite database plus one folder per cell.

``opt-suite run SPEC --out DIR`` writes everything under ``DIR``:

.. code-block:: text

    DIR/results.sqlite        SQLite (WAL): runs, plan, tasks, cells, episodes, curves, option sets
    DIR/spec.yaml             the resolved spec of the latest run (canonical YAML)
    DIR/cells/<cell id>/      files of one completed cell, renamed into place atomically:
        demonstrations.npz      (demonstrations cells)
        options.npz             (discovery cells: the option-set file, see opt_suite.options)
        option_usage.npz        (evaluation cells of a learner that counts its option choices)
        cell.json               (every cell: kind, method, seed, the hashed inputs, info)
    DIR/claims/<cell id>.lock the lock a runner holds while it computes that cell

A cell is *done* when its row in ``cells`` has ``status = 'done'``; that row is committed in the
same transaction as the cell's episodes and curves, and only after the cell's folder has been
renamed into place — so a crash at any moment leaves either a done cell with all its data or none.
The same transaction records the SHA-256 of each of its files and a checksum of its episode rows
(:mod:`opt_suite.store.verify`): a run recomputes a done cell that no longer matches them, and the
reader refuses (``StoreError`` naming the cell) to return rows or files that do not.

Read API (for reports, stats and comparisons; never imports TensorFlow)::

    from opt_suite.store import ResultsStore

    store = ResultsStore("results/fourrooms-quick")   # raises StoreError if DIR holds no results
    store.spec_yaml()          # str: the resolved spec of the viewed run, as canonical YAML
    store.spec()               # opt_suite.spec.Spec of the viewed run (its stored YAML)
    store.run()                # RunInfo of the latest run (provenance: spec hash, git commit,
                               #   versions, host, start/end times, backend, seeds, counts, status)
    store.runs()               # every RunInfo, oldest first
    store.methods()            # method entry names of the latest run, in spec order
    store.seeds()              # seed indices run with the latest spec
    store.tasks("test")        # list[TaskInfo(split, index, task_id, params)] of the latest run
    store.cells()              # list[CellInfo] planned by the latest run (status 'done', 'failed',
                               #   or 'missing' when never finished); a cell's .record is its
                               #   stage's typed record (opt_suite.store.records), read from info
    store.episodes(method=None)           # [EpisodeRow(method, seed, task, episode, ret, steps,
                               #   frames)]: frames = emulator frames used up to the episode's end
    store.episode_arrays(method)          # EpisodeArrays(returns [seeds, tasks, episodes],
                               #   steps, frames [same], seeds, tasks): complete cells only
    store.curves(method=None, name=None)  # [CurveRow(method, seed, name, step, value)]
    store.option_set(method, seed)        # an OptionSet, or None (not discovered yet)
    store.option_set_file(method, seed)   # its file (digest checked), or None
    store.recorded_file(cell_id, name)    # a done cell's file (digest checked), or None
    store.demonstrations(seed)            # [Trajectory] used by that seed's discovery cells

Everything is restricted to the cells planned by the runs of the *latest* run's spec (same spec
hash: ``--seeds 5-9`` after ``--seeds 0-4`` shows ten seeds). A DIR may also hold cells of earlier
specs, kept so that unchanged slices are reused; they show only where the latest spec plans them.
Rows are ordered by method (spec order), seed, task, episode/step. ``method`` is always the spec's
method *entry* name (``methods[].name``).

Writing is :class:`opt_suite.store.writer.StoreWriter`'s job (the runner's side);
:func:`opt_suite.store.merge.merge_stores` joins the stores of a spec's shards
(``opt-suite run --shard i/N``) into one (``opt-suite merge-stores``).
"""

from opt_suite.store.reader import (
    CellInfo,
    CurveRow,
    EpisodeArrays,
    EpisodeRow,
    ResultsStore,
    RunInfo,
    TaskInfo,
    split_name,
)
from opt_suite.store.schema import DB_NAME, SCHEMA_VERSION, StoreError

__all__ = [
    "ResultsStore",
    "RunInfo",
    "CellInfo",
    "TaskInfo",
    "split_name",
    "EpisodeRow",
    "EpisodeArrays",
    "CurveRow",
    "StoreError",
    "DB_NAME",
    "SCHEMA_VERSION",
]
