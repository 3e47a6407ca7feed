"""From plain results to every report file: the pipeline ``write_reports`` runs.

``ReportInputs`` (episodes, spec identity and ``report:`` settings) -> :func:`analyse` (complete
learning-curve grids, per-task thresholds, per-run metrics) -> :func:`write_report_files`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from opt_suite.report.caveats import leaderboard_caveats
from opt_suite.report.curves import write_curves_png
from opt_suite.report.demonstrations import (
    TaskDemonstrations,
    demonstrations_markdown,
    demonstrations_warning,
)
from opt_suite.report.episodes import EpisodeTable, LearningCurves, learning_curves
from opt_suite.report.fig1a import TrainingCurves, write_fig1a_png
from opt_suite.report.html import write_index_html
from opt_suite.report.interaction_curves import InteractionCurves, write_discovery_png
from opt_suite.report.leaderboard import Leaderboard, build_leaderboard
from opt_suite.report.metrics import MethodMetrics, resolve_thresholds, run_metrics
from opt_suite.report.tables import (
    leaderboard_json,
    leaderboard_markdown,
    write_json,
    write_leaderboard_csv,
    write_returns_csv,
)
from opt_suite.spec.schema import ReportSpec

__all__ = ["Analysis", "REPORT_FILES", "ReportInputs", "analyse", "write_report_files"]

REPORT_FILES = (
    "returns.csv",
    "leaderboard.md",
    "leaderboard.csv",
    "leaderboard.json",
    "curves.png",
    "index.html",
)


@dataclasses.dataclass(frozen=True, eq=False)
class ReportInputs:
    """What a report is computed from.

    Attributes:
        episodes: every test-time episode.
        spec_name: the spec's ``name``.
        spec_hash: the spec's hash (``opt_suite.spec.spec_hash``).
        settings: the spec's ``report:`` section.
        methods: method entry names in spec order (None: the table's order).
        pictures: option pictures, as paths relative to the report folder.
        incomplete: why the run is not complete (failed or missing evaluation cells, a run that
            did not finish); empty for a complete run. ``opt-suite compare`` refuses these.
        training: discovery training curves for Figure 1a (``fig1a.py``); empty: no fig1a.png.
        interaction: learning curves of methods that discover options by interacting
            (``interaction_curves.py``); empty: no discovery.png.
        frame_budget: the spec's ``evaluation.frames`` (None: a budget in episodes): runs then
            end different numbers of episodes, and every metric is computed on a common frame
            axis (see :func:`opt_suite.report.episodes.learning_curves`).
        demonstrations: each train task's demonstration returns per seed (empty: no section and
            no warning; see :mod:`opt_suite.report.demonstrations`).
        demonstrations_asked: the spec's ``demonstrations.trajectories_per_task`` (a task that
            kept fewer is warned about), or None.
    """

    episodes: EpisodeTable
    spec_name: str
    spec_hash: str
    settings: ReportSpec = ReportSpec()
    methods: tuple[str, ...] | None = None
    pictures: tuple[str, ...] = ()
    incomplete: tuple[str, ...] = ()
    training: TrainingCurves = dataclasses.field(default_factory=dict)
    interaction: InteractionCurves = dataclasses.field(default_factory=dict)
    frame_budget: int | None = None
    demonstrations: tuple[TaskDemonstrations, ...] = ()
    demonstrations_asked: int | None = None


@dataclasses.dataclass(frozen=True, eq=False)
class Analysis:
    """The per-run view of the results: grids, thresholds and metrics per method entry."""

    curves: Mapping[str, LearningCurves]
    thresholds: Mapping[Any, float]
    metrics: Mapping[str, MethodMetrics]

    @property
    def episodes(self) -> int:
        """Episodes per run."""
        return len(next(iter(self.curves.values())).episodes)


def analyse(inputs: ReportInputs, thresholds: Mapping[Any, float] | None = None) -> Analysis:
    """Group the episodes and compute every run's metrics.

    Args:
        inputs: the results.
        thresholds: task -> episodes_to_threshold threshold; None resolves them from the spec's
            ``report.threshold`` or the default rule (see :mod:`opt_suite.report.metrics`).
    """
    curves = learning_curves(inputs.episodes, inputs.methods, inputs.frame_budget)
    s = inputs.settings
    if thresholds is None:
        thresholds = resolve_thresholds(curves, s.threshold, s.final_fraction)
    return Analysis(curves, dict(thresholds), run_metrics(curves, s.final_fraction, thresholds))


def leaderboard(inputs: ReportInputs, analysis: Analysis) -> Leaderboard:
    """The aggregated leaderboard of an analysis."""
    return build_leaderboard(
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
            # Options learned from demonstrations that score nothing test nothing: say so.
            *filter(
                None, [demonstrations_warning(inputs.demonstrations, inputs.demonstrations_asked)]
            ),
        ),
        frame_budget=inputs.frame_budget,
    )


def write_report_files(inputs: ReportInputs, out_dir: str | Path) -> list[Path]:
    """Write :data:`REPORT_FILES` into ``out_dir`` and return their paths, in that order.

    ``fig1a.png`` (Algorithm 1's training curves) follows when ``inputs.training`` has any, and
    ``discovery.png`` (option discovery by interaction) when ``inputs.interaction`` has any.

    Raises:
        ReportDataError: the episodes cannot be reported (empty, incomplete, inconsistent).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    analysis = analyse(inputs)
    board = leaderboard(inputs, analysis)
    fig1a = "fig1a.png" if inputs.training else None
    discovery = "discovery.png" if inputs.interaction else None
    written = [
        write_returns_csv(inputs.episodes, out / "returns.csv", list(analysis.curves)),
        _write_text(
            out / "leaderboard.md",
            "\n".join(
                filter(
                    None,
                    [leaderboard_markdown(board), demonstrations_markdown(inputs.demonstrations)],
                )
            ),
        ),
        write_leaderboard_csv(board, out / "leaderboard.csv"),
        write_json(leaderboard_json(board), out / "leaderboard.json"),
        write_curves_png(analysis.curves, out / "curves.png", inputs.spec_name),
        write_index_html(
            board, out / "index.html", inputs.pictures, fig1a=fig1a, discovery=discovery
        ),
    ]
    if fig1a is not None:
        written.append(write_fig1a_png(inputs.training, out / fig1a, inputs.spec_name))
    if discovery is not None:
        written.append(write_discovery_png(inputs.interaction, out / discovery, inputs.spec_name))
    return written


def _write_text(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path
