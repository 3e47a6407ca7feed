"""Copy and tabulate the published files of the MinAtar "options or imitation?" study.

Called by ``regenerate.sh`` (which runs the specs first); usable alone on finished runs:

    python docs/results/minatar/collect.py RUNS_DIR [--games breakout asterix]
    python docs/results/minatar/collect.py --tables-only    # from the committed copies alone

``RUNS_DIR/minatar-breakout-controls/`` is the ``--out`` directory of ``opt-suite run
minatar-breakout-controls`` (a lambda1 sweep) and ``RUNS_DIR/minatar-asterix-controls/`` that of
``opt-suite run minatar-asterix-controls`` (one variant). For each game it writes, under
``breakout/`` and ``asterix/`` next to this file:

- each variant's report files (``leaderboard.md``/``.json``, ``runs.json``, ``curves.png``) and,
  for the sweep, ``sweep.md``/``sweep.csv``;
- ``controls.md``/``controls.json``: offline-options against every other entry -- primitives,
  untrained options, the demonstration-fair controls and the ablations -- with the leaderboard's
  own statistics (:func:`opt_suite.report.pairwise.comparison_rows`) and the suite's one verdict
  rule (``docs/results-and-gate.md#verdicts``); every comparison of both games is one family
  (Bonferroni over all of them). Written from the copies here, so ``--tables-only`` rewrites them
  from the committed data without the runs;
- ``experts.md``: each PPO expert's training returns (the train tasks' and, with ``references:
  measure``, the test tasks' reference experts);
- ``provenance.json`` (here): spec hashes, commit, package versions, wall time of every run
  (and, from ``RUNS_DIR/<spec>.timing``, ``/usr/bin/time``'s wall and CPU and the load around it).

It reads the runs' files and stores and computes nothing the report does not, except the
pairwise comparisons (the report's statistics, applied to pairs other than the baseline).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import numpy as np

import opt_suite
from opt_suite.report import load_baseline
from opt_suite.report.pairwise import comparison_markdown, comparison_rows
from opt_suite.report.verdicts import load_references

# The results pages' shared code, docs/results/study_page.py, found through the checkout
# opt_suite comes from: a copy of this folder elsewhere (the regeneration test's) runs too.
sys.path.insert(0, str(Path(opt_suite.__file__).resolve().parents[1] / "docs" / "results"))
import study_page  # noqa: E402

HERE = Path(__file__).resolve().parent
#: page folder -> the run directory's name under RUNS_DIR
GAMES = {"breakout": "minatar-breakout-controls", "asterix": "minatar-asterix-controls"}
#: the method whose options the study asks about, and the entries it is compared with
SUBJECT = "offline-options"
COMPARED = (
    "primitives",
    "random-options",
    "bc-option-never",
    "bc-option-every-step",
    "bc-ppo",
    "offline-options-keep-3",
    "offline-options-likelihood-only",
)
#: ``runs.json``: the variant's per-run data (every (method, seed, task) run's metrics), which
#: `opt-suite compare MYRUN --baseline <game>/<variant>/runs.json` accepts.
REPORT_FILES = ("leaderboard.md", "leaderboard.json", "runs.json", "curves.png")
#: written by `opt-suite option-usage` (regenerate.sh), copied when present
USAGE_FILES = ("option_usage.md", "option_usage.csv")


def main(runs_dir: Path, games: list[str]) -> int:
    """Copy and tabulate ``games`` (default: both); exit status 2 when a run file is missing."""
    provenance_file = HERE / "provenance.json"
    # the other game's entry stays when only one is collected (an older page's list does not)
    old = json.loads(provenance_file.read_text()) if provenance_file.is_file() else {}
    provenance = old if isinstance(old, dict) else {}
    for page in games or list(GAMES):
        name = GAMES[page]
        run = runs_dir / name
        if not (run / "leaderboard.json").is_file() and not (run / "sweep.md").is_file():
            print(f"collect.py: no report in {run} (run regenerate.sh first)", file=sys.stderr)
            return 2
        out = HERE / page  # regenerate.sh empties it first and draws the options into it
        out.mkdir(exist_ok=True)
        _copy_reports(run, out)
        (out / "experts.md").write_text(experts_table(run))
        provenance[name] = study_page.timed_provenance(runs_dir, name)
    provenance_file.write_text(json.dumps(provenance, indent=1, sort_keys=True) + "\n")
    write_tables()
    print(f"collect.py: wrote {HERE}")
    return 0


def copied_reports(out: Path) -> list[tuple[str, Path]]:
    """A game's copied reports: (label, folder) of each sweep variant, or of the one run."""
    if (out / "sweep.md").is_file():
        return [(p.name, p) for p in sorted(out.iterdir()) if (p / "runs.json").is_file()]
    return [("the run", out)] if (out / "runs.json").is_file() else []


