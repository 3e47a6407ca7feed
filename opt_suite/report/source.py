"""Read a run directory's results store into :class:`ReportInputs` (the only store-aware module).

Only the latest run recorded in the directory is reported (the store restricts every query to it).
Evaluation cells that failed or never finished are left out with a warning; a method entry with no
completed evaluation at all is left out of the report likewise, so a report can still be written
for the rest of a run in which one method crashed (``opt-suite compare`` then refuses to pass).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from opt_suite.report.episodes import EpisodeTable, ReportDataError
from opt_suite.report.fig1a import training_curves
from opt_suite.report.inputs import ReportInputs
from opt_suite.report.interaction_curves import interaction_curves
from opt_suite.report.normalise import References
from opt_suite.report.section import StoredRun
from opt_suite.report.sections import collect_sections
from opt_suite.report.task_draw import drawn_test_tasks
from opt_suite.spec import SpecError
from opt_suite.spec.schema import ReportSpec
from opt_suite.spec.stored import StoredSpec, stored_sections
from opt_suite.stages import Stage
from opt_suite.store.files import references_file
from opt_suite.store.records import DiscoveryRecord
from opt_suite.store.sealed import SealedFileError, read_sealed

__all__ = ["PICTURE_DIRS", "find_pictures", "load_inputs", "load_view_inputs"]

# Folders of a run directory whose PNGs index.html shows as option pictures.
PICTURE_DIRS = ("pictures", "options")


def find_pictures(directory: Path) -> tuple[str, ...]:
    """PNG files under the picture folders, as sorted paths relative to ``directory``."""
    found = []
    for sub in PICTURE_DIRS:
        found += [p.relative_to(directory).as_posix() for p in (directory / sub).rglob("*.png")]
    return tuple(sorted(found))


def _stored(spec_yaml: str) -> StoredSpec:
    """The stored spec's own sections, typed and bounded by the converter ``validate`` uses.

    Raises:
        ReportDataError: a section breaks its type or bounds, or the text is not a spec (each
            problem located in the stored spec).
    """
    try:
        return stored_sections(spec_yaml)
    except SpecError as exc:
        raise ReportDataError("the stored spec: " + "; ".join(exc.problems)) from None


def report_settings(spec_yaml: str) -> ReportSpec:
    """The ``report:`` section of a resolved spec's YAML, without loading the spec's plugins.

    Raises:
        ReportDataError: the section is not a ``ReportSpec`` within its bounds.
    """
    return _stored(spec_yaml).report


def evaluation_frames(spec_yaml: str) -> int | None:
    """The stored spec's ``evaluation.frames`` (a frame budget), or None for an episode budget."""
    section = _stored(spec_yaml).evaluation
    return None if section is None else section.frames


def tasks_per_seed(spec_yaml: str) -> bool:
    """Whether the stored spec draws its test tasks per seed (``tasks.test_per_seed``)."""
    section = _stored(spec_yaml).tasks
    return section is not None and section.test_per_seed


def frame_unit(
    recorded: dict[str, Any] | None, spec_yaml: str, where: str = "the results store"
) -> str:
    """What the stored run's ``frames`` count: the family's ``frame_unit`` the run recorded.

    ``recorded``: ``ResultsStore.run_family()`` (``where``: the store and run, for the error). A
    run recorded before the runner wrote it has None, and the rule of that time applies:
    "emulator frames" on Atari (each action repeats for several emulator frames, all counted),
    else "env steps".

    Raises:
        ReportDataError: the recorded unit is not a non-empty string.
    """
    if recorded is None:
        return "emulator frames" if _stored(spec_yaml).family_name == "atari" else "env steps"
    unit = recorded.get("frame_unit")
    if not isinstance(unit, str) or not unit.strip():
        raise ReportDataError(
            f"{where}: the run's recorded family {recorded!r}: frame_unit is {unit!r}, expected"
            " a non-empty string such as 'env steps'"
        )
    return unit


def load_references(path: Path, warnings: list[str]) -> References | None:
    """The reference returns the runner measured (``references/spec-<hash>.json``), or None.

    A missing file means none were asked for (``report.references``); a file that records why
    they could not be measured, or one that fails its digest (damaged, edited by hand, not
    written by the suite: :mod:`opt_suite.store.sealed`), adds a warning naming it (the report
    then says that its scores are not normalised, and why; the next ``opt-suite run`` rewrites
    it).
    """
    if not (path.exists() or path.is_symlink()):
        return None
    try:
        doc = read_sealed(path, "reference returns file")
        if "error" in doc:
            warnings.append(f"no normalised scores: {doc['error']}")
            return None
        return References(
            tuple(int(s) for s in doc["seeds"]),
            tuple(doc["tasks"]),
            np.asarray(doc["random"], dtype=np.float64),
            np.asarray(doc["expert_returns"], dtype=np.float64),
            str(doc["expert"]),
        )
    except SealedFileError as exc:
        warnings.append(
            f"no normalised scores: {exc}; `opt-suite run` on this folder measures them again"
        )
        return None
    except (ValueError, KeyError, TypeError) as exc:
        warnings.append(
            f"no normalised scores: {path.absolute()} is not a reference returns file ({exc})"
        )
        return None


