"""Copy the published files of the four-rooms reproduction out of finished run directories.

Called by ``regenerate.sh`` (which runs the specs first); usable alone on existing runs:

    python docs/results/fourrooms-paper/collect.py RUNS_DIR
    python docs/results/fourrooms-paper/collect.py --skip-sensitivity RUNS_DIR  # keep its files
    python docs/results/fourrooms-paper/collect.py --cause RUNS_DIR   # "why" + hypothesis alone
    python docs/results/fourrooms-paper/collect.py --tables-only   # README tables from the copies

``RUNS_DIR`` holds ``fourrooms-paper/``, ``fourrooms-paper-sensitivity/``,
``option-critic-sutton/``, the three "why" runs (``fourrooms-paper-why/``,
``fourrooms-paper-why-intra/``, ``fourrooms-paper-why-intra-bump/``: the specs next to this file)
and ``fourrooms-related-controls/`` (the ``--out`` directories of ``opt-suite run``). Writes, next
to this file: the paper setting's leaderboard, per-run data (``runs.json``), curves and Fig. 1a;
option-critic's discovery curves in both settings; the sensitivity sweep's table, plus
``sensitivity.md`` (variants x methods, auc IQM) and the sensitivity table inside README.md
(between its ``sensitivity`` markers); ``provenance.json`` (spec hashes, commit, package
versions, wall time of every run). For README.md's "why" section and its options-or-imitation
verdict (issue 25): ``opt-suite diagnose``'s files of the why runs' option sets, each why
run's and the related-tasks run's leaderboard and per-run data (``why/``),
``why/summary.json`` (every number the two sections print: the leaderboards' aggregates and
intervals, per-task wins, and offline-options against each control), the tables between
README.md's ``cause`` and ``hypothesis`` markers, and ``provenance-why.json``.

It computes no aggregate of its own: IQMs, P's and their intervals are the leaderboards'. The
per-task wins and offline-options' P against the controls (whose leaderboard compares each entry
with primitives only) are computed from the copied per-run data with the report's own functions,
and so is every verdict: the suite's one rule (:func:`opt_suite.report.verdicts.entry_verdict`,
``docs/results-and-gate.md``), every comparison the README's tables judge in one Bonferroni
family (:func:`page_verdicts`). ``--tables-only`` rewrites those tables and ``why/summary.json``
from the committed copies alone.
With ``--skip-sensitivity`` the sensitivity study (68 min) is not needed: its committed files,
README.md block and provenance entry stay as they are.
"""

from __future__ import annotations

import csv
import json
import shutil
import sys
from pathlib import Path

import numpy as np

from opt_suite import stats
from opt_suite.report.baseline import load_baseline  # the one reader of runs.json
from opt_suite.report.leaderboard import improvement, rng_for
from opt_suite.report.verdicts import design_of, runs_verdict, verdict_cell
from opt_suite.run_view import run_provenance as runs_of  # one way to reopen a run
from opt_suite.verdict import familywise_statement

HERE = Path(__file__).resolve().parent

#: (run directory, file in it, published name)
COPIES = (
    ("fourrooms-paper", "leaderboard.md", "leaderboard.md"),
    ("fourrooms-paper", "leaderboard.json", "leaderboard.json"),
    # The per-run data (every (method, seed, task) run's metrics) the pages' numbers come from;
    # `opt-suite compare MYRUN --baseline runs.json` gates another run against it.
    ("fourrooms-paper", "runs.json", "runs.json"),
    ("fourrooms-paper", "curves.png", "curves.png"),
    ("fourrooms-paper", "fig1a.png", "fig1a.png"),
    ("fourrooms-paper", "discovery.png", "option-critic-paper-setting.png"),
    ("option-critic-sutton", "discovery.png", "option-critic-sutton.png"),
    ("fourrooms-paper-sensitivity", "sweep.md", "sweep.md"),
    ("fourrooms-paper-sensitivity", "sweep.csv", "sweep.csv"),
)

RUNS = ("fourrooms-paper", "fourrooms-paper-sensitivity", "option-critic-sutton")

#: The "why" runs (the specs next to this file): run directory, learner label, file prefix in why/.
WHY = (
    ("fourrooms-paper-why", "SMDP Q", "smdp"),
    ("fourrooms-paper-why-intra", "intra-option Q", "intra"),
    ("fourrooms-paper-why-intra-bump", "intra-option Q, bump in target", "intra-bump"),
)
#: The related-tasks run of the options-or-imitation test (specs/fourrooms-related-controls.yaml).
RELATED = ("fourrooms-related-controls", "SMDP Q", "related")
#: The entries README.md's options-or-imitation table compares, in its order.
HYPOTHESIS = ("offline-options", "bc-option-never", "bc-option-every-step", "primitives",
              "random-options")  # fmt: skip
