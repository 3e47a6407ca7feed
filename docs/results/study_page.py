"""What the results pages of one study share: its report copied, its cost, its verdict tables.

A one-study page (``docs/results/fourrooms-heldout/``, ``docs/results/minigrid-subgoals/``,
``docs/results/fourrooms-related-factorial/``) runs one bundled spec with ``regenerate.sh`` and lets
its ``collect.py`` copy the run's report beside the page (a sweep's: one report per variant), note
what the run cost, and judge the pairs the page is about (in groups, e.g. one per variant, all in
one Bonferroni family). The page's own ``collect.py`` keeps only what is its question: which
spec, which pairs, and the facts of its family that no report file holds. A page finds this module
beside its folder in the checkout ``opt_suite`` is imported from, so that a copy of the folder
elsewhere (the regeneration test's) runs too.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from opt_suite.report import load_baseline
from opt_suite.report.pairwise import comparison_markdown, comparison_rows
from opt_suite.report.verdicts import load_references
from opt_suite.run_view import run_provenance
from opt_suite.store import ResultsStore

__all__ = [
    "REPORT_FILES",
    "SWEEP_FILES",
    "Judged",
    "MissingRun",
    "collect_main",
    "comparison_tables",
    "copy_report",
    "copy_sweep_report",
    "measurement_of",
    "options_kept",
    "page_entries",
    "timed_run",
    "write_comparisons",
    "write_json",
]

#: The run's files a page copies: the report, every run's metrics and the curves.
REPORT_FILES = ("leaderboard.md", "leaderboard.json", "runs.json", "curves.png")
#: A sweep run's own files a page copies beside each variant's :data:`REPORT_FILES`: its
#: manifest (variants, values, spec hashes) and its summary across variants.
SWEEP_FILES = ("sweep.json", "sweep.md", "sweep.csv")


class MissingRun(Exception):
    """The run a page collects from lacks a report file (the message names it and the run)."""


def write_json(path: Path, value: object) -> None:
    """``value`` as the pages store data: indented, keys sorted, one final newline."""
    path.write_text(json.dumps(value, indent=1, sort_keys=True) + "\n")


def copy_report(
    runs_dir: Path,
    spec: str,
    here: Path,
    timings: Path | None = None,
    also: Sequence[str] = (),
) -> list[int]:
    """Copy run ``runs_dir/spec``'s report and provenance into ``here``; the run's seeds.

    ``also``: files of the run folder the page copies beside :data:`REPORT_FILES` (written there
    by another command of its ``regenerate.sh``, e.g. ``opt-suite option-usage``'s), required
    like them.

    ``provenance.json`` gets what the run cost with the machine's load around it, since a shared
    machine can double a wall time: ``timed``, the last timed run of ``runs_dir/<spec>.timing``
    (:func:`timed_run`) when ``regenerate.sh`` timed it; ``measured``, the measurement
    ``docs/gen_timings.py --measure SPEC --keep RUNS_DIR`` wrote to ``timings/<spec>.json`` when
    its command wrote this very run (:func:`measurement_of`).

    Raises:
        MissingRun: a report file is missing.
    """
    run = runs_dir / spec
    _copy_files({run: here}, (*REPORT_FILES, *also))
    return _write_provenance(runs_dir, spec, here, timings)


def copy_sweep_report(
    runs_dir: Path, spec: str, here: Path, timings: Path | None = None
) -> list[str]:
    """Copy sweep run ``runs_dir/spec``'s reports and provenance into ``here``; its variants.

    A sweep run (``opt-suite run`` on a spec with ``sweep:``) writes one report per variant
    under ``variants/<name>/``: each variant's :data:`REPORT_FILES` are copied to the same place
    in ``here``, the sweep's own :data:`SWEEP_FILES` beside them. ``provenance.json`` holds one
    record per variant's run (the store records each) and, on the last, what the whole
    ``regenerate.sh`` run cost, as :func:`copy_report` writes it.

    Raises:
        MissingRun: the run is no sweep run, or a report file is missing.
    """
    run = runs_dir / spec
    if not (run / "sweep.json").is_file():
        raise MissingRun(f"no sweep.json in {run} (run regenerate.sh first)")
    variants = [str(v["name"]) for v in json.loads((run / "sweep.json").read_text())["variants"]]
    folders = {run / "variants" / v: here / "variants" / v for v in variants}
    _copy_files({run: here}, SWEEP_FILES, folders)
    _write_provenance(runs_dir, spec, here, timings)
    return variants


def _copy_files(
    top: Mapping[Path, Path], names: Sequence[str], reports: Mapping[Path, Path] | None = None
) -> None:
    """Copy ``names`` from each source folder of ``top`` and :data:`REPORT_FILES` of ``reports``.

    Raises:
        MissingRun: a file is missing (nothing is copied then).
    """
    copies = [(src / n, dst / n) for src, dst in top.items() for n in names]
    copies += [(src / n, dst / n) for src, dst in (reports or {}).items() for n in REPORT_FILES]
    # every file is checked before any is copied: a half-copied page mixes two runs
    missing = [src for src, _ in copies if not src.is_file()]
    if missing:
        raise MissingRun(f"no {missing[0].name} in {missing[0].parent} (run regenerate.sh first)")
    for src, dst in copies:
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)


def _write_provenance(runs_dir: Path, spec: str, here: Path, timings: Path | None) -> list[int]:
    """``here/provenance.json`` from the store of ``runs_dir/spec`` (see :func:`copy_report`).

    Returns the seeds of the store's last run.
    """
    run = runs_dir / spec
    provenance = timed_provenance(runs_dir, spec)
    measured = None if timings is None else measurement_of(timings / f"{spec}.json", run)
    if measured is not None:
        provenance[-1]["measured"] = measured
    write_json(here / "provenance.json", provenance)
    return cast(list[int], provenance[-1]["seeds"])  # the store's list of the run's seeds


def timed_provenance(runs_dir: Path, spec: str) -> list[dict[str, Any]]:
    """``run_provenance`` of ``runs_dir/spec``, its last run with ``timed`` when timed.

    ``timed`` (:func:`timed_run`) comes from ``runs_dir/<spec>.timing``, which the pages'
    ``regenerate.sh`` append to around every run (``/usr/bin/time`` and the load).
    """
    provenance = run_provenance(runs_dir / spec)
    timing = runs_dir / f"{spec}.timing"
    if timing.is_file() and provenance:
        provenance[-1]["timed"] = timed_run(timing.read_text())
    return provenance


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


def measurement_of(measurement: Path, run: Path) -> dict[str, Any] | None:
    """``docs/gen_timings.py``'s measurement in ``measurement`` if its command wrote ``run``.

    A measurement names the folder its run wrote (``--out``); one of another folder (a fresh
    run the page does not show) is not this run's cost, and gives None, as a missing file does.
    """
    if not measurement.is_file():
        return None
    row = json.loads(measurement.read_text())
    words = str(row.get("command", "")).split()
    out = words[words.index("--out") + 1] if "--out" in words[:-1] else None
    return row if out is not None and Path(out).resolve() == run.resolve() else None


def options_kept(
    run: Path, entries: Sequence[str], seeds: Sequence[int]
) -> dict[str, list[int | None]]:
    """Entry -> the size of its option set on each seed (None: none stored; primitives: 0)."""
    with ResultsStore(run) as store:
        found = {e: [store.option_set(e, seed) for seed in seeds] for e in sorted(entries)}
    return {e: [None if s is None else len(s) for s in sets] for e, sets in found.items()}


def page_entries(pairs: Mapping[str, Sequence[str]]) -> list[str]:
    """Every entry a page's pairs name, subjects and the entries they are compared with."""
    return sorted({e for x, others in pairs.items() for e in (x, *others)})


@dataclass(frozen=True)
class Judged:
    """One group of a page's verdicts: ``pairs`` on ``metrics``, from the report in ``folder``.

    Attributes:
        folder: where the copied ``runs.json`` and ``leaderboard.json`` are (a sweep page: one
            variant's folder).
        pairs: subject -> the entries it is compared with, in the order the page asks.
        metrics: the metrics each pair is judged on.
        key: the group's key in the page's JSON and the prefix of its headings ("": a page of
            one group, whose JSON is ``{metric: {subject: rows}}``).
    """

    folder: Path
    pairs: Mapping[str, Sequence[str]]
    metrics: Sequence[str]
    key: str = ""

    @property
    def verdicts(self) -> int:
        """How many verdicts the group prints: each pair on each metric."""
        return len(self.metrics) * sum(len(others) for others in self.pairs.values())


def comparison_tables(spec: str, groups: Sequence[Judged]) -> tuple[list[str], dict[str, Any]]:
    """The page's verdict tables (Markdown lines) and their data, every verdict in one family.

    Each group's subjects against each entry they name, on each of its metrics: the report's
    own statistics and the suite's one verdict rule
    (:func:`opt_suite.report.pairwise.comparison_rows`). The Bonferroni family is every verdict
    of every group: the page prints them all. A page of one group without a ``key`` keeps the
    data ``{metric: {subject: rows}}``; otherwise ``{key: {metric: {subject: rows}}}``.
    """
    family = sum(g.verdicts for g in groups)
    loaded = [(g, load_baseline(g.folder / "runs.json")) for g in groups]
    per_seed = all(runs.tasks_per_seed for _, runs in loaded)
    tasks = (
        "Each seed drew its own test tasks." if per_seed else "Every seed ran the same test tasks."
    )
    lines = [
        f"# Who beats whom on `{spec}`",
        "",
        "Generated by `collect.py` from the copied `runs.json` and `leaderboard.json`. auc: the"
        " mean return over the budget; jump_start: over its first 10%; improvement: the mean"
        f" after the jump start minus the jump start (the slope). {tasks}"
        f" All {family} verdicts of this page are one family.",
        "",
    ]
    data: dict[str, Any] = {}
    for group, runs in loaded:
        board = json.loads((group.folder / "leaderboard.json").read_text())
        references = load_references(group.folder / "runs.json")
        found: dict[str, dict[str, list[dict[str, Any]]]] = {}
        for metric in group.metrics:
            found[metric] = {}
            for subject, others in group.pairs.items():
                rows = comparison_rows(
                    runs, board, subject, others, metric, comparisons=family, references=references
                )
                found[metric][subject] = rows
                prefix = f"{group.key}: " if group.key else ""
                lines += [f"## {prefix}{subject}: {metric}", "", comparison_markdown(rows)]
        if group.key:
            data[group.key] = found
        else:
            data.update(found)
    return lines, data


def write_comparisons(
    here: Path, spec: str, pairs: Mapping[str, Sequence[str]], metrics: Sequence[str]
) -> None:
    """``comparisons.md`` / ``.json`` in ``here`` from its copied ``runs.json`` and leaderboard.

    Each subject of ``pairs`` against each entry it names, on each of ``metrics``: the report's
    own statistics and the suite's one verdict rule
    (:func:`opt_suite.report.pairwise.comparison_rows`), every verdict of the page in one
    Bonferroni family (:func:`comparison_tables`, one group).
    """
    lines, data = comparison_tables(spec, [Judged(here, pairs, metrics)])
    (here / "comparisons.md").write_text("\n".join(lines))
    write_json(here / "comparisons.json", data)


def collect_main(
    doc: str, collect: Callable[[Path, Path], None], write_tables: Callable[[], None]
) -> None:
    """A page's command line: ``collect.py [RUNS_DIR] [--timings DIR]`` or ``--tables-only``.

    ``collect(RUNS_DIR, TIMINGS)`` copies the run and writes the page's files (RUNS_DIR default
    ``results``; TIMINGS, where ``docs/gen_timings.py`` wrote its measurements, default this
    checkout's ``docs/timings``); ``write_tables()`` rewrites the page's tables from the
    committed copies alone. A missing run exits 2 with one line.
    """
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("runs_dir", nargs="?", type=Path, default=Path("results"))
    parser.add_argument(
        "--timings",
        type=Path,
        default=Path(__file__).resolve().parents[1] / "timings",
        help="the folder of docs/gen_timings.py's measurements (default: docs/timings)",
    )
    parser.add_argument(
        "--tables-only",
        action="store_true",
        help="rewrite the tables from the committed copies here, without the run",
    )
    args = parser.parse_args()
    if args.tables_only:
        write_tables()
        return
    try:
        collect(args.runs_dir, args.timings)
    except MissingRun as error:
        print(f"collect.py: {error}", file=sys.stderr)
        sys.exit(2)