def references_covering(
    references: References | None, seeds: Iterable[int], path: Path, warnings: list[str]
) -> References | None:
    """``references`` if they cover every stored seed, else None and a warning naming the rest.

    Another runner into the same folder (``run --seeds``) stores its seeds' evaluations before
    it measures their references: a report written meanwhile has no normalised scores (and says
    so) rather than failing; the last runner's report has them.
    """
    if references is None:
        return None
    missing = sorted(set(int(s) for s in seeds) - set(references.seeds))
    if not missing:
        return references
    warnings.append(
        f"no normalised scores: {path.absolute()} has no reference returns for seed(s)"
        f" {', '.join(map(str, missing))} (a run into this folder may still be measuring them;"
        " `opt-suite report` after it ends adds them)"
    )
    return None


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
    from opt_suite.run_view import RunView

    with RunView(directory, spec_hash=spec_hash) as view:
        return load_view_inputs(view)


def load_view_inputs(view: Any) -> tuple[ReportInputs, list[str]]:
    """The report inputs of an open :class:`opt_suite.run_view.RunView`, and warnings for people.

    Raises:
        opt_suite.store.StoreError: the store is damaged (unreadable, or rows that fail their
            checksum).
        ReportDataError: no evaluation episode has been recorded.
    """
    from opt_suite.store import StoreError
    from opt_suite.store.schema import StoreDatabaseError

    directory = view.directory
    try:
        return _load_inputs(directory, view.store)
    except (StoreDatabaseError, ValueError, OverflowError, TypeError) as exc:
        if isinstance(exc, ReportDataError):
            raise
        raise StoreError(
            f"the results store in {directory} is damaged ({type(exc).__name__}: {exc}); rerun"
            " `opt-suite run SPEC --out DIR` into a fresh directory (or delete"
            f" {Path(directory) / 'results.sqlite'} to recompute every cell in place)"
        ) from None


def _load_inputs(directory: Path, store: Any) -> tuple[ReportInputs, list[str]]:
    warnings: list[str] = []
    incomplete: list[str] = []
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
    training = training_curves(curve_rows)
    interaction = interaction_curves(curve_rows)
    # A run that failed only in references cells has every episode: its caveat is the missing
    # normalised scores (load_references names the cause), not an incomplete table.
    failed_kinds = {c.kind for c in cells if c.status == "failed"}
    only_references = run.status == "failed" and failed_kinds == {Stage.REFERENCES.value}
    if run.status != "done" and not only_references:
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
    references_path = references_file(directory, run.spec_hash)
    reference_warnings: list[str] = []
    references = references_covering(
        load_references(references_path, reference_warnings),
        {r.seed for r in rows},
        references_path,
        reference_warnings,
    )
    warnings += reference_warnings
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
        frame_unit=frame_unit(
            store.run_family(), spec_yaml, f"{store.db_path} (run {store.run_id})"
        ),
        tasks_per_seed=tasks_per_seed(spec_yaml),
        references=references,
        sections=collect_sections(cells, methods, StoredRun(store, _stored(spec_yaml))),
        discovery_warnings=tuple(discovery_warnings(cells, methods)),
        # In the leaderboard's caveats too: a report without its normalised scores says why.
        reference_warnings=tuple(reference_warnings),
        task_draw=drawn_test_tasks(store.tasks()),
    )
    return inputs, warnings


def discovery_warnings(cells: Iterable[Any], methods: Iterable[str]) -> list[str]:
    """The warnings discovery cells recorded (``Discovery.info[DISCOVERY_WARNINGS]``), one per line.

    Repeated lines of one method (the same warning on every seed) are shown once with their seeds.
    """
    reported = set(methods)
    seeds: dict[tuple[str, str], list[int]] = {}
    for c in cells:
        if c.kind != Stage.DISCOVERY or c.status != "done" or c.method not in reported:
            continue
        for line in DiscoveryRecord.from_info(c.info or {}).warnings:
            seeds.setdefault((str(c.method), str(line)), []).append(int(c.seed))
    return [
        f"discovery of {method!r} (seed {', '.join(map(str, sorted(s)))}): {line}"
        for (method, line), s in seeds.items()
    ]
