"""Text outputs: ``returns.csv``, ``leaderboard.md``, ``leaderboard.csv``, ``leaderboard.json``.

Length (over the 400 lines the tree aims for): every table of the leaderboard in its three
forms (Markdown, CSV, JSON) reads one row type; the forms must stay column for column the same,
which one module makes visible.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

from opt_suite.files_guard import InputError
from opt_suite.report.episodes import COLUMNS, EpisodeTable, label_key
from opt_suite.report.leaderboard import Improvement, Leaderboard
from opt_suite.report.metrics import HIGHER_IS_BETTER, JUMP_START_FRACTION, SMOOTHING_WINDOW
from opt_suite.report.section import ESTIMATE_FIELDS, estimate_json, fmt, iqm_cell, markdown_table
from opt_suite.report.sections import section_columns, section_json, section_markdown
from opt_suite.report.stale import read_report_json
from opt_suite.report.validity import Validity
from opt_suite.report.verdicts import margins_json
from opt_suite.verdict import familywise_statement

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
    "task_ci_low",
    "task_ci_high",
    "p_improvement_task_ci_low",
    "p_improvement_task_ci_high",
    "paired_p_improvement",
    "paired_p_ci_low",
    "paired_p_ci_high",
    "paired_p_task_ci_low",
    "paired_p_task_ci_high",
)

IMPROVEMENT_FIELDS = ("probability", "ci_low", "ci_high", "task_ci_low", "task_ci_high")
#: The metrics of the main table; the others (the auc's split) have a table of their own.
MAIN_METRICS = ("auc", "final_return", "episodes_to_threshold")


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
    (``{"baseline", "methods": {NAME: {METRIC: {probability, ci_low, ci_high, task_ci_low,
    task_ci_high}}}}``, entries other than the baseline), ``paired_probability_of_improvement``
    (the same shape; the paired P over (seed, task)) and ``protocol`` (seeds, tasks, episodes,
    bootstrap resamples, confidence, per-task thresholds and their rule, the unit of
    episodes_to_threshold, which metrics are better when lower, and ``intervals``: what each
    interval resamples). ``ci_*`` is the stratified bootstrap over seeds, ``task_ci_*`` the task
    bootstrap. Methods appear best first. Each report section (:mod:`opt_suite.report.sections`)
    adds its own keys after ``verdicts``: with reference returns, ``normalised`` holds
    ``{"definition", "tasks", "pairs", "of_pairs", "methods": {NAME: {METRIC: estimate}}}`` for
    the return metrics (``pairs`` of ``of_pairs`` (seed, task) pairs aggregated; the rest have no
    scale; :mod:`opt_suite.report.normalised_section`), with zero-shot episodes
    ``zero_shot_return`` is ``{NAME: {mean, se, runs, episodes}}``: the learner's untrained policy
    over each option set (:mod:`opt_suite.report.zero_shot`). ``verdicts``:
    ``{"baseline", "metric", "familywise", "methods": {NAME: verdict}}``, the one rule's verdict
    of each entry against the baseline (:meth:`opt_suite.verdict.Verdict.as_dict`); the margins
    it used are ``protocol.equivalence``. With ``report.positive_controls``, ``verdicts.validity``
    holds the validity check (:meth:`opt_suite.report.validity.Validity.as_dict`): each positive
    control against the cloned option, and ``caveat`` (also in ``warnings``) when none is better.
    """
    methods = {
        row.method: {k: estimate_json(row.estimates[k]) for k in board.metrics}
        for row in board.rows
    }
    improvement = {
        row.method: {k: _improvement_json(v) for k, v in row.improvement.items()}
        for row in board.rows
        if row.improvement
    }
    paired = {
        row.method: {k: _improvement_json(v) for k, v in row.paired.items()}
        for row in board.rows
        if row.paired
    }
    verdicts = {row.method: row.verdict.as_dict() for row in board.rows if row.verdict}
    validity = {} if board.validity is None else {"validity": board.validity.as_dict()}
    return {
        "spec": {"name": board.spec_name, "hash": board.spec_hash},
        "warnings": list(board.warnings),
        "methods": methods,
        "probability_of_improvement": {"baseline": board.baseline, "methods": improvement},
        "paired_probability_of_improvement": {"baseline": board.baseline, "methods": paired},
        "verdicts": {
            "baseline": board.baseline,
            "metric": "auc",
            "familywise": familywise_statement(board.verdicts) if board.verdicts else "",
            "methods": verdicts,
            **validity,
        },
        **section_json(board.sections),
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
            "threshold_rule": board.threshold_rule,
            "threshold_unit": "episodes" if board.frame_budget is None else "frames",
            "jump_start_fraction": JUMP_START_FRACTION,
            "test_tasks": "drawn per seed" if board.tasks_per_seed else "shared by every seed",
            "intervals": _intervals_json(board.tasks_per_seed),
            "equivalence": margins_json(board.margins),
        },
    }


