"""Copy the field's leaderboards out of their runs and put every method's verdict in one table.

Called by ``regenerate.sh`` (which runs the specs first); usable alone on existing runs:

    python docs/results/field/collect.py RUNS_DIR
    python docs/results/field/collect.py --pending-ok RUNS_DIR   # a study not run yet: "pending"
    python docs/results/field/collect.py --allow-incomplete RUNS_DIR  # failed cells: said loudly
    python docs/results/field/collect.py --verdicts-only   # field.* verdicts from the copies here

``RUNS_DIR/fourrooms-field/`` and ``RUNS_DIR/minatar-field/`` are the ``--out`` directories of
``opt-suite run``. minatar-field is a sweep over offline-options' lambda1 (0, 0.01, 0.1: the
paper's three); the table reads its ``lambda1=0.0`` variant, the one its controls and ablations
are built on (they fix lambda1 = 0), and its ``sweep.md`` is copied beside it.

Writes, next to this file, per study ``<spec>/``: the report's ``leaderboard.md``/``.json``,
``runs.json`` (every (method, seed, task) run's metrics), ``curves.png`` and
``curves_with_discovery.png``; then ``field.md`` and ``field.json`` (the field table) and
``provenance.json`` (spec hashes, commit, versions, wall time of every run; ``/usr/bin/time``'s
wall and CPU and the load around the last run, from ``RUNS_DIR/<spec>.timing``).

What it computes itself: every entry's verdict against primitives and against offline-options by
the suite's one rule (:func:`opt_suite.report.verdicts.entry_verdict`, described in
``docs/results-and-gate.md``; every verdict of the page in one Bonferroni family), read from the
copied ``runs.json`` so that ``--verdicts-only`` rewrites them from the committed data alone; the
P(auc > offline-options) it prints beside them (the report computes P against its baseline,
primitives, only; here the report's own estimator,
:func:`opt_suite.report.leaderboard.improvement`, on the per-run aucs of ``runs.json``); and the
per-method wall time of the run's cells (summed from the store's cell records; no report file
holds it). Every other number is read from the report's files or the store.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

import opt_suite
from opt_suite.report.baseline import load_baseline
from opt_suite.report.leaderboard import improvement, rng_for
from opt_suite.report.verdicts import design_of, runs_verdict, verdict_cell
from opt_suite.run_view import RunView
from opt_suite.verdict import familywise_statement

# The results pages' shared code, docs/results/study_page.py, found through the checkout
# opt_suite comes from: a copy of this folder elsewhere (the regeneration test's) runs too.
sys.path.insert(0, str(Path(opt_suite.__file__).resolve().parents[1] / "docs" / "results"))
import study_page  # noqa: E402

HERE = Path(__file__).resolve().parent
PRIMITIVES = "primitives"
PAPER = "offline-options"  # the paper's Algorithm 1: the other yardstick of every verdict
METRIC = "auc"  # "improves faster": the mean return over the budget (area under the curve)

#: Report files copied per study (the last one exists only when some discovery stepped an env).
FILES = ("leaderboard.md", "leaderboard.json", "runs.json", "curves.png")
OPTIONAL_FILES = ("curves_with_discovery.png",)


@dataclasses.dataclass(frozen=True)
class Study:
    """One run of the field: its spec, the family it is on, and the report folder to read.

    Attributes:
      spec: the spec's name (its run is ``RUNS_DIR/<spec>``).
      family: the family as the table names it.
      variant: a sweep's variant whose report is read (None: the run's own report).
    """

    spec: str
    family: str
    variant: str | None = None

    def report_dir(self, runs_dir: Path) -> Path:
        """The folder holding the report files read."""
        run = runs_dir / self.spec
        return run if self.variant is None else run / "variants" / self.variant


STUDIES = (
    Study("fourrooms-field", "four rooms (13x13, tabular)"),
    Study("minatar-field", "MinAtar Breakout (frames)", variant="lambda1=0.0"),
)

VERDICT_RULE = (
    "The suite's one rule (docs/results-and-gate.md, Verdicts) on auc: better / worse when the"
    " interval, which resamples seeds and then test tasks (within each drawn seed where each seed"
    " drew its own test tasks, one draw for all where the seeds share them), lies"
    " clear of no difference; equivalent when it lies within the spec's equivalence margin;"
    " otherwise inconclusive, with the smallest difference the design could have detected. On"
    " the normalised scale (IQM difference), every verdict of the page in one Bonferroni family."
)


class CollectError(RuntimeError):
    """A run's files are missing or do not say what the table needs; the message names them."""


