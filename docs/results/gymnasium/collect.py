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
import io
import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np

from opt_suite.report.baseline import load_baseline
from opt_suite.report.leaderboard import estimate, improvement, rng_for
from opt_suite.report.normalise import References, normalised_scores
from opt_suite.report.verdicts import design_of, load_references, runs_verdict, verdict_cell
from opt_suite.run_view import run_provenance
from opt_suite.store import DB_NAME, ResultsStore
from opt_suite.verdict import OUTCOMES, familywise_statement

HERE = Path(__file__).resolve().parent
#: (folder here, what the page calls it, observations, the run folder in RUNS_DIR, its report
#: folder inside that run). MinAtar last: it comes from the longest run.
DOMAINS = (
    ("frozenlake", "FrozenLake 4x4", "index", "gymnasium-frozenlake", "."),
    ("cartpole", "CartPole", "vector", "gymnasium-cartpole", "."),
    ("minigrid-doorkey", "MiniGrid DoorKey 6x6", "egocentric image", "minigrid-doorkey", "."),
    ("minatar", "MinAtar Breakout", "image", "minatar-breakout-controls", "variants/lambda1=0.0"),
)
METHOD = "offline-options"
#: The comparators, in the table's order; a domain shows those its spec runs (bc-ppo needs the
#: tf_agents learner, so FrozenLake's SMDP Q-learning has none).
COMPARATORS = ("primitives", "random-options", "bc-option-never", "bc-option-every-step", "bc-ppo")
CONTROLS = ("bc-option-never", "bc-option-every-step", "bc-ppo")
METRICS = ("auc", "final_return")
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
    for folder, label, kind, run, report in DOMAINS:
        source = runs_dir / run / report
        if not (source / "runs.json").is_file():
            print(f"collect.py: {label}: no {source / 'runs.json'} yet: pending", file=sys.stderr)
            rows.append({"domain": label, "observations": kind, "verdict": "pending"})
            unfinished.append(unfinished_line(label, runs_dir / run))
            continue
        (out / folder).mkdir(exist_ok=True)
        for name in REPORT_FILES:
            if (source / name).is_file():
                shutil.copyfile(source / name, out / folder / name)
        rows += domain_rows(label, kind, out / folder / "runs.json")
        diagnostics += diagnostic_lines(label, out / folder / "leaderboard.json")
        provenance[folder] = run_provenance(runs_dir / run)
        costs += cost_lines(label, provenance[folder], runs_dir / f"{run}.timing")
    decide(rows)
    (out / "verdict.md").write_text(verdict_table(rows))
    (out / "cost.md").write_text(cost_table(costs, unfinished))
    (out / "diagnostics.md").write_text(diagnostics_table(diagnostics))
    (out / "verdict.csv").write_text(verdict_csv(rows))
    (out / "provenance.json").write_text(json.dumps(provenance, indent=1, sort_keys=True) + "\n")
    print(f"collect.py: wrote {out}")
    return 0


def tables_only(out: Path = HERE) -> int:
    """Rewrite ``verdict.md`` / ``.csv`` from the copies in ``out`` alone (no runs needed)."""
    rows: list[dict[str, Any]] = []
    for folder, label, kind, _, _ in DOMAINS:
        if (out / folder / "runs.json").is_file():
            rows += domain_rows(label, kind, out / folder / "runs.json")
        else:
            rows.append({"domain": label, "observations": kind, "verdict": "pending"})
    decide(rows)
    (out / "verdict.md").write_text(verdict_table(rows))
    (out / "verdict.csv").write_text(verdict_csv(rows))
    print(f"collect.py: wrote {out / 'verdict.md'} from the committed copies")
    return 0


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


