"""Copy the cross-domain study's runs here and write its one table: do learned options help?

Called by ``regenerate.sh`` (which runs the specs first); usable alone on existing runs:

    python docs/results/gymnasium/collect.py RUNS_DIR
    python docs/results/gymnasium/collect.py --tables-only   # verdict.md/.csv from the copies

Each domain is the ``--out`` directory of one spec in ``RUNS_DIR`` (:data:`DOMAINS`); MinAtar's is
the ``lambda1 = 0`` variant of ``minatar-breakout-controls`` (a sweep, run by
``docs/results/minatar/regenerate.sh``: 42 minutes), whose entries are exactly the ones compared
here, with the same protocol as the other three (8 test tasks drawn per seed, 5 seeds). For
each domain found, copies its report's ``leaderboard.md``, ``leaderboard.json``, ``runs.json`` and
``curves.png`` into ``<domain>/`` here; a domain whose run is missing or unfinished is a
"pending" row, never an error, so the page can be written before the slowest run ends.

``verdict.md`` / ``verdict.csv``: per domain, offline-options against each comparator on ``auc``
(the paper's "improves faster") and ``final_return``: the IQM of each side with its 95%
stratified-bootstrap interval -- on the report's normalised scale (0 = uniform-random policy,
1 = the demonstration source's expert, per seed and test task) where the run measured reference
returns, raw returns otherwise (the table says which) -- and the paired P(offline-options > it)
(runs of the same seed and test task) with its interval. The numbers come from the committed
``runs.json`` through the report's own estimators (``opt_suite.report.leaderboard``), with the
report's fixed seed, so a rerun of this script reproduces them to the bit.

**The verdict** of each (domain, comparator) on ``auc`` is the suite's one rule
(:func:`opt_suite.report.verdicts.entry_verdict`, described in ``docs/results-and-gate.md``):
better / equivalent / worse / inconclusive from an interval that resamples seeds, then the test
tasks within each drawn seed, on the normalised scale where the run measured references (the
spec's equivalence margin beside it), every verdict of the page in one Bonferroni family. A
domain's summary (:func:`summary`) lists the comparators by outcome; it adds no rule of its own.

``provenance.json``: spec hashes, commit, package versions and wall time of every run
(:func:`opt_suite.run_view.run_provenance`, the one way to reopen a run). ``cost.md``: each run's
wall time and cells beside the machine's load averages at its start and end, from the
``RUNS_DIR/<spec>.timing`` files ``regenerate.sh`` writes (none for a run made elsewhere).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np

import opt_suite
from opt_suite.report.baseline import load_baseline
from opt_suite.report.leaderboard import estimate, improvement, rng_for
from opt_suite.report.normalise import (
    References,
    normalisation_caveat,
    normalised_scores,
    pairs_remaining,
)
from opt_suite.report.verdicts import design_of, load_references, runs_verdict, verdict_cell
from opt_suite.store import DB_NAME, ResultsStore
from opt_suite.verdict import OUTCOMES, familywise_statement, interval_confidence

# The results pages' shared code, docs/results/study_page.py, found through the checkout
# opt_suite comes from: a copy of this folder elsewhere (the regeneration test's) runs too.
sys.path.insert(0, str(Path(opt_suite.__file__).resolve().parents[1] / "docs" / "results"))
import study_page  # noqa: E402

HERE = Path(__file__).resolve().parent
#: (folder here, what the page calls it, observations, the run folder in RUNS_DIR, its report
#: folder inside that run). The three four-rooms settings first (the paper's, goals in one room,
#: a held-out goal room), then the gymnasium domains; MinAtar last: its runs are the longest.
DOMAINS = (
    ("fourrooms-paper", "Four rooms, paper setting", "index", "fourrooms-paper", "."),
    (
        "fourrooms-related",
        "Four rooms, goals in one room",
        "index",
        "fourrooms-related-controls",
        ".",
    ),
    ("fourrooms-heldout", "Four rooms, held-out goal room", "index", "fourrooms-heldout", "."),
    ("frozenlake", "FrozenLake 4x4", "index", "gymnasium-frozenlake", "."),
    ("cartpole", "CartPole", "vector", "gymnasium-cartpole", "."),
    ("minigrid-doorkey", "MiniGrid DoorKey 6x6", "egocentric image", "minigrid-doorkey", "."),
    ("minatar", "MinAtar Breakout", "image", "minatar-breakout-controls", "variants/lambda1=0.0"),
    ("minatar-asterix", "MinAtar Asterix", "image", "minatar-asterix-controls", "."),
)
METHOD = "offline-options"
#: The comparators, in the table's order; a domain shows those its spec runs (bc-ppo needs the
#: tf_agents learner, so the SMDP Q-learning domains have none). The last three are the options
#: that need no demonstration, the positive controls where a spec has them: Sutton et al.'s
#: hand-made hallway options (``reference-options`` on the paper's setting) and eigenoptions.
COMPARATORS = (
    "primitives",
    "random-options",
    "bc-option-never",
    "bc-option-every-step",
    "bc-ppo",
    "reference-options",
    "hallway-options",
    "eigenoptions",
)
CONTROLS = ("bc-option-never", "bc-option-every-step", "bc-ppo")
METRICS = ("auc", "final_return", "jump_start", "improvement")
#: The page's three claims, each with a verdict: improves faster over the budget (auc), starts
#: higher (the jump start: the first 10% of the budget) and gains more after that start (the
#: slope: ``improvement``). A jump start alone is not "improves faster"; the table says which.
VERDICT_METRICS = ("auc", "jump_start", "improvement")
CLAIMS = {"auc": "auc", "jump_start": "jump start", "improvement": "slope"}
#: Resamples in each tail of a verdict's interval, at least: with the page's Bonferroni level the
#: report's 2,000 resamples would leave about one resample beyond each bound (the bound would be
#: an extreme order statistic), so the page resamples as often as this needs.
TAIL_RESAMPLES = 20
#: The report's files, and ``opt-suite option-usage``'s (options kept per seed, how the learner
#: called them), which regenerate.sh writes into each run folder.
REPORT_FILES = (
    "leaderboard.md",
    "leaderboard.json",
    "runs.json",
    "curves.png",
    "option_usage.md",
    "option_usage.csv",
)


def main(runs_dir: Path, out: Path = HERE) -> int:
    """Copy what each domain's run reported into ``out`` and write the tables there.

    Exit status 0, pending rows allowed; a run whose files contradict each other (other seeds or
    tasks between two entries, no offline-options entry) stops it with a message.
    """
    rows: list[dict[str, Any]] = []
    provenance: dict[str, Any] = {}
    costs: list[str] = []
    diagnostics: list[str] = []
    unfinished: list[str] = []
    notes: list[str] = []
    for folder, label, kind, run, report in DOMAINS:
        source = runs_dir / run / report
        if not (source / "runs.json").is_file():
            print(f"collect.py: {label}: no {source / 'runs.json'} yet: pending", file=sys.stderr)
            rows.append({"domain": label, "observations": kind, "verdict": "pending"})
            # an earlier run's copies would make --tables-only judge a run this page does not show
            shutil.rmtree(out / folder, ignore_errors=True)
            unfinished.append(unfinished_line(label, runs_dir / run))
            continue
        (out / folder).mkdir(exist_ok=True)
        for name in REPORT_FILES:
            if (source / name).is_file():
                shutil.copyfile(source / name, out / folder / name)
        rows += domain_rows(label, kind, out / folder / "runs.json")
        notes += reference_notes(label, out / folder / "runs.json")
        diagnostics += diagnostic_lines(label, out / folder / "leaderboard.json")
        provenance[folder] = study_page.timed_provenance(runs_dir, run)
        costs += cost_lines(label, provenance[folder], runs_dir / f"{run}.timing")
    write_tables(out, rows, notes)
    (out / "cost.md").write_text(cost_table(costs, unfinished))
    (out / "diagnostics.md").write_text(diagnostics_table(diagnostics))
    (out / "provenance.json").write_text(json.dumps(provenance, indent=1, sort_keys=True) + "\n")
    print(f"collect.py: wrote {out}")
    return 0


def tables_only(out: Path = HERE) -> int:
    """Rewrite ``verdict.md`` / ``.csv`` from the copies in ``out`` alone (no runs needed)."""
    rows: list[dict[str, Any]] = []
    notes: list[str] = []
    for folder, label, kind, _, _ in DOMAINS:
        if (out / folder / "runs.json").is_file():
            rows += domain_rows(label, kind, out / folder / "runs.json")
            notes += reference_notes(label, out / folder / "runs.json")
        else:
            rows.append({"domain": label, "observations": kind, "verdict": "pending"})
    write_tables(out, rows, notes)
    print(f"collect.py: wrote {out / 'verdict.md'} from the committed copies")
    return 0


def write_tables(out: Path, rows: list[dict[str, Any]], notes: list[str]) -> None:
    """Decide every row's verdicts, then write the tables both entry points write."""
    decide(rows)
    (out / "verdict.md").write_text(verdict_table(rows, notes))
    (out / "summary.md").write_text(summary_table(rows))
    (out / "verdict.csv").write_text(verdict_csv(rows))


