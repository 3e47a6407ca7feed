"""Read a run directory's results store into :class:`ReportInputs` (the only store-aware module).

Only the latest run recorded in the directory is reported (the store restricts every query to it).
Evaluation cells that failed or never finished are left out with a warning; a method entry with no
completed evaluation at all is left out of the report likewise, so a report can still be written
for the rest of a run in which one method crashed (``opt-suite compare`` then refuses to pass).
"""

from __future__ import annotations

import dataclasses
import math
import sqlite3
from pathlib import Path
from typing import Any

import yaml

from opt_suite.report.build import ReportInputs
from opt_suite.report.demonstrations import summarise_demonstrations
from opt_suite.report.episodes import EpisodeTable, ReportDataError
from opt_suite.report.fig1a import training_curves
from opt_suite.report.interaction_curves import interaction_curves
from opt_suite.spec.schema import ReportSpec
from opt_suite.stages import Stage

__all__ = ["PICTURE_DIRS", "find_pictures", "load_inputs"]

# Folders of a run directory whose PNGs index.html shows as option pictures.
PICTURE_DIRS = ("pictures", "options")


def find_pictures(directory: Path) -> tuple[str, ...]:
    """PNG files under the picture folders, as sorted paths relative to ``directory``."""
    found = []
    for sub in PICTURE_DIRS:
        found += [p.relative_to(directory).as_posix() for p in (directory / sub).rglob("*.png")]
    return tuple(sorted(found))


def report_settings(spec_yaml: str) -> ReportSpec:
    """The ``report:`` section of a resolved spec's YAML, without loading the spec's plugins.

    Raises:
        ReportDataError: the section is not a mapping of ``ReportSpec`` fields.
    """
    try:
        document = yaml.safe_load(spec_yaml) or {}
    except yaml.YAMLError as exc:
        flat = " ".join(str(exc).split())
        raise ReportDataError(f"the stored spec is not YAML: {flat}") from None
    section: Any = (document.get("report") if isinstance(document, dict) else None) or {}
    known = {f.name for f in dataclasses.fields(ReportSpec)}
    if not isinstance(section, dict) or set(section) - known:
        raise ReportDataError(
            f"the stored spec's report section {section!r} is not a mapping of {sorted(known)}"
        )
    settings = ReportSpec(**section)
    problems = []
    if not _number(settings.final_fraction) or not 0 < settings.final_fraction <= 1:
        problems.append(f"final_fraction {settings.final_fraction!r} is not in (0, 1]")
    if not _integer(settings.bootstrap) or not 100 <= settings.bootstrap <= 1_000_000:
        problems.append(f"bootstrap {settings.bootstrap!r} is not an integer in 100..1000000")
    if settings.threshold is not None and not _number(settings.threshold):
        problems.append(f"threshold {settings.threshold!r} is not a finite number")
    if settings.baseline is not None and not isinstance(settings.baseline, str):
        problems.append(f"baseline {settings.baseline!r} is not a method entry name")
    if problems:
        raise ReportDataError(f"the stored spec's report section: {'; '.join(problems)}")
    return settings


def demonstrations_asked(spec_yaml: str) -> int | None:
    """The stored spec's ``demonstrations.trajectories_per_task``, or None (unset or unreadable)."""
    try:
        document = yaml.safe_load(spec_yaml) or {}
    except yaml.YAMLError:
        return None
    section = document.get("demonstrations") if isinstance(document, dict) else None
    value = section.get("trajectories_per_task") if isinstance(section, dict) else None
    return int(value) if value is not None and _integer(value) and value >= 1 else None


def evaluation_frames(spec_yaml: str) -> int | None:
    """The stored spec's ``evaluation.frames`` (a frame budget), or None for an episode budget.

    Raises:
        ReportDataError: the value is not a positive integer.
    """
    try:
        document = yaml.safe_load(spec_yaml) or {}
    except yaml.YAMLError:
        return None  # report_settings has already said what is wrong with it
    evaluation = document.get("evaluation") if isinstance(document, dict) else None
    frames = evaluation.get("frames") if isinstance(evaluation, dict) else None
    if frames is not None and not (_integer(frames) and frames >= 1):
        raise ReportDataError(
            f"the stored spec's evaluation.frames {frames!r} is not an integer >= 1"
        )
    return frames


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: Any) -> bool:
    return (_integer(value) or isinstance(value, float)) and math.isfinite(float(value))