class MissingRun(CollectError):
    """A study's report files are not there: its run has not finished (``--pending-ok``)."""


def decide(studies: Sequence[dict[str, Any]], folder: Path) -> None:
    """Fill every entry's verdicts (against primitives and offline-options) in ``studies``.

    Read from each study's copied ``runs.json`` (``folder / spec``); the family is every
    verdict of the page. An entry lacking some of the yardstick's (seed, task) pairs (an
    incomplete run) gets ``incomplete``; the yardstick itself gets "—".
    """
    loaded = [(s, load_baseline(folder / s["spec"] / "runs.json")) for s in studies]
    family = sum(2 * (len(s["methods"]) - 1) for s in studies)
    for study, runs in loaded:
        board = json.loads((folder / study["spec"] / "leaderboard.json").read_text())
        design = design_of(runs, board["protocol"], family)
        for name, row in study["methods"].items():
            for key, yardstick in (("vs_primitives", PRIMITIVES), ("vs_offline_options", PAPER)):
                x, y = runs.methods[name], runs.methods[yardstick]
                if name == yardstick:
                    row[f"verdict_{key}"], row[f"decision_{key}"] = "—", None
                    continue
                if (x.seeds, x.tasks) != (y.seeds, y.tasks):
                    row[f"verdict_{key}"], row[f"decision_{key}"] = "incomplete", None
                    continue
                rng = rng_for(name, METRIC, "verdict", yardstick)
                found = runs_verdict(runs, name, yardstick, METRIC, design, rng)
                row[f"verdict_{key}"], row[f"decision_{key}"] = found.outcome, found.as_dict()
    for study in studies:
        study["comparisons"] = family


def paired_against(
    runs_json: Path, reference: str, bootstrap: int, allow_unpaired: bool = False
) -> dict[str, dict[str, float]]:
    """Each entry's paired P(auc > ``reference``'s auc) with both intervals, from ``runs.json``.

    The report's own estimator and seeding (:func:`opt_suite.report.leaderboard.improvement`);
    only the reference entry differs from the leaderboard's (which is ``report.baseline``).
    An entry whose seeds or tasks differ from the reference's (an incomplete run: some of its
    cells failed) has no pairs: an error, or left out with ``allow_unpaired``.
    """
    runs = load_baseline(runs_json)
    if reference not in runs.methods:
        raise CollectError(f"{runs_json}: no entry {reference!r} to compare with")
    y = runs.methods[reference]
    found = {}
    for name, x in runs.methods.items():
        if name == reference:
            continue
        if (x.seeds, x.tasks) != (y.seeds, y.tasks):
            if allow_unpaired:
                continue
            raise CollectError(
                f"{runs_json}: {name!r} and {reference!r} ran different seeds or tasks (no pairs)"
            )
        p = improvement(
            METRIC,
            np.asarray(x.metrics[METRIC]),
            np.asarray(y.metrics[METRIC]),
            bootstrap,
            rng_for(name, METRIC, "paired", reference),
            paired=True,
        )
        found[name] = dataclasses.asdict(p)
    return found


def discovery_cost_table(leaderboard_md: str, where: Path) -> dict[str, dict[str, float]]:
    """The "Discovery cost" section of ``leaderboard.md``: method -> its three columns."""
    section = leaderboard_md.partition("## Discovery cost")[2]
    if not section:
        raise CollectError(f"{where}: no 'Discovery cost' section (a report older than issue 26?)")
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not re.fullmatch(r"[\d,]+", cells[1]):
            continue  # the header, its rule, prose
        values = [float(c.replace(",", "")) for c in cells[1:]]
        rows[cells[0]] = dict(
            zip(
                ("discovery_env_frames", "demonstration_steps", "learning_frames"),
                values,
                strict=True,
            )
        )
    return rows