def domain_rows(label: str, kind: str, runs_json: Path) -> list[dict[str, Any]]:
    """One row per comparator the run has: both sides' IQMs and P(offline-options > it).

    The verdict waits for :func:`decide`: its family is every row of the page. Each row keeps
    what the verdict needs under ``_pair`` (dropped from the files).
    """
    runs = load_baseline(runs_json)
    protocol = json.loads((runs_json.parent / "leaderboard.json").read_text())["protocol"]
    reps = int(protocol["bootstrap"])  # the report's own number of resamples
    if METHOD not in runs.methods:
        raise SystemExit(f"collect.py: {runs_json} has no {METHOD!r} entry")
    references = load_references(runs_json)
    kept, total = pairs_remaining(references) if references is not None else (0, 0)
    if kept == 0:  # not measured, or refused on every test task: raw returns (and the note says)
        references = None
    scale = "normalised" if references is not None else "raw return"
    ours = runs.methods[METHOD]
    ours_scores = {m: scores(ours, m, references) for m in METRICS}
    found = [c for c in COMPARATORS if c in runs.methods]
    rows = []
    for name in found:
        theirs = runs.methods[name]
        if theirs.seeds != ours.seeds or theirs.tasks != ours.tasks:
            raise SystemExit(f"collect.py: {runs_json}: {name} ran other seeds or tasks")
        row: dict[str, Any] = {
            "domain": label,
            "observations": kind,
            "comparator": name,
            "scale": scale,
            "runs": int(ours.metrics["auc"].size),
            "scaled_pairs": kept,
        }
        for metric in METRICS:
            x, y = ours_scores[metric], scores(theirs, metric, references)
            # The report's generators (leaderboard.py), so that every number also in a
            # leaderboard.md (IQMs; P against its baseline, primitives) is the same there.
            tag = ("normalised",) if references is not None else ()
            mine = estimate(x, reps, rng_for(METHOD, metric, *tag))
            other = estimate(y, reps, rng_for(name, metric, *tag))
            pair = ("paired",) if name == "primitives" else ("paired", name)
            # the paired P reads raw values: it is scale-free (a run beats a run or not)
            raw_x, raw_y = ours.metrics[metric], theirs.metrics[metric]
            p = improvement(metric, raw_x, raw_y, reps, rng_for(METHOD, metric, *pair), True)
            row[f"{metric}_ours"] = (mine.iqm, mine.ci_low, mine.ci_high)
            row[f"{metric}_theirs"] = (other.iqm, other.ci_low, other.ci_high)
            row[f"{metric}_p"] = (p.probability, p.ci_low, p.ci_high)
        row["_pair"] = (runs, name, protocol)
        rows.append(row)
    return rows