def _intervals_json(per_seed: bool) -> dict[str, str]:
    """What each interval and P resamples or pairs (``protocol.intervals``)."""
    # Drawn per seed, column k of the score matrix holds each seed's own k-th test task (a task
    # slot): resampling seeds within it draws new seeds *and* new tasks.
    task = "task slot (each seed's k-th test task, drawn per seed)" if per_seed else "task"
    return {
        "ci": f"stratified bootstrap: seeds resampled with replacement within each {task}",
        "task_ci": f"task bootstrap: {task}s resampled with replacement, then seeds within"
        f" each drawn {task}",
        "probability_of_improvement": f"per {task}, the fraction of all (run of X, run of"
        f" baseline) pairs where X scores higher (ties 1/2), averaged over {task}s",
        "paired_probability_of_improvement": "the fraction of (seed, task) pairs where X's"
        " run scores higher than the baseline's run of the same seed and task (ties 1/2);"
        " its intervals resample the pairs as units",
    }


def _improvement_json(v: Improvement) -> dict[str, float]:
    return {f: getattr(v, f) for f in IMPROVEMENT_FIELDS}


def write_leaderboard_csv(board: Leaderboard, path: Path) -> Path:
    """One row per (method entry, metric); the improvement columns are empty for the baseline.

    With reference returns, rows ``normalised_<metric>`` follow for the return metrics (their
    improvement columns are empty: P does not depend on the scale).
    """
    with path.open("w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(LEADERBOARD_CSV_COLUMNS)
        for row in board.rows:
            named = [
                (k, row.estimates[k], row.improvement.get(k), row.paired.get(k))
                for k in board.metrics
            ]
            named += [(f"normalised_{k}", e, None, None) for k, e in row.normalised.items()]
            for k, e, p, q in named:
                numbers = [_csv_number(getattr(e, f)) for f in ESTIMATE_FIELDS]
                writer.writerow(
                    (row.method, k, row.runs, *numbers[:5], *_poi(p)[:3], *numbers[5:])
                    + _poi(p)[3:]
                    + _poi(q)
                )
    return path


def _poi(p: Improvement | None) -> tuple[Any, ...]:
    return ("",) * 5 if p is None else tuple(getattr(p, f) for f in IMPROVEMENT_FIELDS)


def _csv_number(x: float) -> str:
    return "" if math.isnan(x) else repr(float(x))


def metric_label(board: Leaderboard, metric: str) -> str:
    """A metric's name in the tables (``steps_to_threshold`` on a budget of env steps)."""
    if metric == "episodes_to_threshold" and board.frame_budget is not None:
        return "frames_to_threshold" if "frames" in board.frame_unit else "steps_to_threshold"
    return metric


def _p_cell(p: Improvement | None) -> str:
    if p is None:
        return "—"
    return (
        f"{p.probability:.2f} [{p.ci_low:.2f}, {p.ci_high:.2f}]"
        f" [{p.task_ci_low:.2f}, {p.task_ci_high:.2f}]"
    )


def _digits(board: Leaderboard, metric: str) -> int:
    if metric != "episodes_to_threshold":
        return 2
    return 1 if board.frame_budget is None else 0


def table_cells(board: Leaderboard) -> tuple[list[str], list[list[str]]]:
    """The main leaderboard table as plain-text cells: (header, one row per method entry).

    Every interval cell shows two: ``[seeds CI] [tasks CI]``.
    """
    pct = round(100 * board.confidence)
    shown = [k for k in MAIN_METRICS if k in board.metrics]
    header = ["method"]
    for k in shown:
        arrow = "↑" if HIGHER_IS_BETTER[k] else "↓"
        label = metric_label(board, k)
        header += [f"{label} {arrow}: mean ± s.e.", f"{label}: IQM [{pct}% CI seeds] [tasks]"]
    if board.baseline is not None:
        header.append(f"P({board.primary} > {board.baseline}) [seeds] [tasks]")
        header.append(f"paired P({board.primary} > {board.baseline}) [seeds] [tasks]")
    columns = section_columns(board.sections)
    header += [title for title, _ in columns]
    rows = []
    for row in board.rows:
        cells = [row.method]
        for k in shown:
            e = row.estimates[k]
            digits = _digits(board, k)
            cells.append(f"{fmt(e.mean, digits)} ± {fmt(e.se, digits)}")
            cells.append(iqm_cell(e, digits))
        if board.baseline is not None:
            cells.append(_p_cell(row.improvement.get(board.primary)))
            cells.append(_p_cell(row.paired.get(board.primary)))
        cells += [column.get(row.method, "—") for _, column in columns]
        rows.append(cells)
    return header, rows


def _split_tables(board: Leaderboard) -> list[tuple[str, list[str], list[list[str]]]]:
    """The auc split: jump start and improvement (none when the metrics lack them)."""
    pct = round(100 * board.confidence)
    split = [k for k in ("jump_start", "improvement") if k in board.metrics]
    if not split:
        return []
    header = ["method"] + [f"{k} ↑: IQM [{pct}% CI seeds] [tasks]" for k in split]
    rows = [[r.method] + [iqm_cell(r.estimates[k], 2) for k in split] for r in board.rows]
    return [("The auc split: jump start and improvement", header, rows)]


def _verdict_tables(board: Leaderboard) -> list[tuple[str, list[str], list[list[str]]]]:
    """The validity check (first: it says whether the verdicts can mean much), the verdicts."""
    tables = []
    if board.verdicts:
        family = familywise_statement(board.verdicts)
        if board.validity is not None:  # first: it says whether the verdicts below can mean much
            tables.append(_validity_table(board.validity, family))
        if any(r.verdict for r in board.rows):
            title = (
                f"Verdicts against {board.baseline} on auc (the one rule of"
                f" docs/results-and-gate.md, Verdicts: the interval resamples seeds as the unit)."
                f" {family}"
            )
            # plain text, no Markdown emphasis: the HTML report shows the same cells
            rows = [[r.method, r.verdict.text()] for r in board.rows if r.verdict]
            tables.append((title, ["method", "verdict"], rows))
    elif board.validity is not None:  # no control could be judged: the caveat says why
        tables.append(_validity_table(board.validity, ""))
    return tables


def _validity_table(validity: Validity, family: str) -> tuple[str, list[str], list[list[str]]]:
    """The validity check: each positive control against the cloned option."""
    said = validity.caveat() or (
        "This family can discriminate: a positive control is better than the cloned option"
    )
    title = (
        f"Validity check: positive controls against the cloned option {validity.clone} on auc."
        f" {said}. {family}"
    ).rstrip()
    rows = [[name, v.text()] for name, v in validity.verdicts.items()]
    rows += [[line.split(" ", 1)[0], line] for line in validity.missing]
    return title, ["positive control", f"verdict against {validity.clone}"], rows


def intervals_text(board: Leaderboard) -> str:
    """What the two intervals of every cell resample."""
    if board.tasks_per_seed:
        return (
            f"Intervals are {round(100 * board.confidence)}% percentile bootstrap CIs"
            f" ({board.bootstrap} resamples), two per cell. The test tasks were drawn per seed:"
            " task k of one seed is not task k of another, so [seeds] (seeds resampled with"
            " replacement within each task slot) already covers new seeds on new tasks, and"
            " [tasks] resamples the task slots with replacement and then seeds within them."
        )
    return (
        f"Intervals are {round(100 * board.confidence)}% percentile bootstrap CIs"
        f" ({board.bootstrap} resamples), two per cell: [seeds] resamples seeds with replacement"
        " within each task (the uncertainty of rerunning these tasks), [tasks] resamples the test"
        " tasks with replacement and then seeds within them (also the choice of test tasks)."
    )


def budget_text(board: Leaderboard) -> str:
    """``100 episodes`` or ``1,000,000 env steps`` (what each run was given, in its unit)."""
    if board.frame_budget is None:
        return f"{board.episodes} episodes"
    return f"{board.frame_budget:,} {board.frame_unit}"


def leaderboard_markdown(board: Leaderboard) -> str:
    """The table people paste into papers, with a header saying what was measured."""
    header, rows = table_cells(board)
    lines = [
        f"# Leaderboard: {board.spec_name}",
        "",
        f"Spec `{board.spec_name}` (hash `{board.spec_hash}`): {board.seeds} seeds × {board.tasks}"
        f" test tasks × {budget_text(board)} per method entry. {intervals_text(board)}",
        "",
        *(f"> **Warning:** {w}\n" for w in board.warnings),
        *markdown_table(header, rows),
    ]
    for title, extra_header, extra_rows in _split_tables(board):
        lines += ["", f"**{title}**", "", *markdown_table(extra_header, extra_rows)]
    for part in section_markdown(board.sections, {}, "tables"):  # e.g. the normalised scores
        lines += ["", part]
    for title, extra_header, extra_rows in _verdict_tables(board):
        lines += ["", f"**{title}**", "", *markdown_table(extra_header, extra_rows)]
    thresholds = sorted(board.thresholds.items(), key=lambda kv: label_key(kv[0]))
    shown = ", ".join(f"{t}: {v:.2f}" for t, v in thresholds[:8])
    more = f", … ({len(thresholds)} tasks)" if len(thresholds) > 8 else ""
    if board.frame_budget is None:
        definitions = (
            "Metrics per (seed, task) run: **auc** = mean return over all episodes (area under the"
            " learning curve per episode); **final_return** = mean return of the last"
            f" {100 * board.final_fraction:g}% of the episodes;"
            f" **episodes_to_threshold** = first episode whose {SMOOTHING_WINDOW}-episode trailing"
            f" mean return reaches the task's threshold ({shown}{more}; {board.threshold_rule}),"
            f" {board.episodes + 1} when never reached."
        )
    else:
        step = board.frame_budget / board.episodes
        unit = board.frame_unit
        definitions = (
            f"Budget in {unit}: each run is read at {board.episodes} evenly spaced points of its"
            f" {board.frame_budget:,} {unit} (every {step:,.0f}), each point holding the"
            " return of the run's latest finished episode (before its first episode ended: that"
            " episode's). Metrics per (seed, task) run: **auc** = mean over the points (area under"
            f" the return-vs-{unit} curve divided by the budget); **final_return** = mean over the"
            f" last {100 * board.final_fraction:g}% of the {unit};"
            f" **{metric_label(board, 'episodes_to_threshold')}** = the count of {unit} at which"
            f" the {SMOOTHING_WINDOW}-point trailing mean first reaches the task's threshold"
            f" ({shown}{more}; {board.threshold_rule}), {board.frame_budget + step:,.0f} when never"
            " reached."
        )
    p_text = (
        ""
        if board.baseline is None
        else " P(X > Y) = per test task, the fraction of all pairs (run of X, run of Y) in which"
        " X's run scores higher (ties count 1/2), averaged over the tasks; paired P = the fraction"
        " of (seed, task) pairs in which X's run beats Y's run of the same seed and task (runs of"
        " one spec share the learner's random numbers on a seed and task)."
    )
    lines += [
        "",
        f"{definitions} **jump_start** = mean return over the first"
        f" {100 * JUMP_START_FRACTION:g}% of the budget; **improvement** = mean return over the"
        f" rest minus jump_start. IQM = 25% trimmed mean over all seeds × tasks.{p_text} Rows"
        f" are sorted by {board.primary} IQM.",
        "",
    ]
    return "\n".join(lines)


def leaderboard_warnings(directory: Path) -> list[str]:
    """The warnings of the leaderboard written in ``directory`` (empty if none or unreadable)."""
    try:
        doc = read_report_json(Path(directory) / "leaderboard.json", "leaderboard file")
    except InputError:
        return []
    warnings = doc.get("warnings") if isinstance(doc, dict) else None
    return [str(w) for w in warnings] if isinstance(warnings, list) else []


def write_json(data: dict[str, Any], path: Path) -> Path:
    path.write_text(json.dumps(data, indent=2, allow_nan=False) + "\n")
    return path