def cell_costs(view: RunView) -> dict[str, dict[str, Any]]:
    """Per method entry: its cells' compute seconds (discovery and learning) and options kept.

    ``wall_s`` is each cell's compute alone, recorded by the worker that ran it (a cell reused
    from an earlier run keeps the seconds it took then): summed over the entry's cells, and its
    mean per discovery (one per seed) and per learning run (one per seed and test task).
    ``options`` lists the option-set size of each seed's discovery, from the stored option sets.
    """
    discovery: dict[str, list[float]] = {}
    learning: dict[str, list[float]] = {}
    options: dict[str, dict[str, int | None]] = {}
    demonstrations = 0.0
    for cell in view.store.cells():
        if cell.status != "done":
            continue
        seconds = float(cell.wall_s or 0.0)
        if cell.kind == "demonstrations":
            demonstrations += seconds
        elif cell.kind == "discovery" and cell.method is not None:
            discovery.setdefault(cell.method, []).append(seconds)
            found = view.store.option_set(cell.method, cell.seed)
            options.setdefault(cell.method, {})[str(cell.seed)] = (
                None if found is None else len(found)
            )
        elif cell.kind == "evaluation" and cell.method is not None:
            learning.setdefault(cell.method, []).append(seconds)
    costs: dict[str, dict[str, Any]] = {
        m: {
            "discovery_s": sum(discovery.get(m, [])),
            "discovery_s_per_seed": float(np.mean(discovery.get(m, [0.0]))),
            "learning_s": sum(learning.get(m, [])),
            "learning_s_per_run": float(np.mean(learning.get(m, [0.0]))),
            "options": dict(sorted(options.get(m, {}).items(), key=lambda kv: int(kv[0]))),
        }
        for m in {*discovery, *learning}
    }
    costs["(demonstrations)"] = {"discovery_s": demonstrations}
    return costs


def degenerate_counts(warnings: Sequence[str], methods: Sequence[str]) -> dict[str, int]:
    """How many degenerate-option caveats the leaderboard gives each entry."""
    return {
        m: sum(w.startswith(f"degenerate option: {m}, seed ") for w in warnings) for m in methods
    }


def study_rows(
    study: Study, runs_dir: Path, out: Path, allow_incomplete: bool = False
) -> dict[str, Any]:
    """Copy one study's report files into ``out`` and return its part of ``field.json``.

    An incomplete run (failed or missing cells: the leaderboard's "incomplete run" caveats) is an
    error unless ``allow_incomplete``; then the caveats go into the table, and an entry that
    lacks some of a yardstick's seeds or tasks gets the verdict ``incomplete`` (:func:`decide`).
    """
    source = study.report_dir(runs_dir)
    for name in FILES:
        if not (source / name).is_file():
            raise MissingRun(f"missing {source / name} (run regenerate.sh first)")
    out.mkdir(parents=True, exist_ok=True)
    for name in FILES + OPTIONAL_FILES:
        if (source / name).is_file():
            shutil.copyfile(source / name, out / name)
    if study.variant is not None:
        for name in ("sweep.md", "sweep.csv"):
            shutil.copyfile(runs_dir / study.spec / name, out / name)
    board = json.loads((source / "leaderboard.json").read_text())
    incomplete = [w for w in board["warnings"] if w.startswith("incomplete run")]
    if incomplete and not allow_incomplete:
        raise CollectError(f"{source}: {incomplete[0]} (--allow-incomplete tabulates it anyway)")
    normalised = board.get("normalised")
    if normalised is None:
        raise CollectError(f"{source}/leaderboard.json: no normalised scores (no references)")
    vs_primitives = board["paired_probability_of_improvement"]["methods"]
    vs_paper = paired_against(
        source / "runs.json", PAPER, board["protocol"]["bootstrap"], allow_incomplete
    )
    runs = load_baseline(source / "runs.json").methods
    costs = discovery_cost_table((source / "leaderboard.md").read_text(), source)
    with RunView(runs_dir / study.spec, spec_hash=board["spec"]["hash"]) as view:
        seconds = cell_costs(view)
    methods = list(board["methods"])  # best first by auc IQM, as the leaderboard orders them
    flags = degenerate_counts(board["warnings"], methods)
    zero_shot = board.get("zero_shot_return", {})
    rows = {}
    for m in methods:
        p_prim = vs_primitives.get(m, {}).get(METRIC)
        p_paper = vs_paper.get(m)  # the verdicts are decide()'s, once every study is copied
        rows[m] = {
            "normalised_auc": normalised["methods"][m][METRIC],
            "p_auc_over_primitives": p_prim,
            "p_auc_over_offline_options": p_paper,
            "seeds_run": list(runs[m].seeds),
            "zero_shot_return": zero_shot.get(m, {}).get("mean"),
            "degenerate_option_flags": flags[m],
            **costs[m],
            **seconds[m],
        }
    return {
        "spec": study.spec,
        "spec_hash": board["spec"]["hash"],
        "variant": study.variant,
        "family": study.family,
        "seeds": board["protocol"]["seeds"],
        "tasks": board["protocol"]["tasks"],
        "normalisation": normalised["definition"],
        "demonstrations_s": seconds["(demonstrations)"]["discovery_s"],
        "incomplete": incomplete,
        "methods": rows,
    }