def reference_notes(label: str, runs_json: Path) -> list[str]:
    """The report's own caveat on a domain's reference returns, when some pair has no scale.

    Normalisation refuses a (seed, task) pair whose expert does not beat the uniform-random policy
    by the stated margin; the caveat names those pairs and how many the aggregates keep (none:
    the domain's rows are on raw returns and their verdicts on the paired P).
    """
    references = load_references(runs_json)
    caveat = None if references is None else normalisation_caveat(references)
    return [] if caveat is None else [f"- **{label}**: {caveat}."]


def page_resamples(comparisons: int, report_resamples: int) -> int:
    """The bootstrap resamples of the page's verdicts: the report's, or enough for the tails.

    Each bound of a verdict's interval is a quantile at ``(1 - confidence) / 2``; at least
    :data:`TAIL_RESAMPLES` resamples must lie beyond it.
    """
    tail = (1.0 - interval_confidence(comparisons)) / 2
    # rounded first: 20 / (1/240) is 4800.000000000001 in floating point, not a reason for 4801
    return max(report_resamples, math.ceil(round(TAIL_RESAMPLES / tail, 6)))


def decide(rows: list[dict[str, Any]]) -> None:
    """Each row's verdicts on the three claims, then each domain's summary (by auc).

    One family: every verdict of the page.
    """
    family = sum(1 for row in rows if "_pair" in row) * len(VERDICT_METRICS)
    by_domain: dict[str, dict[str, str]] = {}
    for row in rows:
        if "_pair" not in row:
            continue
        runs, name, protocol = row.pop("_pair")
        design = design_of(runs, protocol, family)
        design = dataclasses.replace(design, reps=page_resamples(family, design.reps))
        row["decisions"] = {
            metric: runs_verdict(
                runs, METHOD, name, metric, design, rng_for(METHOD, metric, "verdict", name)
            ).as_dict()
            for metric in VERDICT_METRICS
        }
        row["decision"] = row["decisions"]["auc"]
        row["outcome"] = row["decision"]["outcome"]
        row["resamples"] = design.reps
        by_domain.setdefault(row["domain"], {})[name] = row["outcome"]
    for row in rows:
        if row["domain"] in by_domain:
            row["verdict"] = summary(by_domain[row["domain"]])


