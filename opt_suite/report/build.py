"""From plain results to every report file: the pipeline ``write_reports`` runs.

``ReportInputs`` (episodes, spec identity and ``report:`` settings) -> :func:`analyse` (complete
learning-curve grids, per-task thresholds, per-run metrics) -> :func:`write_report_files`.
``ReportInputs`` and ``Analysis`` live in :mod:`opt_suite.report.inputs` (re-exported here), so
that what builds on them (the baseline file, the gate) does not import the pipeline.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from opt_suite.files_guard import output_file
from opt_suite.report.baseline import baseline_document
from opt_suite.report.caveats import leaderboard_caveats
from opt_suite.report.curves import write_curves_png
from opt_suite.report.discovery_cost import SECTION as DISCOVERY_COST
from opt_suite.report.discovery_cost import write_discovery_axis_png
from opt_suite.report.episodes import LearningCurves, learning_curves
from opt_suite.report.fig1a import write_fig1a_png
from opt_suite.report.html import write_index_html
from opt_suite.report.inputs import Analysis, ReportInputs
from opt_suite.report.interaction_curves import write_discovery_png
from opt_suite.report.leaderboard import Leaderboard, build_leaderboard
from opt_suite.report.metrics import (
    DEFAULT_THRESHOLD_FRACTION,
    resolve_thresholds,
    run_metrics,
    seed_task_key,
)
from opt_suite.report.normalise import (
    References,
    normalisation_caveat,
    reference_thresholds,
    undefined_pairs,
)
from opt_suite.report.normalised_section import SECTION as NORMALISED
from opt_suite.report.normalised_section import from_references, with_estimates
from opt_suite.report.sections import section_caveats, section_markdown
from opt_suite.report.tables import (
    leaderboard_json,
    leaderboard_markdown,
    write_json,
    write_leaderboard_csv,
    write_returns_csv,
)
from opt_suite.verdict import Margins

__all__ = ["Analysis", "REPORT_FILES", "ReportInputs", "analyse", "write_report_files"]

REPORT_FILES = (
    "returns.csv",
    "leaderboard.md",
    "leaderboard.csv",
    "leaderboard.json",
    "curves.png",
    "index.html",
    "runs.json",
)


#: Without a spec threshold, a run with reference returns is timed to this fraction of the way
#: from the random policy's return to the expert's (a normalised score of 0.5).
REFERENCE_THRESHOLD_FRACTION = 0.5


def analyse(inputs: ReportInputs, thresholds: Mapping[Any, float] | None = None) -> Analysis:
    """Group the episodes and compute every run's metrics.

    Args:
        inputs: the results.
        thresholds: task -> episodes_to_threshold threshold; None resolves them from the spec's
            ``report.threshold`` or the default rule (see :mod:`opt_suite.report.metrics`).
    """
    curves = learning_curves(inputs.episodes, inputs.methods, inputs.frame_budget)
    s = inputs.settings
    rule = "given"
    if thresholds is None:
        thresholds, rule = choose_thresholds(inputs, curves)
    metrics = run_metrics(curves, s.final_fraction, thresholds, frame_budget=inputs.frame_budget)
    return Analysis(curves, dict(thresholds), metrics, rule)


def choose_thresholds(
    inputs: ReportInputs, curves: Mapping[str, LearningCurves]
) -> tuple[dict[Any, float], str]:
    """Per-task thresholds of episodes_to_threshold and the rule that chose them, in words.

    The spec's ``report.threshold``; else, with reference returns, a fixed fraction of the
    normalised score (no compared method sets it); else the old rule, which depends on the
    methods compared (a leaderboard caveat says so).
    """
    s = inputs.settings
    tasks = next(iter(curves.values())).tasks
    if s.threshold is not None:
        return resolve_thresholds(curves, s.threshold, s.final_fraction), (
            f"report.threshold = {s.threshold:g} on every task"
        )
    refs = inputs.references
    if refs is not None and inputs.tasks_per_seed:
        return _per_seed_reference_thresholds(inputs, refs, curves)
    if refs is not None and normalisation_caveat(refs) is None:
        resolve_thresholds(curves, 0.0, s.final_fraction)  # the methods' tasks must agree
        return reference_thresholds(refs, tasks, REFERENCE_THRESHOLD_FRACTION), (
            f"a normalised score of {REFERENCE_THRESHOLD_FRACTION:g}: random +"
            f" {REFERENCE_THRESHOLD_FRACTION:g} x ({refs.expert_label} - random), mean over seeds"
        )
    return resolve_thresholds(curves, None, s.final_fraction), (
        f"{100 * DEFAULT_THRESHOLD_FRACTION:g}% of the way from the worst to the best method"
        " entry's mean final return on the task"
    )


def leaderboard(inputs: ReportInputs, analysis: Analysis) -> Leaderboard:
    """The aggregated leaderboard of an analysis, its sections' data with it.

    The normalised scores' section is handed the references before the core runs (its caveat
    needs only them) and the core's normalised estimates after it.
    """
    sections = dict(inputs.sections)
    normalised = from_references(inputs.references)
    if normalised is not None:
        sections[NORMALISED.key] = normalised
    board = build_leaderboard(
        analysis.metrics,
        spec_name=inputs.spec_name,
        spec_hash=inputs.spec_hash,
        episodes=analysis.episodes,
        baseline=inputs.settings.baseline,
        bootstrap=inputs.settings.bootstrap,
        thresholds=analysis.thresholds,
        final_fraction=inputs.settings.final_fraction,
        warnings=(
            # An incomplete run's table silently lacks runs: say which, before any other caveat.
            *(f"incomplete run, left out: {reason}" for reason in inputs.incomplete),
            *leaderboard_caveats(
                analysis.curves,
                inputs.settings.final_fraction,
                inputs.frame_budget is not None,
                inputs.episodes,
            ),
            # What the methods were given (e.g. demonstrations that score nothing test nothing).
            *section_caveats(sections, "inputs"),
            *filter(None, [_threshold_caveat(analysis)]),
            # The scale of the estimates (e.g. reference returns that give no normalised score).
            *section_caveats(sections, "scale"),
            *inputs.reference_warnings,
            # What they produced (e.g. an option that is a primitive under another name).
            *section_caveats(sections, "outputs"),
            # A method that ran on less than it was given (e.g. demonstrations it left out).
            *inputs.discovery_warnings,
        ),
        frame_budget=inputs.frame_budget,
        references=inputs.references,
        threshold_rule=analysis.threshold_rule,
        frame_unit=inputs.frame_unit,
        sections=sections,
        tasks_per_seed=inputs.tasks_per_seed,
        margins=Margins(inputs.settings.equivalence_normalised, inputs.settings.equivalence_p),
        positive_controls=inputs.settings.positive_controls,
        clone=inputs.settings.clone,
    )
    if normalised is None:
        return board
    # The core computed the normalised estimates; the section shows them.
    shown = with_estimates(normalised, board)
    return dataclasses.replace(board, sections={**board.sections, NORMALISED.key: shown})


def _per_seed_reference_thresholds(
    inputs: ReportInputs, refs: References, curves: Mapping[str, LearningCurves]
) -> tuple[dict[Any, float], str]:
    """Test tasks drawn per seed: each (seed, task) its own reference level.

    A pair whose normalised score is undefined (:mod:`opt_suite.report.normalise`: the expert
    does not beat random by the margin) has no such level; it falls back to the entries' own
    final returns on that pair (the old rule, per (seed, task)), and the rule says how many did.
    """
    tasks = next(iter(curves.values())).tasks
    levels = reference_thresholds(refs, tasks, REFERENCE_THRESHOLD_FRACTION, per_seed=True)
    flat = [(seed, t) for seed, t in undefined_pairs(refs) if t in tasks]
    if flat:  # the entries' own final returns, computed only where a pair needs them
        fallback = resolve_thresholds(curves, None, inputs.settings.final_fraction, per_seed=True)
        for seed, t in flat:
            key = seed_task_key(seed, t)
            levels[key] = fallback.get(key, levels[key])
    rule = (
        f"a normalised score of {REFERENCE_THRESHOLD_FRACTION:g}: random +"
        f" {REFERENCE_THRESHOLD_FRACTION:g} x ({refs.expert_label} - random), per seed and task"
        " (keys seed/task)"
    )
    if flat:
        rule += (
            f"; on the {len(flat)} (seed, task) pair(s) where the normalised score is undefined,"
            f" {100 * DEFAULT_THRESHOLD_FRACTION:g}% of the way from the worst to the best method"
            " entry's mean final return on that pair"
        )
    return levels, rule


def _threshold_caveat(analysis: Analysis) -> str | None:
    """A warning when the thresholds come from the methods being ranked (the fallback rule)."""
    if analysis.threshold_rule.endswith("mean final return on that pair"):
        return (
            "episodes_to_threshold's thresholds come from the compared method entries' own final"
            " returns on the (seed, task) pairs whose normalised score is undefined (the expert"
            " does not beat random by the margin; the rule in the protocol names how many), so"
            " there they move when an entry is added or removed"
        )
    if not analysis.threshold_rule.endswith("mean final return on the task"):
        return None
    return (
        "episodes_to_threshold's thresholds come from the compared method entries' own final"
        " returns (no report.threshold, and no reference returns or some pair's normalised score"
        " is undefined), so they move when an entry is added or removed; set report.threshold to"
        " time every entry against a fixed level"
    )


def write_report_files(inputs: ReportInputs, out_dir: str | Path) -> list[Path]:
    """Write :data:`REPORT_FILES` into ``out_dir`` and return their paths, in that order.

    ``runs.json`` is the run's per-run data (every (method, seed, task) run's metrics): the same
    document ``report --export-baseline`` writes, so ``compare --baseline runs.json`` gates
    another run against it (see :mod:`opt_suite.report.baseline`).

    ``fig1a.png`` (Algorithm 1's training curves) follows when ``inputs.training`` has any, and
    ``discovery.png`` (option discovery by interaction) when ``inputs.interaction`` has any, and
    ``curves_with_discovery.png`` (discovery frames on the x-axis) when a discovery stepped envs.

    Raises:
        ReportDataError: the episodes cannot be reported (empty, incomplete, inconsistent).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name in (*REPORT_FILES, "fig1a.png", "discovery.png"):
        # Rewritten in place: a symlink there is replaced, never written through (files_guard).
        output_file(out / name, "a report file")
    analysis = analyse(inputs)
    board = leaderboard(inputs, analysis)
    fig1a = "fig1a.png" if inputs.training else None
    discovery = "discovery.png" if inputs.interaction else None
    text = "\n".join(
        filter(
            None,
            [
                leaderboard_markdown(board),
                *section_markdown(board.sections, analysis.curves, "after"),
            ],
        )
    )
    written = [
        write_returns_csv(inputs.episodes, out / "returns.csv", list(analysis.curves)),
        _write_text(out / "leaderboard.md", text),
        write_leaderboard_csv(board, out / "leaderboard.csv"),
        write_json(leaderboard_json(board), out / "leaderboard.json"),
        write_curves_png(
            analysis.curves,
            out / "curves.png",
            inputs.spec_name,
            inputs.references,
            inputs.frame_unit,
        ),
        out / "index.html",  # written last, below: it links every figure that exists
        write_json(baseline_document(inputs, analysis), out / "runs.json"),
    ]
    if fig1a is not None:
        written.append(write_fig1a_png(inputs.training, out / fig1a, inputs.spec_name))
    if discovery is not None:
        written.append(write_discovery_png(inputs.interaction, out / discovery, inputs.spec_name))
    with_discovery = write_discovery_axis_png(
        analysis.curves,
        inputs.sections.get(DISCOVERY_COST.key, {}),
        out / "curves_with_discovery.png",
        inputs.spec_name,
    )
    if with_discovery is not None:
        written.append(with_discovery)
    write_index_html(
        text,
        inputs.spec_name,
        out / "index.html",
        inputs.pictures,
        fig1a=fig1a,
        discovery=discovery,
        curves_with_discovery=None if with_discovery is None else with_discovery.name,
    )
    return written


def _write_text(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path
