"""Text outputs: ``returns.csv``, ``leaderboard.md``, ``leaderboard.csv``, ``leaderboard.json``."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from opt_suite.files_guard import InputError, read_bounded
from opt_suite.report.episodes import COLUMNS, EpisodeTable, label_key
from opt_suite.report.leaderboard import Leaderboard
from opt_suite.report.metrics import HIGHER_IS_BETTER, SMOOTHING_WINDOW

__all__ = [
    "LEADERBOARD_CSV_COLUMNS",
    "leaderboard_json",
    "leaderboard_markdown",
    "write_leaderboard_csv",
    "write_returns_csv",
]

LEADERBOARD_CSV_COLUMNS = (
    "method",
    "metric",
    "runs",
    "mean",
    "se",
    "iqm",
    "ci_low",
    "ci_high",
    "p_improvement",
    "p_improvement_ci_low",
    "p_improvement_ci_high",
)

ESTIMATE_FIELDS = ("mean", "se", "iqm", "ci_low", "ci_high")


def _finite(x: float) -> float | None:
    """JSON has no NaN: an undefined number (e.g. the s.e. of a single run) becomes null."""
    return None if x is None or math.isnan(x) else x


def write_returns_csv(table: EpisodeTable, path: Path, methods: list[str] | None = None) -> Path:
    """Every episode, sorted by method entry (spec order), seed, task and episode.

    ``task`` is the test task's index, ``episode`` the stored 0-based episode number and ``frames``
    the emulator frames the run had used by the end of that episode.
    """
    order = {m: i for i, m in enumerate(methods or table.methods())}
    rows = sorted(
        zip(
            table.method.tolist(),
            table.seed.tolist(),
            table.task.tolist(),
            table.episode.tolist(),
            table.returns.tolist(),
            table.steps.tolist(),
            table.frames.tolist(),
            strict=True,
        ),
        key=lambda r: (order.get(r[0], len(order)), r[0], r[1], label_key(r[2]), r[3]),
    )
    with path.open("w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(COLUMNS)
        # repr() of a float round-trips exactly, so re-analysis sees the stored numbers.
        writer.writerows((m, s, t, e, repr(float(r)), n, k) for m, s, t, e, r, n, k in rows)
    return path


def leaderboard_json(board: Leaderboard) -> dict[str, Any]:
    """The leaderboard as JSON.

    ``{"spec": {name, hash}, "methods": {NAME: {METRIC: {mean, se, iqm, ci_low, ci_high}}}}``.

    ``warnings`` lists what makes the numbers mean less than they seem
    (:mod:`opt_suite.report.caveats`). Two more keys: ``probability_of_improvement``
    (``{"baseline", "methods": {NAME: {METRIC: {probability, ci_low, ci_high}}}}``, entries other
    than the baseline) and ``protocol`` (seeds, tasks, episodes, bootstrap resamples, confidence,
    per-task thresholds, which metrics are better when lower). Methods appear best first.
    """
    methods = {
        row.method: {
            k: {f: _finite(getattr(row.estimates[k], f)) for f in ESTIMATE_FIELDS}
            for k in board.metrics
        }
        for row in board.rows
    }
    improvement = {
        row.method: {
            k: {"probability": v.probability, "ci_low": v.ci_low, "ci_high": v.ci_high}
            for k, v in row.improvement.items()
        }
        for row in board.rows
        if row.improvement
    }
    return {
        "spec": {"name": board.spec_name, "hash": board.spec_hash},
        "warnings": list(board.warnings),
        "methods": methods,
        "probability_of_improvement": {"baseline": board.baseline, "methods": improvement},
        "protocol": {
            "seeds": board.seeds,
            "tasks": board.tasks,
            "episodes": board.episodes,
            **({} if board.frame_budget is None else {"frames": board.frame_budget}),
            "bootstrap": board.bootstrap,
            "confidence": board.confidence,
            "final_fraction": board.final_fraction,
            "threshold_window": SMOOTHING_WINDOW,
            "lower_is_better": [k for k in board.metrics if not HIGHER_IS_BETTER[k]],
            "thresholds": {str(t): v for t, v in board.thresholds.items()},
        },
    }


def write_leaderboard_csv(board: Leaderboard, path: Path) -> Path:
    """One row per (method entry, metric); the improvement columns are empty for the baseline."""
    with path.open("w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(LEADERBOARD_CSV_COLUMNS)
        for row in board.rows:
            for k in board.metrics:
                e = row.estimates[k]
                p = row.improvement.get(k)
                poi = ("", "", "") if p is None else (p.probability, p.ci_low, p.ci_high)
                writer.writerow(
                    (
                        row.method,
                        k,
                        row.runs,
                        *(_csv_number(getattr(e, f)) for f in ESTIMATE_FIELDS),
                    )
                    + tuple(poi)
                )
    return path


def _csv_number(x: float) -> str:
    return "" if math.isnan(x) else repr(float(x))


def fmt(x: float, digits: int = 2) -> str:
    """A number for people: fixed decimals, ``n/a`` when undefined."""
    return "n/a" if x is None or not np.isfinite(x) else f"{x:.{digits}f}"


def table_cells(board: Leaderboard) -> tuple[list[str], list[list[str]]]:
    """The leaderboard table as plain-text cells: (header, one row per method entry)."""
    pct = round(100 * board.confidence)
    header = ["method"]
    for k in board.metrics:
        arrow = "↑" if HIGHER_IS_BETTER[k] else "↓"
        header += [f"{k} {arrow}: mean ± s.e.", f"{k}: IQM [{pct}% CI]"]
    if board.baseline is not None:
        header.append(f"P({board.primary} > {board.baseline}) [{pct}% CI]")
    rows = []
    for row in board.rows:
        cells = [row.method]
        for k in board.metrics:
            e = row.estimates[k]
            digits = 1 if k == "episodes_to_threshold" else 2
            cells.append(f"{fmt(e.mean, digits)} ± {fmt(e.se, digits)}")
            cells.append(
                f"{fmt(e.iqm, digits)} [{fmt(e.ci_low, digits)}, {fmt(e.ci_high, digits)}]"
            )
        if board.baseline is not None:
            p = row.improvement.get(board.primary)
            cells.append(
                "—" if p is None else f"{p.probability:.2f} [{p.ci_low:.2f}, {p.ci_high:.2f}]"
            )
        rows.append(cells)
    return header, rows


def budget_text(board: Leaderboard) -> str:
    """``100 episodes`` or ``1,000,000 emulator frames`` (what each run was given)."""
    if board.frame_budget is None:
        return f"{board.episodes} episodes"
    return f"{board.frame_budget:,} emulator frames"


def leaderboard_markdown(board: Leaderboard) -> str:
    """The table people paste into papers, with a header saying what was measured."""
    header, rows = table_cells(board)
    lines = [
        f"# Leaderboard: {board.spec_name}",
        "",
        f"Spec `{board.spec_name}` (hash `{board.spec_hash}`): {board.seeds} seeds × {board.tasks}"
        f" test tasks × {budget_text(board)} per method entry; intervals are"
        f" {round(100 * board.confidence)}% stratified-bootstrap percentile CIs ({board.bootstrap}"
        " resamples of seeds within tasks).",
        "",
        *(f"> **Warning:** {w}\n" for w in board.warnings),
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|",
    ]
    lines += ["| " + " | ".join(cells) + " |" for cells in rows]
    thresholds = sorted(board.thresholds.items(), key=lambda kv: label_key(kv[0]))
    shown = ", ".join(f"{t}: {v:.2f}" for t, v in thresholds[:8])
    more = f", … ({len(thresholds)} tasks)" if len(thresholds) > 8 else ""
    if board.frame_budget is None:
        definitions = (
            "Metrics per (seed, task) run: **auc** = mean return over all episodes (area under the"
            " learning curve per episode); **final_return** = mean return of the last"
            f" {100 * board.final_fraction:g}% of the episodes;"
            f" **episodes_to_threshold** = first episode whose {SMOOTHING_WINDOW}-episode trailing"
            f" mean return reaches the task's threshold ({shown}{more}), {board.episodes + 1} when"
            " never reached."
        )
    else:
        step = board.frame_budget / board.episodes
        definitions = (
            f"Budget in frames: each run is read at {board.episodes} evenly spaced points of its"
            f" {board.frame_budget:,} frames (every {step:,.0f} frames), each point holding the"
            " return of the run's latest finished episode (before its first episode ended: that"
            " episode's). Metrics per (seed, task) run: **auc** = mean over the points (area under"
            " the return-vs-frames curve divided by the budget); **final_return** = mean over the"
            f" last {100 * board.final_fraction:g}% of the frames;"
            f" **episodes_to_threshold** = first point (in units of {step:,.0f} frames) whose"
            f" {SMOOTHING_WINDOW}-point trailing mean reaches the task's threshold ({shown}{more}),"
            f" {board.episodes + 1} when never reached."
        )
    lines += [
        "",
        f"{definitions} IQM = 25% trimmed mean over all seeds × tasks. Rows are sorted by"
        f" {board.primary} IQM.",
        "",
    ]
    return "\n".join(lines)


def leaderboard_warnings(directory: Path) -> list[str]:
    """The warnings of the leaderboard written in ``directory`` (empty if none or unreadable)."""
    try:
        data = read_bounded(Path(directory) / "leaderboard.json", 1 << 26, "leaderboard file")
        doc = json.loads(data)
    except (InputError, ValueError):
        return []
    warnings = doc.get("warnings") if isinstance(doc, dict) else None
    return [str(w) for w in warnings] if isinstance(warnings, list) else []


def write_json(data: dict[str, Any], path: Path) -> Path:
    path.write_text(json.dumps(data, indent=2, allow_nan=False) + "\n")
    return path
