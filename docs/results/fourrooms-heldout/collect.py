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

import argparse
import json
import re
import shutil
import sys
from pathlib import Path
from typing import cast

import numpy as np
import yaml

from opt_suite.families.tabular import grid_dynamics, layouts, task_cells
from opt_suite.report import load_baseline
from opt_suite.report.pairwise import comparison_markdown, comparison_rows
from opt_suite.report.verdicts import load_references
from opt_suite.run_view import run_provenance
from opt_suite.store import ResultsStore

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
REPORT_FILES = ("leaderboard.md", "leaderboard.json", "runs.json", "curves.png")


def main(runs_dir: Path) -> int:
    """Copy the run's report and provenance here, then write the tables; 2 if the run is missing."""
    run = runs_dir / SPEC
    missing = [name for name in REPORT_FILES if not (run / name).is_file()]
    if missing:
        print(f"collect.py: no {missing[0]} in {run} (run regenerate.sh first)", file=sys.stderr)
        return 2
    for name in REPORT_FILES:
        shutil.copyfile(run / name, HERE / name)
    provenance = run_provenance(run)
    timing = runs_dir / f"{SPEC}.timing"
    if timing.is_file():  # the load is what makes a wall time on a shared machine readable
        provenance[-1]["timed"] = timed_run(timing.read_text())
    (HERE / "provenance.json").write_text(json.dumps(provenance, indent=1, sort_keys=True) + "\n")
    seeds = cast(list[int], provenance[-1]["seeds"])  # the store's list of the run's seeds
    visits = room_visits(run, seeds)
    (HERE / "demonstrations.json").write_text(json.dumps(visits, indent=1, sort_keys=True) + "\n")
    kept = options_kept(run, seeds)
    (HERE / "options.json").write_text(json.dumps(kept, indent=1, sort_keys=True) + "\n")
    write_tables()
    print(f"collect.py: wrote {HERE}")
    return 0


def timed_run(timing: str) -> dict[str, dict[str, float]]:
    """The last timed run of ``timing``: load averages at its start and end, ``/usr/bin/time``'s.

    ``load_start`` / ``load_end``: the 1, 5 and 15 minute load averages ``uptime`` printed;
    ``time``: the wall, user and system seconds of the run and its workers.
    """
    found: dict[str, dict[str, float]] = {}
    for line in timing.splitlines():
        load = re.match(r"(start|end) .*load average: ([\d.]+), ([\d.]+), ([\d.]+)", line)
        if load:
            minutes = dict(zip(("1min", "5min", "15min"), load.groups()[1:], strict=True))
            found[f"load_{load.group(1)}"] = {k: float(v) for k, v in minutes.items()}
        elif line.startswith("time "):
            words = line.split()[1:]
            found["time"] = {k: float(v) for k, v in zip(words[::2], words[1::2], strict=True)}
    return found


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


def options_kept(run: Path, seeds: list[int]) -> dict[str, list[int | None]]:
    """Entry -> the size of its option set on each seed (None: none stored; primitives: 0)."""
    entries = sorted({e for x, others in PAIRS.items() for e in (x, *others)})
    with ResultsStore(run) as store:
        found = {e: [store.option_set(e, seed) for seed in seeds] for e in entries}
    return {e: [None if s is None else len(s) for s in sets] for e, sets in found.items()}


def write_tables() -> None:
    """``comparisons.md`` / ``.json`` from the copied ``runs.json`` and ``leaderboard.json``."""
    runs = load_baseline(HERE / "runs.json")
    board = json.loads((HERE / "leaderboard.json").read_text())
    references = load_references(HERE / "runs.json")
    family = len(METRICS) * sum(len(others) for others in PAIRS.values())
    data: dict[str, dict[str, list]] = {}
    lines = [
        f"# Who beats whom on `{SPEC}`",
        "",
        "Generated by `collect.py` from the copied `runs.json` and `leaderboard.json`. auc: the"
        " mean return over the budget; jump_start: over its first 10%; improvement: the mean"
        " after the jump start minus the jump start (the slope). Each seed drew its own test"
        f" tasks. All {family} verdicts of this page are one family.",
        "",
    ]
    for metric in METRICS:
        data[metric] = {}
        for subject, others in PAIRS.items():
            rows = comparison_rows(
                runs, board, subject, others, metric, comparisons=family, references=references
            )
            data[metric][subject] = rows
            lines += [f"## {subject}: {metric}", "", comparison_markdown(rows)]
    (HERE / "comparisons.md").write_text("\n".join(lines))
    (HERE / "comparisons.json").write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs_dir", nargs="?", type=Path, default=Path("results"))
    parser.add_argument(
        "--tables-only",
        action="store_true",
        help="rewrite comparisons.md/.json from the committed copies here, without the run",
    )
    args = parser.parse_args()
    if args.tables_only:
        write_tables()
        sys.exit(0)
    sys.exit(main(args.runs_dir))