#: README.md's names of the paper setting's entries that need their lambda1 said.
PAPER_LABELS = {"offline-options": "offline-options (λ1 = 0)",
                "offline-options-kl": "offline-options-kl (λ1 = 0.001)"}  # fmt: skip
#: The controls offline-options is compared with head-on.
CONTROLS = ("bc-option-never", "bc-option-every-step", "random-options")
BASELINE = "primitives"
WHY_DIR = HERE / "why"


def main(runs_dir: Path, skip_sensitivity: bool = False) -> int:
    """Copy and tabulate; exit status 2 (with a message) when a run file is missing."""
    for run, name, published in COPIES:
        if skip_sensitivity and run == RUNS[1]:
            continue
        source = runs_dir / run / name
        if not source.is_file():
            print(f"collect.py: missing {source} (run regenerate.sh first)", file=sys.stderr)
            return 2
        shutil.copyfile(source, HERE / published)
    readme = HERE / "README.md"
    if not skip_sensitivity:
        sweep = runs_dir / RUNS[1]
        flagged = {
            line.split("|")[1].strip().removesuffix("⚠").strip()
            for line in (sweep / "sweep.md").read_text().splitlines()
            if line.startswith("| ") and " ⚠ |" in line
        }
        table = sensitivity_table(sweep / "sweep.csv", flagged)
        (HERE / "sensitivity.md").write_text(table)
        readme.write_text(with_block(readme.read_text(), "sensitivity", table.split("\n", 4)[4]))
    status = collect_cause(runs_dir, readme)  # the why copies first: the family spans them
    if status:
        return status
    published = HERE / "provenance.json"
    # Skipped, the sensitivity study keeps the provenance of the committed files it made.
    kept = json.loads(published.read_text()) if skip_sensitivity else {}
    provenance = {
        run: kept[run] if run == RUNS[1] and skip_sensitivity else runs_of(runs_dir / run)
        for run in RUNS
    }
    published.write_text(json.dumps(provenance, indent=1, sort_keys=True) + "\n")
    print(f"collect.py: wrote {HERE}")
    return 0


def _missing(path: Path) -> bool:
    if path.is_file():
        return False
    print(f"collect.py: missing {path} (run regenerate.sh first)", file=sys.stderr)
    return True


def collect_cause(runs_dir: Path, readme: Path) -> int:
    """The "why" section and the options-or-imitation verdict.

    Needs the intra-option why run with ``opt-suite diagnose``'s files (the three why runs share
    every option set) and the related-tasks run (exit status 2 without them); ``collect.py
    --cause RUNS_DIR`` refreshes these two sections alone. A why run not finished yet (no
    leaderboard) is left out of the tables, which say so, its old copies in ``why/`` are
    removed (no stale numbers), and the exit status is 3.
    """
    diagnosed = runs_dir / WHY[1][0]
    required = [diagnosed / "diagnose.md", diagnosed / "diagnose.json"]
    for run in (WHY[1][0], RELATED[0]):
        required += [runs_dir / run / "leaderboard.json", runs_dir / run / "runs.json"]
    if any(_missing(path) for path in required):
        return 2
    for name in ("diagnose.md", "diagnose.json"):
        shutil.copyfile(diagnosed / name, HERE / name)
    WHY_DIR.mkdir(exist_ok=True)
    collected, missing = [], []
    for run, learner, prefix in (*WHY, RELATED):
        copies = {name: WHY_DIR / f"{name}-{prefix}.json" for name in ("leaderboard", "runs")}
        if not all((runs_dir / run / f"{name}.json").is_file() for name in copies):
            print(f"collect.py: {runs_dir / run} is not finished (no leaderboard.json or "
                  f"runs.json): the {learner} rows are left out", file=sys.stderr)  # fmt: skip
            missing.append(run)
            for copy in copies.values():
                copy.unlink(missing_ok=True)
            continue
        for name, copy in copies.items():
            shutil.copyfile(runs_dir / run / f"{name}.json", copy)
        collected.append(run)
    # Everything below reads the copies: the committed files alone rebuild the tables.
    write_tables(readme, missing)
    why = {run: runs_of(runs_dir / run) for run in collected}
    (HERE / "provenance-why.json").write_text(json.dumps(why, indent=1, sort_keys=True) + "\n")
    return 3 if missing else 0


