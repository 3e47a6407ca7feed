"""Copy issue 35's factorial sweep's reports and tabulate its verdicts and its length sweep.

Called by ``regenerate.sh`` (which runs the spec first); usable alone:

    python docs/results/fourrooms-related-factorial/collect.py RUNS_DIR   # RUNS_DIR/<spec>/
    python docs/results/fourrooms-related-factorial/collect.py --tables-only  # from the copies

``fourrooms-related-factorial`` is a sweep: three variants differing in one entry,
``bc-option-length`` (the cloned option terminating with probability beta per step), every other
entry's cells shared by the variants. Writes, next to this file: ``sweep.json`` / ``.md`` /
``.csv`` (the run's summary across variants); ``variants/<name>/`` with each variant's
``leaderboard.md`` / ``.json``, ``runs.json`` and ``curves.png``; ``provenance.json`` (one record
per variant's run, the last with the wall time and the machine's load around the whole run when
``regenerate.sh`` timed it); ``options.json``, the size of each shared entry's option set per
seed (from the store: no report file holds it); and ``comparisons.md`` / ``.json``, written from
the copies alone:

- **the factorial**: each corner of {imitation, none} x {temporally extended, one step}
  (:data:`CORNERS`) against every other corner and against offline-options, on ``auc`` (improves
  faster) and separately on ``jump_start`` (the first 10% of the budget) and ``improvement`` (the
  rest minus the jump start: the slope), from the first variant's report (the corners' runs are
  the same in every variant: checked);
- **the length sweep's verdicts**: each variant's ``bc-option-length`` against the two imitation
  corners (beta 0 and beta 1) on ``auc``;
- **the cloning budget's verdict**: ``bc-option-bc-ppo-budget`` (the never-terminating clone
  with bc_ppo's cloning budget) against ``bc-option-never`` on ``auc``;
- **the length sweep's table** (``length_sweep``): per cloned option, from beta 0 to beta 1, the
  test-time learner's mean call length and option share (the leaderboard's recorded option
  usage), its normalised auc and jump start IQM, its zero-shot return and its cloning fit
  (accuracy on the demonstrations it was cloned on, and a second clone's on held-out ones).

Every verdict is the suite's one rule (:func:`opt_suite.report.pairwise.comparison_rows`), and
all of them are one Bonferroni family.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import opt_suite
from opt_suite.report import load_baseline
from opt_suite.report.section import markdown_table

# The results pages' shared code, docs/results/study_page.py, found through the checkout
# opt_suite comes from: a copy of this folder elsewhere (the regeneration test's) runs too.
sys.path.insert(0, str(Path(opt_suite.__file__).resolve().parents[1] / "docs" / "results"))
import study_page  # noqa: E402

HERE = Path(__file__).resolve().parent
SPEC = "fourrooms-related-factorial"
#: The factorial's corners, imitation x extension: cloned never / every step, hallway and
#: untrained options, primitives.
CORNERS = (
    "bc-option-never",
    "bc-option-every-step",
    "reference-options",
    "random-options",
    "primitives",
)
#: The method Algorithm 1's options are: every corner is read against it too.
METHOD = "offline-options"
#: The swept entry, and the imitation corners at the ends of its axis (beta 0 and beta 1).
SWEPT = "bc-option-length"
ENDS = ("bc-option-never", "bc-option-every-step")
#: The never-terminating clone with bc_ppo's cloning budget (500 Adam steps of 64 pairs at 1e-3
#: instead of 500 full-batch steps at 1e-2): judged against the never-terminating clone.
BUDGET = "bc-option-bc-ppo-budget"
#: each corner against the corners after it and the method: every pair once
PAIRS = {c: (*CORNERS[i + 1 :], METHOD) for i, c in enumerate(CORNERS)}
#: auc decides "improves faster"; the jump start and the slope are separate claims
METRICS = ("auc", "jump_start", "improvement")
SWEPT_METRICS = ("auc",)


class SharedRunsDiffer(Exception):
    """An entry every variant shares has other runs in two variants' reports."""


def main(runs_dir: Path, timings: Path | None = None) -> None:
    """Copy the sweep's reports and provenance here, then write the page's data and tables.

    ``timings``: where ``docs/gen_timings.py`` recorded what the run cost, if it ran it.
    """
    study_page.copy_sweep_report(runs_dir, SPEC, HERE, timings)
    seeds = json.loads((HERE / "provenance.json").read_text())[-1]["seeds"]
    kept = study_page.options_kept(runs_dir / SPEC, (*CORNERS, METHOD), seeds)
    study_page.write_json(HERE / "options.json", kept)
    write_tables()
    print(f"collect.py: wrote {HERE}")


def variants() -> list[tuple[str, float]]:
    """The copied sweep's variants in its order: (name, the swept termination probability)."""
    manifest = json.loads((HERE / "sweep.json").read_text())
    axis = f"methods.{SWEPT}.params.termination_probability"
    return [(str(v["name"]), float(v["values"][axis])) for v in manifest["variants"]]


def check_shared(names: list[str]) -> None:
    """Every entry but the swept one has the same runs in every variant's ``runs.json``.

    The variants share those entries' cells, so the page judges the corners once, on the first
    variant's report; a difference would mean the sweep did not hold them fixed.

    Raises:
        SharedRunsDiffer: naming the entry and the variants.
    """
    first = json.loads((HERE / "variants" / names[0] / "runs.json").read_text())["methods"]
    for name in names[1:]:
        other = json.loads((HERE / "variants" / name / "runs.json").read_text())["methods"]
        for entry in (*CORNERS, METHOD, BUDGET):
            if first[entry] != other[entry]:
                raise SharedRunsDiffer(f"{entry} ran differently in {names[0]} and {name}")