def scores(runs: Any, metric: str, references: References | None) -> np.ndarray:
    """``[seeds, tasks]`` of ``metric``, normalised when the run has references.

    Tasks where random and expert earn the same have no scale and are left out, as the report
    leaves them out of its normalised aggregates.
    """
    values = np.asarray(runs.metrics[metric], dtype=np.float64)
    if references is None:
        return values
    found = normalised_scores(runs.seeds, runs.tasks, runs.metrics, references, (metric,))
    if found is None:
        raise SystemExit(f"collect.py: no test task has a normalised scale ({metric})")
    return found.values[metric]


def summary(outcomes: dict[str, str]) -> str:
    """A domain's comparators grouped by verdict: ``better: primitives; worse: bc-ppo``."""
    parts = []
    for outcome in OUTCOMES:
        names = [name for name, found in outcomes.items() if found == outcome]
        if names:
            parts.append(f"{outcome}: {', '.join(names)}")
    return "; ".join(parts)


def _interval(value: tuple[float, float, float]) -> str:
    return f"{value[0]:.2f} [{value[1]:.2f}, {value[2]:.2f}]"


def verdict_table(rows: list[dict[str, Any]], notes: list[str]) -> str:
    """The page's table: one line per (domain, comparator), a pending line per missing domain.

    Then ``notes``: the domains whose reference returns leave pairs without a normalised score.
    """
    decided = [row for row in rows if "decision" in row]
    family = len(decided) * len(VERDICT_METRICS)
    resamples = max((row["resamples"] for row in decided), default=0)
    lines = [
        "# Do options learned offline help? offline-options against each comparator, per domain",
        "",
        "Generated by `collect.py` from each domain's `runs.json`. IQM [95% stratified-bootstrap",
        "CI] over seeds x test tasks; the scale is the report's normalised one (0 = uniform-random",
        "policy, 1 = the demonstration source's expert) where the run measured it, raw returns",
        "otherwise. P = paired P(offline-options > comparator), runs of the same seed and task,",
        "[95% CI resampling seeds within each task slot]: it describes, it does not decide.",
        "Verdicts: the suite's one rule (docs/results-and-gate.md, Verdicts): better / worse",
        "when its interval, which resamples seeds and then each drawn seed's test tasks (seeds→",
        "tasks; seeds×tasks where the seeds share their test tasks), lies clear of no",
        "difference; equivalent when it lies within the spec's margin; otherwise inconclusive,",
        "with the smallest difference the design could have detected. Three claims per row, each",
        "with a verdict: auc (improves faster over the budget: this table) and, separately, the",
        "jump start and the slope (the next table). Summary: the domain's comparators grouped by",
        f"their auc verdict. {familywise_statement(max(family, 1))}",
        f"Each interval from {resamples:,} bootstrap resamples, so that at least"
        f" {TAIL_RESAMPLES} lie beyond each of its bounds.",
        "",
        "| domain (observations) | summary | comparator | scale | runs | pairs scaled "
        "| offline-options auc "
        "| comparator auc | P(auc) | verdict (auc) | offline-options final | comparator final "
        "| P(final) |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|",
    ]
    for row in rows:
        domain = f"{row['domain']} ({row['observations']})"
        if row["verdict"] == "pending":
            lines.append(f"| {domain} | pending (run not finished) |" + " |" * 11)
            continue
        lines.append(
            f"| {domain} | {row['verdict']} | {row['comparator']} | {row['scale']} "
            f"| {row['runs']} | {row['scaled_pairs']} "
            f"| {_interval(row['auc_ours'])} | {_interval(row['auc_theirs'])} "
            f"| {_interval(row['auc_p'])} | {verdict_cell(row['decision'])} "
            f"| {_interval(row['final_return_ours'])} | {_interval(row['final_return_theirs'])} "
            f"| {_interval(row['final_return_p'])} |"
        )
    lines += claims_table(rows)
    if notes:
        lines += [
            "",
            "## Pairs without a normalised score",
            "",
            "Pairs scaled: the (seed, task) pairs the normalised scale keeps (0: the row is on raw",
            "returns). The report's caveat for each domain where some pair has no scale:",
            "",
            *notes,
        ]
    return "\n".join(lines) + "\n"


