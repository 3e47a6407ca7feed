"""A run's :class:`~opt_suite.analysis.diagnosis.Diagnosis` laid out: Markdown and JSON.

``opt-suite diagnose`` computes the diagnoses (:mod:`opt_suite.analysis.diagnosis`: Ĵ's terms
under two policies, segments, terminations) and writes both layouts into the run directory.
Nothing here imports TensorFlow.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from opt_suite.analysis.diagnosis import Diagnosis

__all__ = ["render_markdown", "summary_rows", "to_json"]


def _score_json(score: Any) -> dict[str, Any] | None:
    if score is None:
        return None
    return {
        "jhat": score.total,
        "likelihood_term": score.likelihood_term,
        "termination_term": score.termination_term,
        "kl_term": score.kl_term,
        "kl": score.kl,
        "log_prob_per_step": [float(x) for x in score.log_prob_per_step],
        "terminations_per_step": [float(x) for x in score.terminations_per_step],
    }


def to_json(diagnoses: Sequence[Diagnosis], header: dict[str, Any]) -> dict[str, Any]:
    """Everything, per option set, as plain JSON (``header``: the run and the objective)."""
    return {
        **header,
        "option_sets": [
            {
                "method": d.method,
                "seed": d.seed,
                "options": list(d.options),
                "own_pi": _score_json(d.own),
                "fitted_pi": {
                    **(_score_json(d.fitted) or {}),
                    "adam_steps": d.fit_steps,
                    "converged": d.fit_converged,
                },
                "option_share": round(d.option_share, 4),
                "demonstrations": [dataclasses.asdict(x) for x in d.demos],
            }
            for d in diagnoses
        ],
    }


def _number(value: float | None, digits: int = 2) -> str:
    if value is None:
        return "—"
    return f"{value:.{digits}f}".replace("-", "−")


def _terms(score: Any) -> list[str]:
    if score is None:
        return ["—"] * 4
    return [
        _number(score.total),
        _number(score.likelihood_term),
        _number(score.termination_term, 3),
        _number(score.kl_term, 3),
    ]


def summary_rows(diagnoses: Sequence[Diagnosis]) -> list[dict[str, Any]]:
    """Per method (first-seen order): mean over seeds of Ĵ own/fitted and of the option share."""
    methods = list(dict.fromkeys(d.method for d in diagnoses))
    rows = []
    for method in methods:
        mine = [d for d in diagnoses if d.method == method]
        own = [d.own.total for d in mine if d.own is not None]
        rows.append(
            {
                "method": method,
                "seeds": len(mine),
                "options": sorted({len(d.options) for d in mine}),
                "jhat_own": float(np.mean(own)) if len(own) == len(mine) else None,
                "jhat_fitted": float(np.mean([d.fitted.total for d in mine])),
                "option_share": float(np.mean([d.option_share for d in mine])),
                "terminations_fitted": float(np.mean([d.fitted.termination_term for d in mine])),
            }
        )
    return rows


def render_markdown(diagnoses: Sequence[Diagnosis], header: dict[str, Any]) -> str:
    """``diagnose.md``: the summary, the per-seed terms, then each demonstration's segments."""
    objective = header["objective"]
    lines = [
        f"# Ĵ diagnosis: {header['spec']}",
        "",
        f"Run `{header['run_dir']}` (spec {header['spec_hash'][:12]}). One objective for every "
        f"option set: λ2 = {objective['lambda2']:g}, λ1 = {objective['lambda1']:g}, likelihood "
        f"`{objective['likelihood']}`; Ĵ = λ2·L − T + λ1·KL with L the mean log Pr(h)/|h| and T "
        "the mean expected terminations per step (Theorem 1). *Own π*: the policy over options "
        "the method trained with its options (— when it has none); *π table*: π fitted as a free "
        "table on the demonstrated states with the options frozen (the most Ĵ the options "
        "allow). Segments use the π table.",
        "",
        "## Summary (mean over seeds)",
        "",
        "| method | options | Ĵ, own π | Ĵ, π table | terminations/step, π table | "
        "steps explained by options |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row in summary_rows(diagnoses):
        counts = row["options"]
        span = f"{counts[0]}" if len(counts) == 1 else f"{counts[0]}–{counts[-1]}"
        lines.append(
            f"| {row['method']} | {span} | {_number(row['jhat_own'])} | "
            f"{_number(row['jhat_fitted'])} | {_number(row['terminations_fitted'], 3)} | "
            f"{100 * row['option_share']:.1f}% |"
        )
    lines += [
        "",
        "## Per option set",
        "",
        "| method | seed | options | Ĵ own | λ2·L own | T own | λ1·KL own | Ĵ table | λ2·L table "
        "| T table | λ1·KL table | KL (unweighted) |",
        "|---|---:|---:|" + "---:|" * 9,
    ]
    for d in diagnoses:
        lines.append(
            f"| {d.method} | {d.seed} | {len(d.options)} | "
            + " | ".join(_terms(d.own) + _terms(d.fitted))
            + f" | {_number(d.fitted.kl, 3)} |"
        )
    degenerate = header.get("degenerate_options")
    if degenerate:  # a loud section: kept options that are no options
        lines += ["", "## Degenerate options", ""] + [f"- **{line}**" for line in degenerate]
    lines += ["", "## Which option explains which segment (π table)", ""]
    lines.append(
        "Per demonstration: segments `[start, end) option (mean posterior)`, primitives merged; "
        "terminations at the steps where Pr(T_t = 1 | h) > 1/2."
    )
    for d in diagnoses:
        if not d.options:
            continue
        lines += ["", f"### {d.method}, seed {d.seed}", ""]
        for demo in d.demos:
            parts = [
                f"[{s.start}, {s.end}) {s.option} ({s.probability:.2f})" for s in demo.segments
            ]
            lines.append(
                f"- demo {demo.index} ({demo.task_id}, {demo.steps} steps; options explain "
                f"{100 * demo.option_share:.0f}%, {demo.expected_terminations:.1f} expected "
                f"terminations): " + "; ".join(parts)
            )
    return "\n".join(lines) + "\n"