def load_inputs(
    directory: str | Path, spec_hash: str | None = None
) -> tuple[ReportInputs, list[str]]:
    """The report inputs of the latest run in ``directory``, and warnings for people.

    ``spec_hash`` selects the latest run of that spec instead (the runner reports its own).

    Raises:
        opt_suite.store.StoreError: the directory holds no results store or no run, or its store
            is damaged (unreadable, or rows that fail their checksum).
        ReportDataError: no evaluation episode has been recorded.
    """
    from opt_suite.store import StoreError

    try:
        return _load_inputs(Path(directory), spec_hash)
    except (sqlite3.Error, ValueError, OverflowError, TypeError) as exc:
        if isinstance(exc, ReportDataError):
            raise
        raise StoreError(
            f"the results store in {directory} is damaged ({type(exc).__name__}: {exc}); rerun"
            " `opt-suite run SPEC --out DIR` into a fresh directory (or delete"
            f" {Path(directory) / 'results.sqlite'} to recompute every cell in place)"
        ) from None


def _load_inputs(directory: Path, spec_hash: str | None) -> tuple[ReportInputs, list[str]]:
    from opt_suite.store import ResultsStore  # the store module pulls in sqlite only

    warnings: list[str] = []
    incomplete: list[str] = []
    with ResultsStore(directory, spec_hash) as store:
        run = store.run()
        planned = store.methods()
        rows = store.episodes()
        cells = store.cells()
        failed = [c for c in cells if c.kind == Stage.EVALUATION and c.status != "done"]
        # The cause first: an evaluation is missing when the discovery it needs failed.
        failed = [c for c in cells if c.kind == Stage.DISCOVERY and c.status == "failed"] + failed
        spec_yaml = store.spec_yaml()
        settings = report_settings(spec_yaml)
        frame_budget = evaluation_frames(spec_yaml)
        curve_rows = store.curves()
        demonstrations = summarise_demonstrations(
            (seed, demos) for seed in store.seeds() if (demos := store.demonstrations(seed))
        )
        training = training_curves(curve_rows)
        interaction = interaction_curves(curve_rows)
    if run.status != "done":
        incomplete.append(f"the latest run in {directory} has status {run.status!r}")
        warnings.append(incomplete[-1])
    for c in failed:
        reason = f": {c.error.strip().splitlines()[-1]}" if c.error else ""
        message = f"{c.kind} of {c.method!r} seed {c.seed} is {c.status}{reason}"
        if message not in incomplete:  # one line per (method, seed), not one per test task
            incomplete.append(message)
            warnings.append(f"left out: {message}")
    present = {r.method for r in rows}
    methods = tuple(m for m in planned if m in present)
    if not methods:
        raise ReportDataError(f"{directory} has no completed evaluation episodes to report yet")
    if len(methods) < len(planned):
        warnings.append(
            "method entries with no completed evaluation:"
            f" {[m for m in planned if m not in present]}"
        )
    table = EpisodeTable.from_rows(
        (r.method, r.seed, r.task, r.episode, r.ret, r.steps, r.frames) for r in rows
    )
    inputs = ReportInputs(
        episodes=table,
        spec_name=run.spec_name,
        spec_hash=run.spec_hash,
        settings=settings,
        methods=methods,
        pictures=find_pictures(directory),
        incomplete=tuple(incomplete),
        training={m: training[m] for m in methods if m in training},
        interaction={m: interaction[m] for m in methods if m in interaction},
        frame_budget=frame_budget,
        demonstrations=demonstrations,
        demonstrations_asked=demonstrations_asked(spec_yaml),
    )
    return inputs, warnings