def summary_table(rows: list[dict[str, Any]]) -> str:
    """The page at a glance: per domain and comparator, the three claims' outcomes."""
    # one column for Sutton et al.'s hallway options, whichever name the spec gave the entry
    column = {"hallway-options": "reference-options"}
    present = {
        column.get(row["comparator"], row["comparator"]) for row in rows if "comparator" in row
    }
    shown = [c for c in COMPARATORS if c in present]
    cells: dict[str, dict[str, str]] = {}
    for row in rows:
        domain = f"{row['domain']} ({row['observations']})"
        found = cells.setdefault(domain, {})
        if "decisions" in row:
            found[column.get(row["comparator"], row["comparator"])] = " / ".join(
                row["decisions"][metric]["outcome"] for metric in VERDICT_METRICS
            )
    lines = [
        "# At a glance: offline-options against each comparator, three claims",
        "",
        "Generated by `collect.py` from the verdicts of [verdict.md](verdict.md) (their",
        "intervals, margins and family there). Each cell: the verdict on auc / jump start /",
        "slope, offline-options against the column's entry (better: offline-options is better).",
        "— : the domain's spec has no such entry; pending: its run has not finished.",
        "reference-options: Sutton et al.'s hand-made hallway options (`hallway-options` in",
        "`fourrooms-heldout`).",
        "",
        "| domain | " + " | ".join(shown) + " |",
        "|---|" + "---|" * len(shown),
    ]
    for domain, found in cells.items():
        if not found:
            lines.append(f"| {domain} |" + " pending |" * len(shown))
            continue
        lines.append(f"| {domain} | " + " | ".join(found.get(c, "—") for c in shown) + " |")
    return "\n".join(lines) + "\n"