def length_row(board: dict[str, Any], entry: str, beta: float, label: str) -> dict[str, Any]:
    """One cloned option of the length sweep, read from a variant's ``leaderboard.json``.

    ``mean_option_length``: steps per call of the test-time learner (its recorded counts),
    None where the run recorded none; the fit fields None for an entry without a fit.
    """
    usage = (board.get("option_usage") or {}).get(entry, {})
    table = (board.get("normalised") or {}).get("methods") or board["methods"]
    fit = (board.get("cloning_fit") or {}).get(entry, {})
    zero_shot = board["zero_shot_return"][entry]
    return {
        "label": label,
        "entry": entry,
        "termination_probability": beta,
        "mean_option_length": usage.get("mean_option_length"),
        "option_fraction": usage.get("option_fraction"),
        "option_step_share": usage.get("option_step_share"),
        "auc": table[entry]["auc"],
        "jump_start": table[entry]["jump_start"],
        "scale": "normalised" if board.get("normalised") else "raw",
        "zero_shot_return": zero_shot,
        "accuracy": fit.get("accuracy"),
        "held_out_accuracy": fit.get("held_out_accuracy"),
        "held_out_log_likelihood": fit.get("held_out_log_likelihood"),
    }


def length_sweep(names: list[tuple[str, float]]) -> list[dict[str, Any]]:
    """The cloned option from beta 0 (never, then with bc_ppo's budget) to beta 1 (every step)."""
    boards = {
        n: json.loads((HERE / "variants" / n / "leaderboard.json").read_text()) for n, _ in names
    }
    first = boards[names[0][0]]
    rows = [length_row(first, ENDS[0], 0.0, ENDS[0]), length_row(first, BUDGET, 0.0, BUDGET)]
    rows += [length_row(boards[n], SWEPT, beta, f"{SWEPT}-{beta:g}") for n, beta in names]
    rows.append(length_row(first, ENDS[1], 1.0, ENDS[1]))
    return rows


def _number(value: float | None, digits: int) -> str:
    """``value`` at ``digits`` decimals, "n/a" when the run recorded none."""
    return "n/a" if value is None else f"{value:.{digits}f}"


def length_markdown(rows: list[dict[str, Any]]) -> list[str]:
    """The length sweep's table: one row per cloned option, beta from 0 to 1."""
    scale = rows[0]["scale"]
    lines = [
        "## The cloned option's length",
        "",
        "One option behaviour-cloned on the demonstrations, terminating with probability β per"
        " step: β 0 is `bc-option-never` (the learner's termination bump and max_steps end a"
        f" call; `{BUDGET}` the same with bc_ppo's cloning budget), β 1"
        " `bc-option-every-step`, the others each variant's `bc-option-length`. Mean"
        " call: primitive steps per call of the option by the test-time learner (its recorded"
        " counts, pooled over runs); calls: the share of the learner's decisions that chose"
        f" it. auc and jump start: IQM ({scale}) with its 95% [seeds] CI. Zero-shot: the"
        " untrained learner's return, mean ± s.e. over runs. Fit: the clone's accuracy on the"
        " demonstrations it was cloned on; held out: a second clone's accuracy and"
        " log-likelihood on demonstrations it did not see (mean over seeds).",
        "",
    ]
    header = [
        "cloned option", "β", "mean call (steps)", "calls", "auc IQM", "jump start IQM",
        "zero-shot return", "fit accuracy", "held-out accuracy", "held-out log-likelihood",
    ]  # fmt: skip
    cells = []
    for r in rows:
        auc, jump, zs = r["auc"], r["jump_start"], r["zero_shot_return"]
        calls = r["option_fraction"]
        cells.append(
            [
                r["label"],
                f"{r['termination_probability']:g}",
                _number(r["mean_option_length"], 2),
                "n/a" if calls is None else f"{100 * calls:.1f}%",
                f"{auc['iqm']:.2f} [{auc['ci_low']:.2f}, {auc['ci_high']:.2f}]",
                f"{jump['iqm']:.2f} [{jump['ci_low']:.2f}, {jump['ci_high']:.2f}]",
                f"{zs['mean']:.1f} ± {zs['se']:.1f}",
                _number(r["accuracy"], 3),
                _number(r["held_out_accuracy"], 3),
                _number(r["held_out_log_likelihood"], 2),
            ]
        )
    return lines + markdown_table(header, cells)


def write_tables() -> None:
    """``comparisons.md`` / ``.json`` from the copied sweep's reports alone."""
    names = variants()
    check_shared([n for n, _ in names])
    first = HERE / "variants" / names[0][0]
    groups = [study_page.Judged(first, PAIRS, METRICS, "corners")]
    groups += [
        study_page.Judged(HERE / "variants" / n, {SWEPT: ENDS}, SWEPT_METRICS, f"length-{beta:g}")
        for n, beta in names
    ]
    groups.append(study_page.Judged(first, {BUDGET: ENDS[:1]}, SWEPT_METRICS, "budget"))
    lines, data = study_page.comparison_tables(SPEC, groups)
    rows = length_sweep(names)
    data["length_sweep"] = rows
    seeds = load_baseline(first / "runs.json").methods[METHOD].seeds
    lines[2] += (
        f" The corners' runs are the same in every variant; they are judged on"
        f" `variants/{names[0][0]}/`'s report ({len(seeds)} seeds)."
    )
    lines += length_markdown(rows)
    (HERE / "comparisons.md").write_text("\n".join(lines) + "\n")
    study_page.write_json(HERE / "comparisons.json", data)


def _collect(runs_dir: Path, timings: Path | None) -> None:
    try:
        main(runs_dir, timings)
    except SharedRunsDiffer as error:
        print(f"collect.py: {error}: the sweep did not hold the corners fixed", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    study_page.collect_main(__doc__, _collect, write_tables)
