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

from opt_suite.report.demonstrations import summarise_demonstrations
from opt_suite.report.episodes import EpisodeTable, ReportDataError
from opt_suite.report.fig1a import training_curves
from opt_suite.report.inputs import ReportInputs
from opt_suite.report.interaction_curves import interaction_curves
from opt_suite.report.normalise import References
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


def demonstrations_asked(spec_yaml: str) -> int | None:
    """The stored spec's ``demonstrations.trajectories_per_task``, or None (unset)."""
    section = _stored(spec_yaml).demonstrations
    return None if section is None else section.trajectories_per_task


def evaluation_frames(spec_yaml: str) -> int | None:
    """The stored spec's ``evaluation.frames`` (a frame budget), or None for an episode budget."""
    section = _stored(spec_yaml).evaluation
    return None if section is None else section.frames


def tasks_per_seed(spec_yaml: str) -> bool:
    """Whether the stored spec draws its test tasks per seed (``tasks.test_per_seed``)."""
    section = _stored(spec_yaml).tasks
    return section is not None and section.test_per_seed


def frame_unit(spec_yaml: str) -> str:
    """What the stored run's ``frames`` count: "emulator frames" on Atari, else "env steps".

    Atari repeats each action for several emulator frames and reports them; every other family
    counts one frame per env step (all sub-envs together), so its axis is env steps.
    """
    return "emulator frames" if _stored(spec_yaml).family_name == "atari" else "env steps"


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
    demos_by_seed = {seed: demos for seed in store.seeds() if (demos := store.demonstrations(seed))}
    demonstrations = summarise_demonstrations(demos_by_seed.items())
    degenerate = degenerate_options(store, cells, demos_by_seed)
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
        demonstrations=demonstrations,
        frame_unit=frame_unit(spec_yaml),
        tasks_per_seed=tasks_per_seed(spec_yaml),
        references=references,
        degenerate=tuple(degenerate),
        sections=collect_sections(cells, methods),
        demonstrations_asked=demonstrations_asked(spec_yaml),
        discovery_warnings=tuple(discovery_warnings(cells, methods)),
        # In the leaderboard's caveats too: a report without its normalised scores says why.
        reference_warnings=tuple(reference_warnings),
        task_draw=drawn_test_tasks(store.tasks()),
    )
    return inputs, warnings


def degenerate_options(
    store: Any, cells: Any, demos_by_seed: dict[int, Any], methods: Any = None
) -> list[str]:
    """One line per degenerate option of the viewed run (:mod:`opt_suite.report.degenerate`).

    Copies of primitives are found in tabular option sets (on the seed's demonstrated states, or
    every state without demonstrations); options never chosen, wherever every done evaluation
    cell of that (method, seed) recorded its counts. Network option sets are not evaluated here
    (that would load TensorFlow): only their usage is. ``methods``: only these entries (None:
    all); only the seeds of ``cells`` are read.
    """
    from opt_suite.options.base import load_option_set, option_set_kind
    from opt_suite.report.degenerate import (
        copies_of_primitives,
        degenerate_messages,
        never_chosen,
        one_step_options,
        state_visits,
    )

    lines: list[str] = []
    for cell in cells:
        if cell.kind != Stage.DISCOVERY or cell.status != "done" or cell.method is None:
            continue
        if methods is not None and cell.method not in methods:
            continue
        path = store.option_set_file(cell.method, cell.seed)
        if path is None:
            continue
        copies: list[Any] = []
        if option_set_kind(path) == "tabular":
            options: Any = load_option_set(path)  # a TabularOptionSet: mu [m, S, A], beta [m, S]
            names = tuple(options.names)
            if not len(names):
                continue
            demos = demos_by_seed.get(cell.seed) or []
            visits = state_visits([d.observations for d in demos], options.mu.shape[1])
            copies = copies_of_primitives(options.mu, options.beta, visits)
        else:
            names = ()
        usage = _recorded_usage(store, cells, cell)
        unused, one_step, episodes = [], [], 0
        if usage is not None:
            calls, steps, num_primitives, usage_names = usage
            episodes = calls.shape[0]
            unused = never_chosen(calls, num_primitives)
            if not names:  # a network option set: its actions are not evaluated here
                one_step = one_step_options(calls, steps, num_primitives)
            names = names or usage_names
        if names:
            where = f"{cell.method}, seed {cell.seed}"
            lines += degenerate_messages(where, names, copies, unused, episodes, one_step)
    return lines


def _recorded_usage(store: Any, cells: Any, discovery: Any) -> tuple[Any, Any, int, tuple] | None:
    """The recorded option counts of every evaluation of a discovery's method and seed.

    Returns (calls [episodes, A + m], steps [same], A, option names), or None unless every such
    evaluation cell is done and recorded its counts.
    """
    from opt_suite.store.files import USAGE_FILE

    evaluations = [
        c
        for c in cells
        if c.kind == Stage.EVALUATION and (c.method, c.seed) == (discovery.method, discovery.seed)
    ]
    paths = [store.recorded_file(c.cell_id, USAGE_FILE) if c.status == "done" else None
             for c in evaluations]  # fmt: skip
    if not paths or any(p is None for p in paths):
        return None
    from opt_suite.learners.base import OptionUsage  # only when counts were recorded

    usages = [OptionUsage.load(p) for p in paths if p is not None]
    first = usages[0]
    calls = np.concatenate([np.asarray(u.calls) for u in usages])
    steps = np.concatenate([np.asarray(u.steps) for u in usages])
    return calls, steps, first.num_primitives, first.names[first.num_primitives :]


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