def _interval(e: Mapping[str, float], point: str) -> str:
    return (
        f"{e[point]:.2f} [{e['ci_low']:.2f}, {e['ci_high']:.2f}]"
        f" [{e['task_ci_low']:.2f}, {e['task_ci_high']:.2f}]"
    )


def _verdict(row: Mapping[str, Any], key: str) -> str:
    found = row.get(f"decision_{key}")
    return row[f"verdict_{key}"] if found is None else verdict_cell(found)


def _options(kept: Mapping[str, int | None]) -> str:
    return "/".join("?" if n is None else str(n) for n in kept.values()) or "—"  # seed order


def field_markdown(studies: Sequence[dict[str, Any]], pending: Sequence[Study]) -> str:
    """``field.md``: per family, a verdict table and a cost-and-diagnostics table."""
    lines = [
        "# The field's leaderboard",
        "",
        "Generated by `collect.py` from each study's `leaderboard.json`, `leaderboard.md`",
        "(Discovery cost), `runs.json` and its results store. auc = mean return over the",
        "learning budget; normalised per (seed, test task): 0 = uniform-random policy,",
        "1 = the expert. IQM and P intervals: 95%, the first with seeds (or pairs) resampled,",
        "the second with test tasks resampled; they describe, the verdict decides. P is the",
        "paired P(auc > Y) over (seed, test task).",
        "",
        f"**Verdict rule.** {VERDICT_RULE}"
        f" {familywise_statement(max(1, studies[0]['comparisons'])) if studies else ''}",
        "",
    ]
    for s in studies:
        variant = f", variant `{s['variant']}`" if s["variant"] else ""
        lines += [
            f"## {s['family']}: `{s['spec']}`{variant}",
            "",
            f"{s['seeds']} seeds x {s['tasks']} test tasks per method; spec hash"
            f" `{s['spec_hash'][:12]}`; normalisation: {s['normalisation']}.",
            "",
            *(
                f"> **Incomplete run** (tabulated with --allow-incomplete): {w}"
                for w in s["incomplete"]
            ),
            *([""] if s["incomplete"] else []),
            "| method | vs primitives | vs offline-options | normalised auc: IQM [seeds] [tasks]"
            " | P(auc > primitives) [pairs] [tasks] | P(auc > offline-options) [pairs] [tasks] |",
            "|---|---|---|---:|---:|---:|",
        ]
        for m, r in s["methods"].items():
            p1, p2 = r["p_auc_over_primitives"], r["p_auc_over_offline_options"]
            lines.append(
                f"| {m} | {_verdict(r, 'vs_primitives')} | {_verdict(r, 'vs_offline_options')}"
                f" | {_interval(r['normalised_auc'], 'iqm')}"
                f" | {'—' if p1 is None else _interval(p1, 'probability')}"
                f" | {'—' if p2 is None else _interval(p2, 'probability')} |"
            )
        lines += [
            "",
            "| method | options kept (per seed) | degenerate-option flags | zero-shot return"
            " | discovery env frames | demonstration steps | learning frames per run"
            " | discovery s per seed | learning s per run |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for m, r in s["methods"].items():
            z = r["zero_shot_return"]
            lines.append(
                f"| {m} | {_options(r['options'])} | {r['degenerate_option_flags']}"
                f" | {'—' if z is None else f'{z:.2f}'} | {r['discovery_env_frames']:,.0f}"
                f" | {r['demonstration_steps']:,.0f} | {r['learning_frames']:,.0f}"
                f" | {r['discovery_s_per_seed']:.1f} | {r['learning_s_per_run']:.2f} |"
            )
        lines += [
            "",
            "The demonstrations (shared by every method that reads them):"
            f" {s['demonstrations_s']:.1f} s of compute over all seeds. Seconds are each cell's"
            " compute as its worker timed it.",
            "",
        ]
    for study in pending:
        lines += [
            f"## {study.family}: `{study.spec}`",
            "",
            "**Pending**: its run had not finished when this table was collected; rerun",
            "`collect.py` once it has.",
            "",
        ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Copy and tabulate; exit status 2 (with a message) when a run is missing or incomplete."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs_dir", type=Path, nargs="?")
    parser.add_argument(
        "--verdicts-only",
        action="store_true",
        help="rewrite field.md/.json's verdicts from the committed copies here, without the runs",
    )
    parser.add_argument(
        "--allow-incomplete",
        action="store_true",
        help="tabulate a run with failed or missing cells, its caveats in the table",
    )
    parser.add_argument(
        "--only",
        metavar="SPEC",
        help="collect this study from RUNS_DIR and keep the other's committed copies here",
    )
    parser.add_argument(
        "--pending-ok",
        action="store_true",
        help="a study whose report is missing is written as pending instead of failing",
    )
    args = parser.parse_args(argv)
    if args.verdicts_only:
        return verdicts_only()
    if args.runs_dir is None:
        parser.error("RUNS_DIR is needed (or --verdicts-only)")
    if args.only is not None and args.only not in {s.spec for s in STUDIES}:
        parser.error(f"--only: {args.only!r} is not a study ({', '.join(s.spec for s in STUDIES)})")
    # --only: the other studies as committed here (their runs need not be in RUNS_DIR)
    kept = [] if args.only is None else _committed_studies(exclude=args.only)
    done, pending = list(kept), []
    for study in STUDIES:
        if any(row["spec"] == study.spec for row in kept):
            continue
        try:
            done.append(study_rows(study, args.runs_dir, HERE / study.spec, args.allow_incomplete))
        except CollectError as exc:
            if not (args.pending_ok and isinstance(exc, MissingRun)):
                print(f"collect.py: {exc}", file=sys.stderr)
                return 2
            print(f"collect.py: {study.spec} is PENDING ({exc})", file=sys.stderr)
            pending.append(study)
    done.sort(key=lambda row: [s.spec for s in STUDIES].index(row["spec"]))
    decide(done, HERE)
    document = {"verdict_rule": VERDICT_RULE, "studies": done, "pending": [s.spec for s in pending]}
    (HERE / "field.json").write_text(json.dumps(document, indent=1) + "\n")
    (HERE / "field.md").write_text(field_markdown(done, pending))
    committed = HERE / "provenance.json"
    old = json.loads(committed.read_text()) if kept and committed.is_file() else {}
    lost = [row["spec"] for row in kept if row["spec"] not in old]
    if lost:
        print(
            f"collect.py: --only keeps {lost[0]}, whose provenance {committed} lacks",
            file=sys.stderr,
        )
        return 2
    kept_specs = {row["spec"] for row in kept}
    provenance = {
        s["spec"]: old[s["spec"]]
        if s["spec"] in kept_specs
        else study_page.timed_provenance(args.runs_dir, s["spec"])
        for s in done
    }
    (HERE / "provenance.json").write_text(json.dumps(provenance, indent=1, sort_keys=True) + "\n")
    print(f"collect.py: wrote {HERE}" + (f" ({len(pending)} pending)" if pending else ""))
    return 0


def _committed_studies(exclude: str) -> list[dict[str, Any]]:
    """The studies of the committed ``field.json`` but ``exclude`` (``--only``'s others)."""
    document = json.loads((HERE / "field.json").read_text())
    return [row for row in document["studies"] if row["spec"] != exclude]


def verdicts_only() -> int:
    """Rewrite ``field.json`` / ``field.md`` with verdicts recomputed from the copies here."""
    document = json.loads((HERE / "field.json").read_text())
    done = document["studies"]
    decide(done, HERE)
    pending = [s for s in STUDIES if s.spec in document["pending"]]
    document["verdict_rule"] = VERDICT_RULE
    (HERE / "field.json").write_text(json.dumps(document, indent=1) + "\n")
    (HERE / "field.md").write_text(field_markdown(done, pending))
    print(f"collect.py: rewrote {HERE / 'field.md'}'s verdicts from the committed copies")
    return 0


if __name__ == "__main__":
    sys.exit(main())
