"""Reports of a run: leaderboard (Markdown, CSV, JSON), raw returns, learning curves, index.html.

``write_reports(DIR)`` is what ``opt-suite run`` calls at its end and ``opt-suite report DIR`` runs;
everything below it works on plain data (:class:`EpisodeTable`), so it is tested without a store:

* :mod:`~opt_suite.report.episodes` -- the episode table and its per-method learning-curve grids;
* :mod:`~opt_suite.report.metrics` -- per-run metrics (auc, final_return, episodes_to_threshold,
  jump_start, improvement);
* :mod:`~opt_suite.report.normalise` -- per-task normalised scores from the reference returns;
* :mod:`~opt_suite.report.leaderboard` -- aggregation (mean ± s.e., IQM with seed and task CIs,
  both P(improvement)s);
* :mod:`~opt_suite.report.tables`, :mod:`~opt_suite.report.curves`, :mod:`~opt_suite.report.html`
  -- the files;
* :mod:`~opt_suite.report.baseline`, :mod:`~opt_suite.report.gate` -- the CI baseline and the
  regression test of ``opt-suite compare``;
* :mod:`~opt_suite.report.source` -- the adapter from the results store;
* :mod:`~opt_suite.report.core` -- a ``runs.json``'s estimates in one call (:func:`aggregate`);
* :mod:`~opt_suite.report.section`, :mod:`~opt_suite.report.sections` -- the report's sections
  (normalised scores, zero-shot return, discovery cost, cloning fit, CPU seconds, option usage,
  demonstrations kept, degenerate options), each collected and rendered in one module.
"""

from __future__ import annotations

import importlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

# Loaded when first asked for (PEP 562): `opt-suite compare --help` needs the metric names, not
# SciPy and matplotlib, and a help screen should answer in well under a second.
_LAZY = {
    "Estimates": "core",
    "aggregate": "core",
    "Baseline": "baseline",
    "BaselineError": "baseline",
    "export_baseline": "baseline",
    "load_baseline": "baseline",
    "REPORT_FILES": "build",
    "analyse": "build",
    "write_report_files": "build",
    "Analysis": "inputs",
    "ReportInputs": "inputs",
    "EpisodeTable": "episodes",
    "LearningCurves": "episodes",
    "ReportDataError": "episodes",
    "CompareError": "gate",
    "Comparison": "gate",
    "compare_runs": "gate",
    "format_comparison": "gate",
    "HIGHER_IS_BETTER": "metrics",
    "METRICS": "metrics",
}

if TYPE_CHECKING:  # the type checker sees every name as if imported eagerly
    from opt_suite.report.baseline import Baseline, BaselineError, export_baseline, load_baseline
    from opt_suite.report.build import REPORT_FILES, analyse, write_report_files
    from opt_suite.report.core import Estimates, aggregate
    from opt_suite.report.episodes import EpisodeTable, LearningCurves, ReportDataError
    from opt_suite.report.gate import CompareError, Comparison, compare_runs, format_comparison
    from opt_suite.report.inputs import Analysis, ReportInputs
    from opt_suite.report.metrics import HIGHER_IS_BETTER, METRICS


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value  # once loaded, a plain attribute
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "HIGHER_IS_BETTER",
    "METRICS",
    "REPORT_FILES",
    "Analysis",
    "Baseline",
    "BaselineError",
    "CompareError",
    "Comparison",
    "EpisodeTable",
    "Estimates",
    "LearningCurves",
    "ReportDataError",
    "ReportInputs",
    "aggregate",
    "analyse",
    "compare_runs",
    "export_baseline",
    "format_comparison",
    "load_baseline",
    "write_report_files",
    "write_reports",
]

logger = logging.getLogger(__name__)


def write_reports(directory: str | Path, spec_hash: str | None = None) -> list[Path]:
    """Write every report file of the latest run in ``directory`` into ``directory``.

    ``spec_hash``: report the latest run of that spec (what ``opt-suite run`` passes: its own).

    Warnings (cells left out because they failed or never finished) are logged to this module's
    logger.

    Returns:
        The written files, in the order of :data:`REPORT_FILES`.

    Raises:
        opt_suite.store.StoreError: ``directory`` holds no results store.
        ReportDataError: there are no (complete) results to report.
    """
    from opt_suite.report.build import write_report_files
    from opt_suite.report.source import load_inputs
    from opt_suite.report.stale import report_owner, set_aside_stale

    inputs, warnings = load_inputs(directory, spec_hash)
    for message in warnings:
        logger.warning(message)
    previous = report_owner(Path(directory))
    written = write_report_files(inputs, directory)
    for message in set_aside_stale(Path(directory), inputs.spec_hash, written, previous):
        logger.warning(message)
    return written