def decide(rows: list[dict[str, Any]]) -> None:
    """Each row's verdict on auc (one family: the page's rows), then each domain's summary."""
    family = sum(1 for row in rows if "_pair" in row)
    by_domain: dict[str, dict[str, str]] = {}
    for row in rows:
        if "_pair" not in row:
            continue
        runs, name, protocol = row.pop("_pair")
        design = design_of(runs, protocol, family)
        found = runs_verdict(
            runs, METHOD, name, "auc", design, rng_for(METHOD, "auc", "verdict", name)
        )
        row["decision"] = found.as_dict()
        row["outcome"] = found.outcome
        by_domain.setdefault(row["domain"], {})[name] = found.outcome
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


def verdict_table(rows: list[dict[str, Any]]) -> str:
    """The page's table: one line per (domain, comparator), a pending line per missing domain."""
    family = sum(1 for row in rows if "decision" in row)
    lines = [
        "# Do options learned offline help? offline-options against each comparator, per domain",
        "",
        "Generated by `collect.py` from each domain's `runs.json`. IQM [95% stratified-bootstrap",
        "CI] over seeds x test tasks; the scale is the report's normalised one (0 = uniform-random",
        "policy, 1 = the demonstration source's expert) where the run measured it, raw returns",
        "otherwise. P = paired P(offline-options > comparator), runs of the same seed and task,",
        "[95% CI resampling seeds within each task slot]: it describes, it does not decide.",
        "Verdict on auc: the suite's one rule (docs/results-and-gate.md, Verdicts): better / worse",
        "when its interval, which resamples seeds and then each drawn seed's test tasks, lies",
        "clear of no difference; equivalent when it lies within the spec's margin; otherwise",
        "inconclusive, with the smallest difference the design could have detected. Summary: the",
        f"domain's comparators grouped by verdict. {familywise_statement(max(family, 1))}",
        "",
        "| domain (observations) | summary | comparator | scale | runs | offline-options auc "
        "| comparator auc | P(auc) | verdict (auc) | offline-options final | comparator final "
        "| P(final) |",
        "|---|---|---|---|---:|---:|---:|---:|---|---:|---:|---:|",
    ]
    for row in rows:
        domain = f"{row['domain']} ({row['observations']})"
        if row["verdict"] == "pending":
            lines.append(f"| {domain} | pending (run not finished) |" + " |" * 10)
            continue
        lines.append(
            f"| {domain} | {row['verdict']} | {row['comparator']} | {row['scale']} "
            f"| {row['runs']} | {_interval(row['auc_ours'])} | {_interval(row['auc_theirs'])} "
            f"| {_interval(row['auc_p'])} | {verdict_cell(row['decision'])} "
            f"| {_interval(row['final_return_ours'])} | {_interval(row['final_return_theirs'])} "
            f"| {_interval(row['final_return_p'])} |"
        )
    return "\n".join(lines) + "\n"


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
        lines.append(
            f"| {label} | {run['spec']} | {run.get('status', '')} | {run.get('wall_seconds', '')} "
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
        "and ended, from the timing file `regenerate.sh` writes beside it (— when the run was",
        "made without it). The machine has 2 cores; a load above 2 means the run shared them.",
        "",
        "| domain | spec | status | wall s | workers | cells computed | cells reused "
        "| load at start | load at end | commit |",
        "|---|---|---|---:|---:|---:|---:|---|---|---|",
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
    head = ["domain", "observations", "verdict", "comparator", "scale", "runs", "outcome"]
    decision = ["effect", "ci_low", "ci_high", "interval", "margin_text", "detectable", "caveat"]
    head += [f"auc_verdict_{k}" for k in decision]
    for metric in METRICS:
        for side in ("ours", "theirs", "p"):
            head += [f"{metric}_{side}", f"{metric}_{side}_low", f"{metric}_{side}_high"]
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(head)
    for row in rows:
        cells = [row.get(k, "") for k in head[:7]]
        found = row.get("decision") or {}
        cells += ["" if found.get(k) is None else found[k] for k in decision]
        for metric in METRICS:
            for side in ("ours", "theirs", "p"):
                cells += list(row.get(f"{metric}_{side}", ("", "", "")))
        writer.writerow(cells)
    return out.getvalue()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--tables-only"]:  # from the committed copies here, no runs needed
        sys.exit(tables_only())
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("results")))