def claims_table(rows: list[dict[str, Any]]) -> list[str]:
    """The jump start and the slope, each with its verdict: "improves faster" taken apart."""
    lines = [
        "",
        "## Jump start and slope: two claims, two verdicts",
        "",
        "Jump start: the mean return over the first 10% of the budget. Slope (`improvement`): the",
        "mean return over the rest minus the jump start, what the learner gained after it. Their",
        "weighted sum is auc. IQMs on the row's scale; verdicts by the same rule, in the same",
        "family.",
        "",
        "| domain | comparator | offline-options jump start | comparator jump start "
        "| verdict (jump start) | offline-options slope | comparator slope | verdict (slope) |",
        "|---|---|---:|---:|---|---:|---:|---|",
    ]
    for row in rows:
        if "decisions" not in row:
            continue
        cells = [row["domain"], row["comparator"]]
        for metric in ("jump_start", "improvement"):
            cells += [
                _interval(row[f"{metric}_ours"]),
                _interval(row[f"{metric}_theirs"]),
                verdict_cell(row["decisions"][metric]),
            ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def diagnostic_lines(label: str, leaderboard: Path) -> list[str]:
    """Per entry: its zero-shot return and the report's degenerate-option warnings about it."""
    board = json.loads(leaderboard.read_text())
    warnings = [w for w in board.get("warnings", []) if w.startswith("degenerate option")]
    lines = []
    for name, zero in (board.get("zero_shot_return") or {}).items():
        flagged = [w for w in warnings if f"{name}," in w or f"{name}:" in w or f"'{name}'" in w]
        lines.append(
            f"| {label} | {name} | {zero['mean']:.2f} ± {zero['se']:.2f} | {zero['runs']} "
            f"| {len(flagged)} |"
        )
    return lines


def diagnostics_table(lines: list[str]) -> str:
    """Zero-shot returns and degenerate flags, every domain's entries."""
    head = [
        "# Zero-shot returns and degenerate options",
        "",
        "Generated by `collect.py` from each domain's `leaderboard.json`. Zero-shot: the mean",
        "return (± s.e.) of the learner's untrained policy over the entry's option set, in the",
        "task's own reward scale (what the options do before any learning). Degenerate: the",
        "report's warnings that one of the entry's options copies a primitive or is never chosen",
        "(their text is in the leaderboard's warnings). Options kept per seed and how the learner",
        "called them: each domain's `option_usage.md`.",
        "",
        "| domain | entry | zero-shot return | runs | degenerate-option warnings |",
        "|---|---|---:|---:|---:|",
    ]
    return "\n".join(head + lines) + "\n"


def _loads(line: str) -> str:
    """The three load averages of an ``uptime`` line, as printed there."""
    found = re.search(r"load average: ([\d.]+), ([\d.]+), ([\d.]+)", line)
    return "—" if found is None else " / ".join(found.groups())


def cost_lines(label: str, runs: list[dict[str, Any]], timing: Path) -> list[str]:
    """One table line per recorded run of a domain's spec, with the load around it.

    ``regenerate.sh`` appends a start and an end line to the timing file for every run it makes,
    so the k-th pair from the end belongs to the k-th run from the end (earlier runs made without
    it get no load).
    """
    pairs: list[tuple[str, str]] = []
    if timing.is_file():
        start = ""
        for line in timing.read_text().splitlines():
            if line.startswith("start "):
                start = line
            elif line.startswith("end "):
                pairs.append((start, line))
    pairs = [("", "")] * max(0, len(runs) - len(pairs)) + pairs[-len(runs) :] if runs else []
    lines = []
    for run, (start, end) in zip(runs, pairs, strict=True):
        cells = run.get("cells", {})
        timed = run.get("timed", {}).get("time", {})
        lines.append(
            f"| {label} | {run['spec']} | {run.get('status', '')} | {run.get('wall_seconds', '')} "
            f"| {timed.get('wall_s', '—')} | {timed.get('user_s', '—')} "
            f"| {run.get('workers', '')} | {cells.get('computed', '')} | {cells.get('reused', '')} "
            f"| {_loads(start)} | {_loads(end)} | {run.get('git_commit', '')} |"
        )
    return lines


def unfinished_line(label: str, run: Path) -> str:
    """How far a domain's run got: its cells done of those planned, its evaluation cells' times."""
    if not (run / DB_NAME).is_file():
        return f"| {label} | not started | | |"
    with ResultsStore(run) as store:
        cells = store.cells()
    done = [c for c in cells if c.status == "done"]
    times = sorted(c.wall_s for c in done if c.kind == "evaluation" and c.wall_s is not None)
    spread = f"{times[0]:.0f}–{times[-1]:.0f}" if times else "—"
    return f"| {label} | {len(done)} of {len(cells)} | {len(times)} | {spread} |"


def cost_table(lines: list[str], unfinished: list[str]) -> str:
    """The cost table: every run's wall time, cells and the machine's load around it."""
    head = [
        "# What each run cost",
        "",
        "Generated by `collect.py`: wall time, workers and cells from each run's store",
        "(`provenance.json`); load averages (1 / 5 / 15 min, from `uptime`) when the run started",
        "and ended, and the run's wall and user CPU seconds by `/usr/bin/time` (its workers",
        "included), from the timing file `regenerate.sh` writes beside it (— when the run was",
        "made without it). The machine has 2 cores; a load above 2 means the run shared them.",
        "",
        "| domain | spec | status | wall s (store) | wall s (time) | CPU s (user) | workers "
        "| cells computed | cells reused | load at start | load at end | commit |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---|---|---|",
    ]
    if unfinished:
        head_unfinished = [
            "",
            "## Runs not finished",
            "",
            "From the run's store (`opt-suite run` resumes it): cells done of those its spec",
            "plans, and the wall time of each finished evaluation cell (one PPO run).",
            "",
            "| domain | cells done | evaluation cells done | their wall time, s |",
            "|---|---|---:|---|",
        ]
        lines = lines + head_unfinished + unfinished
    return "\n".join(head + lines) + "\n"


def verdict_csv(rows: list[dict[str, Any]]) -> str:
    """The same numbers unrounded, one line per (domain, comparator)."""
    out = io.StringIO()
    head = ["domain", "observations", "verdict", "comparator", "scale", "runs", "scaled_pairs"]
    head += ["outcome"]
    decision = ["effect", "ci_low", "ci_high", "interval", "margin_text", "detectable", "caveat"]
    decision += ["outcome", "comparisons", "seeds"]
    head += [f"{m}_verdict_{k}" for m in VERDICT_METRICS for k in decision]
    head += ["resamples"]
    for metric in METRICS:
        for side in ("ours", "theirs", "p"):
            head += [f"{metric}_{side}", f"{metric}_{side}_low", f"{metric}_{side}_high"]
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(head)
    for row in rows:
        cells = [row.get(k, "") for k in head[:8]]
        for metric in VERDICT_METRICS:
            found = (row.get("decisions") or {}).get(metric) or {}
            cells += ["" if found.get(k) is None else found[k] for k in decision]
        cells.append(row.get("resamples", ""))
        for metric in METRICS:
            for side in ("ours", "theirs", "p"):
                cells += list(row.get(f"{metric}_{side}", ("", "", "")))
        writer.writerow(cells)
    return out.getvalue()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--tables-only"]:  # from the committed copies here, no runs needed
        sys.exit(tables_only())
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("results")))
