"""The reports of a sweep run: one report folder per variant and one summary table across them.

A sweep run (``opt-suite run`` on a spec with ``sweep:``) runs every variant into the same results
store, so a cell shared by several variants (same inputs, same content hash) is computed once.
``sweep.json`` in the run folder names the variants (name, values, spec hash); from it:

- ``variants/<name>/``: the variant's own report (leaderboard, curves, fig1a, index.html), from the
  store's view of that variant's spec hash;
- ``sweep.md`` and ``sweep.csv``: one row per (variant, method entry): auc IQM with its 95% CI and
  P(auc > baseline) with its CI, read from the variants' ``leaderboard.json``.
"""

from __future__ import annotations

import csv
import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from opt_suite.files_guard import InputError, output_file, read_bounded
from opt_suite.report.stale import read_report_json

__all__ = [
    "SWEEP_MANIFEST",
    "is_sweep_run",
    "read_manifest",
    "sweep_rows",
    "sweep_markdown",
    "write_manifest",
    "write_sweep_reports",
]

SWEEP_MANIFEST = "sweep.json"
logger = logging.getLogger(__name__)


MAX_MANIFEST_BYTES = 64 << 20  # names, values and hashes of the variants: kilobytes


def is_sweep_run(directory: str | Path) -> bool:
    """Whether ``directory`` holds a sweep run (it has a ``sweep.json``)."""
    return (Path(directory) / SWEEP_MANIFEST).is_file()


def write_manifest(
    directory: str | Path, spec_name: str, variants: Sequence[Mapping[str, Any]]
) -> Path:
    """Write ``sweep.json``: the base spec's name and, per variant, name, values and spec hash."""
    path = output_file(Path(directory) / SWEEP_MANIFEST, "the sweep manifest")
    doc = {"format": "opt-suite-sweep", "version": 1, "spec": spec_name, "variants": list(variants)}
    path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


def whole_sweep_problem(directory: str | Path, verb: str) -> str | None:
    """Why ``directory`` is not one run to ``verb`` (a sweep: name a variant), else None.

    A sweep run's latest run is only its last variant, so commands that read one run make the
    caller choose a variant with ``--spec`` (its hash prefix, listed here).
    """
    if not is_sweep_run(directory):
        return None
    variants = read_manifest(directory)["variants"]
    listing = "; ".join(f"{v['name']} (hash {str(v['spec_hash'])[:12]})" for v in variants)
    return f"{directory} is a sweep run: {verb} one variant with --spec HASH_PREFIX ({listing})"


def read_manifest(directory: str | Path) -> dict[str, Any]:
    """``sweep.json`` of ``directory``, checked.

    Raises:
      ReportDataError: the file is not a sweep manifest.
    """
    from opt_suite.report.episodes import ReportDataError

    path = Path(directory) / SWEEP_MANIFEST
    try:
        doc = json.loads(read_bounded(path, MAX_MANIFEST_BYTES, "sweep manifest").decode("utf-8"))
    except (InputError, ValueError) as exc:
        raise ReportDataError(f"{path}: cannot read the sweep manifest: {exc}") from None
    variants = doc.get("variants") if isinstance(doc, dict) else None
    if doc.get("format") != "opt-suite-sweep" or not isinstance(variants, list):
        raise ReportDataError(f"{path}: not an opt-suite sweep manifest")
    for v in variants:
        if not (isinstance(v, dict) and {"name", "values", "spec_hash"} <= set(v)):
            raise ReportDataError(f"{path}: a variant without name, values and spec_hash: {v!r}")
    return doc


