"""Copy the published files of the four-rooms reproduction out of finished run directories.

Called by ``regenerate.sh`` (which runs the specs first); usable alone on existing runs:

    python docs/results/fourrooms-paper/collect.py RUNS_DIR
    python docs/results/fourrooms-paper/collect.py --cause RUNS_DIR     # the "why" section alone

``RUNS_DIR`` holds ``fourrooms-paper/``, ``fourrooms-paper-sensitivity/`` and
``option-critic-sutton/`` (the ``--out`` directories of ``opt-suite run``). Writes, next to this
file: the paper setting's leaderboard, per-run data (``runs.json``), curves and Fig. 1a, its
`opt-suite diagnose` files and the table of README.md's "why" section (between its ``cause``
markers; with the leaderboard and per-run data (``runs-intra.json``) of the same setting under the
intra-option learner, ``fourrooms-paper-intra/``); option-critic's
discovery curves in both settings; the sensitivity sweep's table, plus ``sensitivity.md``
(variants x methods, auc IQM);
``provenance.json`` (spec hashes, commit, package versions, wall time of every run); and the
sensitivity table inside README.md (between its ``sensitivity`` markers). Only reads the runs'
files and stores; it computes no result itself.
"""

from __future__ import annotations

import csv
import json
import shutil
import sys
from pathlib import Path

from opt_suite.run_view import run_provenance as runs_of  # one way to reopen a run

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

#: The paper setting evaluated by the intra-option learner (fourrooms-paper-intra.yaml).
INTRA = "fourrooms-paper-intra"


def main(runs_dir: Path) -> int:
    """Copy and tabulate; exit status 2 (with a message) when a run file is missing."""
    for run, name, published in COPIES:
        source = runs_dir / run / name
        if not source.is_file():
            print(f"collect.py: missing {source} (run regenerate.sh first)", file=sys.stderr)
            return 2
        shutil.copyfile(source, HERE / published)
    sweep = runs_dir / RUNS[1]
    flagged = {
        line.split("|")[1].strip().removesuffix("⚠").strip()
        for line in (sweep / "sweep.md").read_text().splitlines()
        if line.startswith("| ") and " ⚠ |" in line
    }
    table = sensitivity_table(sweep / "sweep.csv", flagged)
    (HERE / "sensitivity.md").write_text(table)
    readme = HERE / "README.md"
    readme.write_text(with_block(readme.read_text(), "sensitivity", table.split("\n", 4)[4]))
    status = collect_cause(runs_dir, readme)
    if status:
        return status
    provenance = {run: runs_of(runs_dir / run) for run in RUNS}
    (HERE / "provenance.json").write_text(json.dumps(provenance, indent=1, sort_keys=True) + "\n")
    print(f"collect.py: wrote {HERE}")
    return 0


def collect_cause(runs_dir: Path, readme: Path) -> int:
    """The "why" section: diagnose files and the cause table (exit status 2 when one is missing).

    Needs only ``fourrooms-paper/`` (with ``opt-suite diagnose``'s files) and
    ``fourrooms-paper-intra/``: ``collect.py --cause RUNS_DIR`` refreshes this section alone.
    """
    paper = runs_dir / RUNS[0]
    for name in ("diagnose.md", "diagnose.json"):
        source = paper / name
        if not source.is_file():
            print(f"collect.py: missing {source} (run regenerate.sh first)", file=sys.stderr)
            return 2
        shutil.copyfile(source, HERE / name)
    intra = runs_dir / INTRA / "leaderboard.json"
    if not intra.is_file():
        print(f"collect.py: missing {intra} (run regenerate.sh first)", file=sys.stderr)
        return 2
    shutil.copyfile(intra, HERE / "leaderboard-intra.json")
    intra_runs = runs_dir / INTRA / "runs.json"  # the per-run data of the intra-option column
    if not intra_runs.is_file():
        print(f"collect.py: missing {intra_runs} (run regenerate.sh first)", file=sys.stderr)
        return 2
    shutil.copyfile(intra_runs, HERE / "runs-intra.json")
    cause = cause_table(
        json.loads((paper / "diagnose.json").read_text()),
        {
            "SMDP Q": json.loads((paper / "leaderboard.json").read_text()),
            "intra-option Q": json.loads(intra.read_text()),
        },
    )
    readme.write_text(with_block(readme.read_text(), "cause", cause))
    why = {run: runs_of(runs_dir / run) for run in (RUNS[0], INTRA)}
    (HERE / "provenance-why.json").write_text(json.dumps(why, indent=1, sort_keys=True) + "\n")
    return 0


def with_block(text: str, name: str, body: str) -> str:
    """``text`` with the lines between the ``<!-- name:begin -->`` and ``name:end`` markers set."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{body.strip()}\n{end}{tail}"


def cause_table(diagnosis: dict, leaderboards: dict[str, dict]) -> str:
    """Objective, optimiser and evaluation side by side, one row per method entry.

    ``diagnosis``: ``diagnose.json`` of the paper run; ``leaderboards``: learner label ->
    ``leaderboard.json`` of the paper setting evaluated by that learner. Means over seeds of Ĵ
    under the method's own π and under a π table, of the terminations per step and of the share of
    demonstrated steps the options explain (π table); then each learner's auc IQM and
    P(auc > primitives).
    """
    methods: dict[str, list[dict]] = {}
    for entry in diagnosis["option_sets"]:
        methods.setdefault(entry["method"], []).append(entry)
    labels = list(leaderboards)
    lines = [
        "| method | options | Ĵ, own π | Ĵ, π table | terminations/step | steps in options | "
        + " | ".join(f"auc IQM, {k} | P(auc > primitives), {k}" for k in labels)
        + " |",
        "|---|---:|---:|---:|---:|---:|" + "---:|---:|" * len(labels),
    ]

    def number(value: float | None, digits: int = 2) -> str:
        return "—" if value is None else f"{value:.{digits}f}".replace("-", "−")

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
        for label in labels:
            board = leaderboards[label]
            auc = board["methods"].get(method, {}).get("auc", {}).get("iqm")
            p = board["probability_of_improvement"]["methods"].get(method, {}).get("auc", {})
            row += [number(auc, 1), number(p.get("probability"))]
        lines.append("| " + " | ".join(row) + " |")
    objective = diagnosis["objective"]
    lines += [
        "",
        f"Ĵ with λ2 = {objective['lambda2']:g}, λ1 = {objective['lambda1']:g} "
        f"(`{objective['likelihood']}`) for every option set, mean over "
        f"{len(next(iter(methods.values())))} seeds (`opt-suite diagnose`, "
        "[`diagnose.md`](diagnose.md)); auc IQM over 5 seeds × 24 tasks × 200 episodes.",
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
    if sys.argv[1:2] == ["--cause"]:
        sys.exit(collect_cause(Path(sys.argv[2]), HERE / "README.md"))
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("results")))
