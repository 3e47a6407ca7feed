"""What a report is computed from (``ReportInputs``) and its per-run view (``Analysis``).

Plain typed records, apart from the pipeline (:mod:`opt_suite.report.build`) that fills and
renders them, so that the modules building on them -- the baseline file, the CI gate, its rates --
import the records, not the pipeline that imports them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from opt_suite.report.episodes import EpisodeTable, LearningCurves
from opt_suite.report.fig1a import TrainingCurves
from opt_suite.report.interaction_curves import InteractionCurves
from opt_suite.report.metrics import MethodMetrics
from opt_suite.report.normalise import References
from opt_suite.spec.schema import ReportSpec

__all__ = ["Analysis", "ReportInputs"]


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
        references: the uniform-random policy's and the expert's returns on every (seed, test
            task) (None: no normalised scores; see :mod:`opt_suite.report.normalise`).
        frame_unit: what the ``frames`` column counts: "emulator frames" on Atari, where an
            action repeats for several frames, else "env steps" (all sub-envs together).
        sections: section key -> its data, for each report section the run has data for
            (:func:`opt_suite.report.sections.collect_sections`: the zero-shot return, the
            discovery cost -- also ``curves_with_discovery.png`` --, the cloning fit, CPU
            seconds, the demonstrations kept, degenerate options); a section without data is
            left out.
        tasks_per_seed: the test tasks were drawn per seed (``tasks.test_per_seed``): task k of
            one seed is not task k of another, which the tables' wording says.
        discovery_warnings: the warnings discovery cells recorded
            (``opt_suite.methods.base.DISCOVERY_WARNINGS``), each a caveat of the leaderboard.
        reference_warnings: why the run's reference returns could not be used (a file that
            records an error, fails its digest, or lacks a stored seed), each a caveat.
        task_draw: test split -> digest of the test tasks drawn there
            (:func:`opt_suite.report.task_draw.drawn_test_tasks`; empty: not known), recorded in
            the baseline so that a comparison never pairs different tasks.
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
    references: References | None = None
    frame_unit: str = "env steps"
    tasks_per_seed: bool = False
    sections: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    discovery_warnings: tuple[str, ...] = ()
    reference_warnings: tuple[str, ...] = ()
    task_draw: Mapping[str, str] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True, eq=False)
class Analysis:
    """The per-run view of the results: grids, thresholds and metrics per method entry."""

    curves: Mapping[str, LearningCurves]
    thresholds: Mapping[Any, float]
    metrics: Mapping[str, MethodMetrics]
    threshold_rule: str = ""

    @property
    def episodes(self) -> int:
        """Episodes per run."""
        return len(next(iter(self.curves.values())).episodes)