def write_tables(readme: Path, missing: list[str]) -> None:
    """README.md's paper, cause and hypothesis tables and ``why/summary.json``, from the copies."""
    decided = page_verdicts()
    summary = why_summary(decided)
    summary["not_collected"] = missing
    summary["comparisons"] = len(decided)
    # every verdict of the page, the paper table's too: the numbers the README prints
    summary["verdicts"] = [{"runs": f, "x": x, "y": y, **v} for (f, x, y), v in decided.items()]
    (WHY_DIR / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    board = json.loads((HERE / "leaderboard.json").read_text())
    runs = load_baseline(HERE / "runs.json").methods
    text = with_block(readme.read_text(), "paper", paper_table(board, runs, decided))
    diagnosis = json.loads((HERE / "diagnose.json").read_text())
    text = with_block(text, "cause", cause_table(diagnosis, summary))
    readme.write_text(with_block(text, "hypothesis", hypothesis_table(summary)))


def page_comparisons() -> list[tuple[Path, str, str]]:
    """Every (runs file, X, Y) the README's tables give a verdict, from the copies here."""
    found = []
    for path in [HERE / "runs.json"] + [WHY_DIR / f"runs-{p}.json" for _, _, p in (*WHY, RELATED)]:
        if not path.is_file():
            continue  # a why run not collected (collect_cause says so)
        methods = load_baseline(path).methods
        found += [(path, m, BASELINE) for m in methods if m != BASELINE]
        if "offline-options" in methods and path != HERE / "runs.json":
            found += [(path, "offline-options", c) for c in CONTROLS if c in methods]
    return found


def page_verdicts() -> dict[tuple[str, str, str], dict]:
    """Each comparison of :func:`page_comparisons` judged by the one rule, one family for all.

    Keyed by (runs file name, X, Y); the value is :meth:`opt_suite.verdict.Verdict.as_dict`.
    """
    pairs = page_comparisons()
    out = {}
    for path, x, y in pairs:
        runs = load_baseline(path)
        board = json.loads(path.with_name(path.name.replace("runs", "leaderboard", 1)).read_text())
        design = design_of(runs, board["protocol"], len(pairs))
        found = runs_verdict(runs, x, y, "auc", design, rng_for(x, "auc", "verdict", y))
        out[(path.name, x, y)] = found.as_dict()
    return out


def task_wins(x: np.ndarray, y: np.ndarray) -> dict[str, int]:
    """Test tasks on which X's runs beat Y's (``[seeds, tasks]`` each): that task's P > 0.5.

    Per task, the report's P(X > Y) restricted to that task (all pairs of X's and Y's seeds, ties
    one half); ``won``/``tied``/``lost`` count the tasks above, at and below 0.5.
    """
    per_task = stats.per_task_probability_of_improvement(x, y).tolist()
    return {
        "won": sum(p > 0.5 for p in per_task),
        "tied": sum(p == 0.5 for p in per_task),
        "lost": sum(p < 0.5 for p in per_task),
        "tasks": len(per_task),
    }


def _interval(entry: dict, key: str = "ci") -> list[float]:
    return [entry[f"{key}_low"], entry[f"{key}_high"]]


def why_summary(decided: dict[tuple[str, str, str], dict]) -> dict:
    """What the "why" and hypothesis tables print, from the copies in ``why/``.

    Per setting and method entry: the leaderboard's auc aggregates, P(auc > primitives) and their
    seed and task intervals, the normalised auc, per-task wins, the verdict against primitives;
    and offline-options' P and verdict against each control (``decided``:
    :func:`page_verdicts`).
    """
    out: dict = {"baseline": BASELINE, "settings": {}}
    for run, learner, prefix in (*WHY, RELATED):
        if not (WHY_DIR / f"leaderboard-{prefix}.json").is_file():
            continue  # not collected (collect_cause says so)
        board = json.loads((WHY_DIR / f"leaderboard-{prefix}.json").read_text())
        runs = load_baseline(WHY_DIR / f"runs-{prefix}.json").methods
        normalised = board.get("normalised", {}).get("methods", {})
        base = runs[BASELINE].metrics["auc"]
        entries = {}
        for method, metrics in board["methods"].items():
            auc = metrics["auc"]
            row = {
                "auc_iqm": auc["iqm"],
                "auc_ci": _interval(auc),
                "auc_task_ci": _interval(auc, "task_ci"),
            }
            if method in normalised:
                n = normalised[method]["auc"]
                row |= {"normalised_auc_iqm": n["iqm"], "normalised_auc_ci": _interval(n),
                        "normalised_auc_task_ci": _interval(n, "task_ci")}  # fmt: skip
            p = board["probability_of_improvement"]["methods"].get(method, {}).get("auc")
            if p is not None:
                row |= {"p": p["probability"], "p_ci": _interval(p),
                        "p_task_ci": _interval(p, "task_ci"),
                        "wins": task_wins(runs[method].metrics["auc"], base),
                        "verdict": decided[(f"runs-{prefix}.json", method, BASELINE)]}  # fmt: skip
            entries[method] = row
        against = {}
        if "offline-options" in runs:
            ours = runs["offline-options"].metrics["auc"]
            for control in CONTROLS:
                if control in runs:
                    theirs = runs[control].metrics["auc"]
                    p = improvement("auc", ours, theirs, board["protocol"]["bootstrap"],
                                    rng_for("offline-options", "auc", "vs", control))  # fmt: skip
                    against[control] = {
                        "p": p.probability,
                        "p_ci": [p.ci_low, p.ci_high],
                        "p_task_ci": [p.task_ci_low, p.task_ci_high],
                        "wins": task_wins(ours, theirs),
                        "verdict": decided[(f"runs-{prefix}.json", "offline-options", control)],
                    }
        out["settings"][prefix] = {
            "run": run,
            "spec": board["spec"],
            "learner": learner,
            "seeds": board["protocol"]["seeds"],
            "tasks": board["protocol"]["tasks"],
            "episodes": board["protocol"]["episodes"],
            "normalisation": board.get("normalised", {}).get("definition"),
            "methods": entries,
            "offline_options_against": against,
        }
    return out


def with_block(text: str, name: str, body: str) -> str:
    """``text`` with the lines between the ``<!-- name:begin -->`` and ``name:end`` markers set."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    if begin not in text or end not in text.split(begin, 1)[1]:
        raise ValueError(f"README.md: no {begin} ... {end} block for collect.py to write")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{body.strip()}\n{end}{tail}"


def number(value: float | None, digits: int = 2) -> str:
    """``value`` at ``digits`` decimals with a typographic minus; — for None."""
    return "—" if value is None else f"{value:.{digits}f}".replace("-", "−")


def interval(pair: list[float], digits: int = 2) -> str:
    """``[low, high]``, each as :func:`number` writes it."""
    return f"[{number(pair[0], digits)}, {number(pair[1], digits)}]"


def wins(counts: dict[str, int]) -> str:
    """``15 of 24`` (and the ties, when there are any)."""
    tied = f", {counts['tied']} tied" if counts["tied"] else ""
    return f"{counts['won']} of {counts['tasks']}{tied}"


def improvement_cells(row: dict) -> list[str]:
    """P [seeds] [tasks], the tasks won and the verdict; dashes for the baseline."""
    if "p" not in row:
        return ["—", "—", "—"]
    return [
        f"{number(row['p'])} {interval(row['p_ci'])} {interval(row['p_task_ci'])}",
        wins(row["wins"]),
        verdict_cell(row["verdict"]).replace("-", "−"),
    ]


def verdict_note(comparisons: int) -> str:
    """The sentence under each table with verdicts: the rule's page and the family."""
    return (
        "Verdict: the suite's one rule ([results and the CI gate](../../results-and-gate.md"
        "#verdicts)), on the normalised auc (IQM difference) where the run measured references,"
        " else the paired P; the interval resamples seeds, then tasks (the seeds share them)."
        f" {familywise_statement(comparisons)} The tables' comparisons are one family."
    )


def paper_table(board: dict, runs: dict, decided: dict[tuple[str, str, str], dict]) -> str:
    """The paper setting's table: auc and final return IQMs, P(auc > primitives), tasks won.

    From the copied ``leaderboard.json`` (every IQM, P and interval as the report computed them)
    and ``runs.json`` (the tasks won: :func:`task_wins`, against the baseline's runs; the
    verdict: ``decided``, :func:`page_verdicts`).
    """
    lines = [
        "| method | auc: IQM [seeds] [tasks] | final return: IQM [seeds] [tasks]"
        " | P(auc > primitives) [seeds] [tasks] | tasks won against primitives"
        " | verdict against primitives |",
        "|---|---:|---:|---:|---:|---|",
    ]
    improvement = board["probability_of_improvement"]["methods"]
    base = runs[BASELINE].metrics["auc"]
    for method, metrics in board["methods"].items():
        cells = [
            f"{number(m['iqm'])} {interval(_interval(m))} {interval(_interval(m, 'task_ci'))}"
            for m in (metrics["auc"], metrics["final_return"])
        ]
        p = improvement.get(method, {}).get("auc")
        row = {} if p is None else {
            "p": p["probability"], "p_ci": _interval(p), "p_task_ci": _interval(p, "task_ci"),
            "wins": task_wins(runs[method].metrics["auc"], base),
            "verdict": decided[("runs.json", method, BASELINE)],
        }  # fmt: skip
        label = PAPER_LABELS.get(method, method)
        lines.append(f"| {label} | " + " | ".join(cells + improvement_cells(row)) + " |")
    lines += ["", verdict_note(len(decided))]
    return "\n".join(lines) + "\n"


def cause_table(diagnosis: dict, summary: dict) -> str:
    """Objective and optimiser (``diagnose.json``), then the evaluation under each learner.

    The first table: means over seeds of Ĵ under the method's own π and under a π table, of the
    terminations per step and of the share of demonstrated steps the options explain (π table).
    The second: each why run's auc IQM and P(auc > primitives) with both intervals, and the tasks
    on which the entry beats primitives (``summary``: :func:`why_summary`).
    """
    methods: dict[str, list[dict]] = {}
    for entry in diagnosis["option_sets"]:
        methods.setdefault(entry["method"], []).append(entry)
    lines = [
        "| method | options | Ĵ, own π | Ĵ, π table | terminations/step | steps in options |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for method, sets in methods.items():
        counts = sorted({len(e["options"]) for e in sets})
        span = f"{counts[0]}" if len(counts) == 1 else f"{counts[0]}–{counts[-1]}"
        own = [e["own_pi"]["jhat"] for e in sets if e["own_pi"] is not None]
        row = [
            method,
            span,
            number(sum(own) / len(own)) if len(own) == len(sets) else "—",
            number(sum(e["fitted_pi"]["jhat"] for e in sets) / len(sets)),
            number(sum(e["fitted_pi"]["termination_term"] for e in sets) / len(sets), 3),
            f"{100 * sum(e['option_share'] for e in sets) / len(sets):.1f}%",
        ]
        lines.append("| " + " | ".join(row) + " |")
    objective = diagnosis["objective"]
    lines += [
        "",
        f"Ĵ with λ2 = {objective['lambda2']:g}, λ1 = {objective['lambda1']:g} "
        f"(`{objective['likelihood']}`) for every option set, mean over "
        f"{len(next(iter(methods.values())))} seeds (`opt-suite diagnose`, "
        "[`diagnose.md`](diagnose.md)).",
        "",
        "| learner | method | auc IQM [95% CI seeds] | P(auc > primitives) [seeds] [tasks] | "
        "tasks won against primitives | verdict against primitives |",
        "|---|---|---:|---:|---:|---|",
    ]
    for _, _, prefix in WHY:
        if prefix not in summary["settings"]:
            continue
        setting = summary["settings"][prefix]
        ranked = sorted(setting["methods"].items(), key=lambda kv: -kv[1]["auc_iqm"])
        for method, row in ranked:
            lines.append(
                f"| {setting['learner']} | {method} | {number(row['auc_iqm'], 1)} "
                f"{interval(row['auc_ci'], 1)} | " + " | ".join(improvement_cells(row)) + " |"
            )
    first = next(summary["settings"][p] for _, _, p in WHY if p in summary["settings"])
    lines += [
        "",
        *not_collected(summary),
        f"{first['seeds']} seeds × {first['tasks']} test tasks × {first['episodes']} episodes per "
        "entry and learner, rows by auc IQM; P as the leaderboard computes it (per task, all "
        "pairs of seeds; averaged over tasks), with its seed and task bootstrap intervals; a task "
        "is won when the entry's P on that task alone is above 0.5 "
        "([`why/summary.json`](why/summary.json), from each run's leaderboard and per-run data "
        "in `why/`).",
        "",
        verdict_note(summary["comparisons"]),
    ]
    return "\n".join(lines) + "\n"


def not_collected(summary: dict) -> list[str]:
    """A line naming the why runs the tables leave out (none: no line)."""
    if not summary["not_collected"]:
        return []
    names = ", ".join(f"`{run}`" for run in summary["not_collected"])
    return [f"**Not collected yet: {names}** (not finished when collect.py ran).", ""]


def hypothesis_table(summary: dict) -> str:
    """The controls beside offline-options on related tasks and in the paper setting (SMDP Q)."""
    lines = [
        "| tasks | method | normalised auc IQM [seeds] [tasks] | P(auc > primitives) [seeds] "
        "[tasks] | tasks won | verdict against primitives | P(offline-options > it) [seeds] "
        "[tasks] | tasks offline-options won | verdict: offline-options against it |",
        "|---|---|---:|---:|---:|---|---:|---:|---|",
    ]
    settings = [(RELATED[2], "related")] + [
        (prefix, f"paper (random goals), {learner}") for _, learner, prefix in WHY[:2]
    ]
    for prefix, label in settings:
        if prefix not in summary["settings"]:
            continue
        setting = summary["settings"][prefix]
        for method in HYPOTHESIS:
            row = setting["methods"][method]
            vs = setting["offline_options_against"].get(method)
            normalised = (
                f"{number(row['normalised_auc_iqm'])} {interval(row['normalised_auc_ci'])} "
                f"{interval(row['normalised_auc_task_ci'])}"
                if "normalised_auc_iqm" in row
                else "—"
            )
            cells = [label, method, normalised, *improvement_cells(row)]
            cells += improvement_cells(vs) if vs is not None else ["—", "—", "—"]
            lines.append("| " + " | ".join(cells) + " |")
    related = summary["settings"][RELATED[2]]
    paper = next(summary["settings"][p] for _, _, p in WHY if p in summary["settings"])
    lines += [
        "",
        *not_collected(summary),
        f"related: `specs/fourrooms-related-controls.yaml` (SMDP Q-learning), {related['seeds']} "
        f"seeds × {related['tasks']} test tasks × {related['episodes']} episodes; paper: "
        f"`fourrooms-paper-why.yaml` (and `-intra.yaml`), {paper['seeds']} seeds × "
        f"{paper['tasks']} test tasks × {paper['episodes']} episodes. Normalised: "
        f"{related['normalisation']}. ([`why/summary.json`](why/summary.json))",
        "",
        verdict_note(summary["comparisons"]),
    ]
    return "\n".join(lines) + "\n"


def sensitivity_table(sweep_csv: Path, flagged: set[str]) -> str:
    """Variants as rows, method entries as columns: auc IQM, and P(auc > baseline) in brackets.

    ``flagged``: variants whose leaderboard warns (``sweep.md`` lists why); marked with ⚠.
    """
    with sweep_csv.open(newline="") as f:
        rows = list(csv.DictReader(f))
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    methods = list(dict.fromkeys(r["method"] for r in rows))
    cell = {(r["variant"], r["method"]): r for r in rows}
    lines = [
        "# Sensitivity of the four-rooms result (auc IQM; P(auc > primitives) in brackets)",
        "",
        "Generated by `collect.py` from `sweep.csv` (`specs/fourrooms-paper-sensitivity.yaml`).",
        "",
        "| variant | " + " | ".join(methods) + " |",
        "|---|" + "---:|" * len(methods),
    ]
    for v in variants:
        entries = []
        for m in methods:
            r = cell.get((v, m))
            if r is None:
                entries.append("")
                continue
            text = f"{float(r['auc_iqm']):.0f}"
            if r["p_improvement"]:
                text += f" ({float(r['p_improvement']):.2f})"
            entries.append(text)
        lines.append(f"| {v}{' ⚠' if v in flagged else ''} | " + " | ".join(entries) + " |")
    if flagged:
        lines += ["", "⚠: the variant's leaderboard warns (e.g. failed cells): see sweep.md."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    if sys.argv[1:2] == ["--tables-only"]:  # from the committed copies alone
        done = json.loads((WHY_DIR / "summary.json").read_text()).get("not_collected", [])
        write_tables(HERE / "README.md", done)
        sys.exit(0)
    if sys.argv[1:2] == ["--cause"]:
        sys.exit(collect_cause(Path(sys.argv[2]), HERE / "README.md"))
    skip = sys.argv[1:2] == ["--skip-sensitivity"]
    args = sys.argv[2:] if skip else sys.argv[1:]
    sys.exit(main(Path(args[0]) if args else Path("results"), skip))
