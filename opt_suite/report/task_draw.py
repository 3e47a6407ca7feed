"""Which test tasks a run drew: what a comparison must find equal before it pairs a single value.

The gate (``compare``) and its error rates (``gate-rates``) pair a run's values with a baseline's
by (seed, test task index). That pairs like with like only when index k names the same task on
both sides: both designs share one test set (or both draw one per seed, ``tasks.test_per_seed``)
and the draws themselves are equal. A spec change (``--allow-spec-change``) may change the tasks,
and a per-seed design gives a fresh seed fresh tasks; then task k of the run is another task than
task k of the baseline, and a "paired" difference measures the tasks, not the method.

A draw is recorded per test split (``test``, or ``test/seed<i>``, see
:func:`opt_suite.store.reader.split_name`) as the SHA-256 of its tasks' (index, id, params).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["SHARED_SPLIT", "draw_problem", "drawn_test_tasks"]

SHARED_SPLIT = "test"  # the split of test tasks shared by every seed
_PER_SEED_PREFIX = "test/seed"


def drawn_test_tasks(tasks: Iterable[Any]) -> dict[str, str]:
    """Test split -> SHA-256 of its tasks' (index, id, params); train tasks are left out.

    ``tasks`` are the store's task rows (:class:`opt_suite.store.reader.TaskInfo`).
    """
    groups: dict[str, list[tuple[int, str, Any]]] = {}
    for task in tasks:
        if task.split == SHARED_SPLIT or task.split.startswith(_PER_SEED_PREFIX):
            groups.setdefault(task.split, []).append((int(task.index), task.task_id, task.params))
    return {
        split: hashlib.sha256(
            json.dumps(sorted(rows, key=lambda r: r[0]), sort_keys=True).encode()
        ).hexdigest()
        for split, rows in sorted(groups.items())
    }


def _design(per_seed: bool) -> str:
    return "drawn per seed (tasks.test_per_seed)" if per_seed else "shared by every seed"


def draw_problem(
    run_per_seed: bool,
    run_draw: Mapping[str, str],
    run_spec_hash: str,
    baseline: Any,
) -> str | None:
    """Why the run's test tasks cannot be paired with ``baseline``'s by index (one line), or None.

    Only the baseline's seeds are checked (``baseline.methods[*].seeds``, after any narrowing);
    a seed the run lacks is the coverage check's to name. A baseline written before draws were
    recorded passes only when the spec hash is the same (the same spec draws the same tasks).
    """
    where = f"baseline {baseline.path}"
    if run_per_seed != baseline.tasks_per_seed:
        return (
            f"{where} has test tasks {_design(baseline.tasks_per_seed)}, the run "
            f"{_design(run_per_seed)}: task k of one is not task k of the other, so no value "
            "can be paired (not even with --allow-spec-change); export a baseline from a run "
            "of the same task design"
        )
    recorded: Mapping[str, str] = baseline.task_draw
    if not recorded:
        if not run_draw or baseline.spec_hash == run_spec_hash:
            return None
        return (
            f"{where} records no task draw (written by an older opt-suite) and its spec differs "
            "from the run's, so the paired tasks cannot be shown to be the same: re-export it "
            "(`opt-suite report DIR --export-baseline FILE`)"
        )
    seeds = {s for runs in baseline.methods.values() for s in runs.seeds}
    for split, digest in sorted(recorded.items()):
        seed = split.removeprefix(_PER_SEED_PREFIX)
        if split != SHARED_SPLIT and int(seed) not in seeds:
            continue
        own = run_draw.get(split)
        if own is not None and own != digest:
            which = "test tasks" if split == SHARED_SPLIT else f"test tasks for seed {seed}"
            return (
                f"{where} drew other {which} than the run (the task draw differs: task k is "
                "another task on each side), so no value can be paired, not even with "
                "--allow-spec-change: compare runs of the same tasks"
            )
    return None