def write_sweep_reports(directory: str | Path) -> list[Path]:
    """Every variant's report under ``variants/<name>/``, then ``sweep.md`` and ``sweep.csv``.

    A variant without results yet is left out of the summary with a logged warning.

    Raises:
      ReportDataError: no variant has results to report, or the manifest is unreadable.
    """
    from opt_suite.report.build import write_report_files
    from opt_suite.report.episodes import ReportDataError
    from opt_suite.report.source import load_inputs
    from opt_suite.store import StoreError

    directory = Path(directory)
    manifest = read_manifest(directory)
    written: list[Path] = []
    boards: list[tuple[Mapping[str, Any], dict[str, Any]]] = []
    for variant in manifest["variants"]:
        out = directory / "variants" / variant["name"]
        try:
            inputs, warnings = load_inputs(directory, spec_hash=variant["spec_hash"])
        except (StoreError, ReportDataError) as exc:
            logger.warning("variant %s left out: %s", variant["name"], exc)
            continue
        for message in warnings:
            logger.warning("variant %s: %s", variant["name"], message)
        written += write_report_files(inputs, out)
        board = read_report_json(out / "leaderboard.json", "a variant's leaderboard")
        if not isinstance(board, dict):
            raise ReportDataError(f"{out / 'leaderboard.json'}: not a leaderboard (a JSON object)")
        boards.append((variant, board))
    if not boards:
        raise ReportDataError(f"{directory}: no sweep variant has results to report yet")
    rows = sweep_rows(boards)
    md = output_file(directory / "sweep.md", "a report file")
    flagged = [(v["name"], w) for v, board in boards for w in board.get("warnings", [])]
    md.write_text(sweep_markdown(manifest["spec"], rows, warnings=flagged), encoding="utf-8")
    table = output_file(directory / "sweep.csv", "a report file")
    with table.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return [*written, md, table]


def sweep_rows(
    boards: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]], metric: str = "auc"
) -> list[dict[str, Any]]:
    """One row per (variant, method entry) from (manifest variant, leaderboard.json) pairs."""
    rows = []
    for variant, board in boards:
        improvement = board.get("probability_of_improvement") or {}
        baseline = improvement.get("baseline")
        for method, metrics in board["methods"].items():
            m = metrics[metric]
            p = (improvement.get("methods") or {}).get(method, {}).get(metric)
            rows.append(
                {
                    "variant": variant["name"],
                    "method": method,
                    f"{metric}_iqm": m["iqm"],
                    f"{metric}_ci_low": m["ci_low"],
                    f"{metric}_ci_high": m["ci_high"],
                    "baseline": baseline or "",
                    "p_improvement": "" if p is None else p["probability"],
                    "p_ci_low": "" if p is None else p["ci_low"],
                    "p_ci_high": "" if p is None else p["ci_high"],
                }
            )
    return rows


def sweep_markdown(
    spec_name: str,
    rows: Sequence[Mapping[str, Any]],
    metric: str = "auc",
    warnings: Sequence[tuple[str, str]] = (),
) -> str:
    """The summary table across variants, as Markdown.

    ``warnings``: ``(variant, warning)`` pairs from the variants' own leaderboards, listed after
    the table; the rows of a variant that has any are flagged, so that e.g. a row computed from
    fewer seeds because cells failed never reads like the others.
    """
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    baseline = next((r["baseline"] for r in rows if r["baseline"]), None)
    lines = [
        f"# Sweep: {spec_name}",
        "",
        f"{len(variants)} variants; each has its own report under `variants/<name>/`. "
        f"{metric} IQM with its 95% stratified-bootstrap CI"
        + (f"; P({metric} > {baseline}) with its CI." if baseline else "."),
        "",
        f"| variant | method | {metric}: IQM [95% CI] | P({metric} > {baseline or 'baseline'}) |",
        "|---|---|---:|---:|",
    ]
    for r in rows:
        p = (
            "—"
            if r["p_improvement"] == ""
            else f"{r['p_improvement']:.2f} [{r['p_ci_low']:.2f}, {r['p_ci_high']:.2f}]"
        )
        iqm = r[f"{metric}_iqm"]
        ci = f"[{r[f'{metric}_ci_low']:.2f}, {r[f'{metric}_ci_high']:.2f}]"
        flag = " ⚠" if any(v == r["variant"] for v, _ in warnings) else ""
        lines.append(f"| {r['variant']}{flag} | {r['method']} | {iqm:.2f} {ci} | {p} |")
    if warnings:
        lines += ["", "## Warnings (⚠: the variant's own leaderboard warns)", ""]
        lines += [f"- **{variant}**: {w}" for variant, w in warnings]
    return "\n".join(lines) + "\n"
