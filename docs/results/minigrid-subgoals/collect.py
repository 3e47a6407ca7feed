"""Copy the sub-goal MiniGrid study's report and tabulate who beats whom on it.

Called by ``regenerate.sh`` (which runs the spec first); usable alone:

    python docs/results/minigrid-subgoals/collect.py RUNS_DIR   # RUNS_DIR/minigrid-subgoals/
    python docs/results/minigrid-subgoals/collect.py --tables-only  # from the copies here

Writes, next to this file: the run's ``leaderboard.md``/``.json``, ``runs.json`` (every (method,
seed, test task) run's metrics), ``curves.png`` (the leaderboard's Option usage table
says how often the test-time learner chose each entry's options), ``option_usage.md``/``.csv``
(``opt-suite option-usage``'s: the same per option and per run); ``provenance.json``
(spec hash, commit, command, versions, wall time, and the machine's load around the run when
``regenerate.sh`` timed it); ``demonstrations.json``, per train task how many demonstrations
reached every sub-goal and how long they were, and ``tasks.json``, the test tasks each seed drew
(both read from the run's store: no report file holds them); ``options.json``, the size of each
entry's option set per seed (from the store); and ``comparisons.md``/``.json``, written from the
copies alone.

The comparisons are the held-out page's (``docs/results/study_page.py``, shared): the report's own
statistics and the suite's one verdict rule (:func:`opt_suite.report.pairwise.comparison_rows`)
applied to the pairs this page is about: offline-options against primitives, the cloned option
and the positive control, and the positive control (the scripted sub-goal options) against the
cloned option and primitives, on ``auc`` (improves faster) and separately on ``jump_start`` (the
first 10% of the budget) and ``improvement`` (the rest of the budget minus the jump start: the
slope). Every verdict of the page is one Bonferroni family. The leaderboard's own validity check
(its family: its verdicts against primitives and the check) is in the copied ``leaderboard.md``.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import numpy as np

import opt_suite
from opt_suite.families.gymnasium.minigrid_subgoals import parse_subgoals
from opt_suite.store import ResultsStore

# The results pages' shared code, docs/results/study_page.py, found through the checkout
# opt_suite comes from: a copy of this folder elsewhere (the regeneration test's) runs too.
sys.path.insert(0, str(Path(opt_suite.__file__).resolve().parents[1] / "docs" / "results"))
import study_page  # noqa: E402

HERE = Path(__file__).resolve().parent
SPEC = "minigrid-subgoals"
#: subject -> the entries it is compared with (the page's questions, in the order it asks them)
PAIRS = {
    "offline-options": ("primitives", "bc-option-never", "subgoal-options"),
    "subgoal-options": ("bc-option-never", "primitives"),
}
#: auc decides "improves faster"; the jump start and the slope are separate claims
METRICS = ("auc", "jump_start", "improvement")
#: ``opt-suite option-usage``'s files, which regenerate.sh writes into the run folder: each
#: option's share of the calls and its length per seed (the leaderboard pools them per entry)
USAGE_FILES = ("option_usage.md", "option_usage.csv")


def main(runs_dir: Path, timings: Path | None = None) -> None:
    """Copy the run's report and provenance here, then write the page's data and tables.

    ``timings``: where ``docs/gen_timings.py`` recorded what the run cost, if it ran it.
    """
    seeds = study_page.copy_report(runs_dir, SPEC, HERE, timings, also=USAGE_FILES)
    run = runs_dir / SPEC
    study_page.write_json(HERE / "demonstrations.json", demonstrated(run, seeds))
    study_page.write_json(HERE / "tasks.json", drawn_test_tasks(run, seeds))
    kept = study_page.options_kept(run, study_page.page_entries(PAIRS), seeds)
    study_page.write_json(HERE / "options.json", kept)
    write_tables()
    print(f"collect.py: wrote {HERE}")


def reached(rewards: np.ndarray) -> int:
    """The sub-goals a trajectory reached: each pays its share of the reward when it is reached."""
    return int(np.count_nonzero(np.asarray(rewards) > 0))


def demonstrated(run: Path, seeds: list[int]) -> dict[str, object]:
    """Per train task: its demonstrations, how many reached every sub-goal, their lengths.

    A demonstration reaches every sub-goal of its task when it is rewarded once per sub-goal.
    What the cloned option and Algorithm 1 are fit to: the train tasks' orders, never a test
    task's.
    """
    with ResultsStore(run) as store:
        train = {t.task_id: t.params["kwargs"] for t in store.tasks("train")}
        lengths: dict[str, list[int]] = {task: [] for task in train}
        complete: Counter[str] = Counter()
        for seed in seeds:
            for trajectory in store.demonstrations(seed) or []:
                subgoals = parse_subgoals(train[trajectory.task_id]["subgoals"])
                lengths[trajectory.task_id].append(len(trajectory))
                complete[trajectory.task_id] += reached(trajectory.rewards) == len(subgoals)
    tasks = [
        {
            "task": task,
            "subgoals": kwargs["subgoals"],
            "layout": kwargs["layout"],
            "demonstrations": len(lengths[task]),
            "reached_every_subgoal": complete[task],
            "steps": _spread(lengths[task]),
        }
        for task, kwargs in train.items()
    ]
    return {
        "demonstrations": sum(len(steps) for steps in lengths.values()),
        "reached_every_subgoal": sum(complete.values()),
        "tasks": tasks,
    }


def _spread(steps: list[int]) -> dict[str, float] | None:
    return {"mean": float(np.mean(steps)), "min": min(steps), "max": max(steps)} if steps else None


def drawn_test_tasks(run: Path, seeds: list[int]) -> dict[str, object]:
    """The test tasks each seed drew (from the held-out orders), and how often each order."""
    with ResultsStore(run) as store:
        drawn = {seed: [t.params for t in store.tasks(f"test/seed{seed}")] for seed in seeds}
    every = [p for tasks in drawn.values() for p in tasks]
    return {
        "tasks": len(every),
        "subgoals": dict(Counter(p["kwargs"]["subgoals"] for p in every)),
        "layouts": len({p["kwargs"]["layout"] for p in every}),
        "seeds": {
            str(seed): [
                {
                    "subgoals": p["kwargs"]["subgoals"],
                    "layout": p["kwargs"]["layout"],
                    "start_actions": p["start_actions"],
                }
                for p in tasks
            ]
            for seed, tasks in drawn.items()
        },
    }


def write_tables() -> None:
    """``comparisons.md`` / ``.json`` from the copied ``runs.json`` and ``leaderboard.json``."""
    study_page.write_comparisons(HERE, SPEC, PAIRS, METRICS)


if __name__ == "__main__":
    study_page.collect_main(__doc__, main, write_tables)
