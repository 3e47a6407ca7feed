"""Copy the held-out-room study's report and tabulate who beats whom on it.

Called by ``regenerate.sh`` (which runs the spec first); usable alone:

    python docs/results/fourrooms-heldout/collect.py RUNS_DIR   # RUNS_DIR/fourrooms-heldout/
    python docs/results/fourrooms-heldout/collect.py --tables-only  # from the copies here

Writes, next to this file: the run's ``leaderboard.md``/``.json``, ``runs.json`` (every (method,
seed, test task) run's metrics) and ``curves.png``; ``provenance.json`` (spec hash, commit,
command, versions, wall time, and the machine's load around the run when ``regenerate.sh`` timed
it); ``demonstrations.json``, which rooms the run's demonstrations pass through (read from
its store: no report file holds it); ``options.json``, the size of each entry's option set per
seed (from the store); and ``comparisons.md``/``.json``, written from the copies
alone.

The comparisons are the report's own statistics and the suite's one verdict rule applied to the
pairs the page is about (:func:`opt_suite.report.pairwise.comparison_rows`, as the MinAtar page):
offline-options against every other entry, and each positive control against the cloned option
and primitives, on ``auc`` (improves faster) and separately on ``jump_start`` (the first 10% of
the budget) and ``improvement`` (the rest of the budget minus the jump start: the slope). Every
verdict of the page is one Bonferroni family. The leaderboard's own validity check (its family:
its verdicts against primitives and the check) is in the copied ``leaderboard.md``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import yaml

import opt_suite
from opt_suite.families.tabular import grid_dynamics, layouts, task_cells
from opt_suite.store import ResultsStore

# The results pages' shared code, docs/results/study_page.py, found through the checkout
# opt_suite comes from: a copy of this folder elsewhere (the regeneration test's) runs too.
sys.path.insert(0, str(Path(opt_suite.__file__).resolve().parents[1] / "docs" / "results"))
import study_page  # noqa: E402

HERE = Path(__file__).resolve().parent
SPEC = "fourrooms-heldout"
#: subject -> the entries it is compared with (the page's questions, in the order it asks them)
PAIRS = {
    "offline-options": (
        "primitives",
        "bc-option-never",
        "bc-option-every-step",
        "hallway-options",
        "eigenoptions",
    ),
    "hallway-options": ("bc-option-never", "primitives"),
    "eigenoptions": ("bc-option-never", "primitives"),
}
#: auc decides "improves faster"; the jump start and the slope are separate claims
METRICS = ("auc", "jump_start", "improvement")


def main(runs_dir: Path, timings: Path | None = None) -> None:
    """Copy the run's report and provenance here, then write the page's data and tables.

    ``timings``: where ``docs/gen_timings.py`` recorded what the run cost, if it ran it.
    """
    seeds = study_page.copy_report(runs_dir, SPEC, HERE, timings)
    run = runs_dir / SPEC
    study_page.write_json(HERE / "demonstrations.json", room_visits(run, seeds))
    kept = study_page.options_kept(run, study_page.page_entries(PAIRS), seeds)
    study_page.write_json(HERE / "options.json", kept)
    write_tables()
    print(f"collect.py: wrote {HERE}")


def room_visits(run: Path, seeds: list[int]) -> dict[str, object]:
    """Per room: how many demonstrations start, end or pass in it, and their states there.

    Whether the demonstrators ever enter the held-out room decides what a clone of them can
    transfer to test goals inside it. A state is a free cell (row-major, as the family numbers
    them); a hallway belongs to no room.
    """
    spec = yaml.safe_load((run / "spec.yaml").read_text())
    layout = layouts.get(spec["family"]["params"]["layout"])
    cells, _ = grid_dynamics.states_of(layout.walls)
    rooms = {room: task_cells.in_room(layout, cells, room) for room in layouts.ROOMS}
    counts = {room: {"entered": 0, "started": 0, "ended": 0, "states": 0} for room in rooms}
    demonstrations = states = 0
    with ResultsStore(run) as store:
        for seed in seeds:
            for trajectory in store.demonstrations(seed) or []:
                visited = np.asarray(trajectory.observations, dtype=np.int64).ravel()
                demonstrations, states = demonstrations + 1, states + visited.size
                for room, inside in rooms.items():
                    here = inside[visited]
                    counts[room]["entered"] += int(here.any())
                    counts[room]["started"] += int(here[0])
                    counts[room]["ended"] += int(here[-1])
                    counts[room]["states"] += int(here.sum())
    held_out = spec["tasks"]["vary"].get("held_out_room")
    return {
        "held_out_room": held_out,
        "demonstrations": demonstrations,
        "states": states,
        "rooms": counts,
    }


def write_tables() -> None:
    """``comparisons.md`` / ``.json`` from the copied ``runs.json`` and ``leaderboard.json``."""
    study_page.write_comparisons(HERE, SPEC, PAIRS, METRICS)


if __name__ == "__main__":
    study_page.collect_main(__doc__, main, write_tables)