def write_tables() -> None:
    """``controls.md`` / ``.json`` of every game copied here, from the copies alone.

    Every verdict of the page (both games, every variant) shares one family-wise error rate.
    """
    found = {page: copied_reports(HERE / page) for page in GAMES}
    loaded = {
        page: [(label, folder, load_baseline(folder / "runs.json")) for label, folder in reports]
        for page, reports in found.items()
    }
    family = sum(
        len([c for c in COMPARED if c in runs.methods])
        for reports in loaded.values()
        for _, _, runs in reports
    )
    for page, reports in loaded.items():
        if not reports:
            continue
        tables, data = [], {}
        for label, folder, runs in reports:
            rows = comparison_rows(
                runs,
                json.loads((folder / "leaderboard.json").read_text()),
                SUBJECT,
                [c for c in COMPARED if c in runs.methods],
                comparisons=family,
                references=load_references(folder / "runs.json"),
            )
            data[label] = rows
            tables += [f"## {label}", "", comparison_markdown(rows)]
        head = [
            f"# {SUBJECT} against every other use of the same demonstrations: {page}",
            "",
            f"Generated by `collect.py` from each variant's `runs.json` and `leaderboard.json`"
            f" (the run `{GAMES[page]}`). auc: the mean return over the frame budget. The"
            f" verdicts of both games' tables ({family}) are one family.",
            "",
        ]
        (HERE / page / "controls.md").write_text("\n".join(head + tables))
        (HERE / page / "controls.json").write_text(
            json.dumps(data, indent=1, sort_keys=True) + "\n"
        )


def _copy_reports(run: Path, out: Path) -> list[tuple[str, Path]]:
    """Copy a run's report (or each sweep variant's) into ``out``; (label, copied folder) each."""
    if (run / "sweep.md").is_file():
        for name in ("sweep.md", "sweep.csv"):
            shutil.copyfile(run / name, out / name)
        copied = []
        for variant in sorted(p for p in (run / "variants").iterdir() if p.is_dir()):
            target = out / variant.name
            target.mkdir(exist_ok=True)
            _copy(variant, target)
            copied.append((variant.name, target))
        return copied
    _copy(run, out)
    return [("the run", out)]


def _copy(source: Path, target: Path) -> None:
    for name in REPORT_FILES:
        shutil.copyfile(source / name, target / name)
    for name in USAGE_FILES:
        if (source / name).is_file():
            shutil.copyfile(source / name, target / name)


def experts_table(run: Path) -> str:
    """Each expert checkpoint: frames trained, mean return of its first and last 100 episodes."""
    lines = [
        "# The PPO experts (one per train task and seed; with references: measure, also one per"
        " test task and seed)",
        "",
        "Generated by `collect.py` from the checkpoints in the run's `experts/` folder.",
        "Returns are as the task scores them (its reward scale included); 'first 100' is",
        "the untrained policy. The demonstrations' own returns are in each leaderboard.md",
        "(section Demonstrations); the test tasks' expert returns (the 1 of the normalised",
        "scores) are in each runs.json (references).",
        "",
        "| checkpoint | frames | episodes | first 100: mean return | last 100: mean return |",
        "|---|---:|---:|---:|---:|",
    ]
    for path in sorted((run / "experts").glob("expert-*.npz")):
        with np.load(path) as data:
            returns = np.asarray(data["episode_returns"], dtype=np.float64)
            frames = int(data["frames"])
        first = float(returns[:100].mean()) if returns.size else float("nan")
        last = float(returns[-100:].mean()) if returns.size else float("nan")
        lines.append(f"| {path.stem} | {frames:,} | {returns.size} | {first:.2f} | {last:.2f} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs_dir", nargs="?", type=Path, default=Path("results"))
    parser.add_argument("--games", nargs="+", choices=list(GAMES), default=[])
    parser.add_argument(
        "--tables-only",
        action="store_true",
        help="rewrite controls.md/.json from the committed copies here, without the runs",
    )
    args = parser.parse_args()
    if args.tables_only:
        write_tables()
        sys.exit(0)
    sys.exit(main(args.runs_dir, args.games))
