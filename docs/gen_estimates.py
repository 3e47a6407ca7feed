"""Calibrate the run-time model from timed runs, and measure how well it plans: docs/estimates.md.

``opt-suite validate`` prints how long a spec will take and the progress line's ETA prices what is
left (``opt_suite/runner/cost_model.py``); both read ``opt_suite/runner/cell_costs.json``, which
this script fits from runs of the bundled specs timed on the project's 2-core machine:

    python docs/gen_timings.py --measure SPEC --keep DIR    # time a run, keep its folder
    python docs/gen_estimates.py --export DIR/SPEC ...      # its cells -> docs/timings/cells/
    python docs/gen_estimates.py                            # fit the calibration, write the page
    python docs/gen_estimates.py --check                    # exit 1 when either is stale

``docs/timings/cells/<spec>.json`` holds what the fit and the page read of a timed run: every
planned cell's cost key, env steps, dependencies and the seconds its worker spent on it, and each
run's (a sweep's variant's) start and end. The page compares, for every timed spec, the measured
wall time (``docs/timings/<spec>.json``) with ``validate``'s estimate (fitted on every timed
spec, and fitted on the others only), and the ETA the progress line would have shown at 10%, 25%
and 50% of the cells with what the run then took.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the docs scripts' own helper
from generated_page import duration, short_commit, write_or_check  # noqa: E402

from opt_suite.runner.cell import Cell  # noqa: E402
from opt_suite.runner.cost_model import (  # noqa: E402
    CALIBRATION,
    KEY_PARTS,
    Calibration,
    Sample,
    estimate_time,
    fit,
    schedule,
)
from opt_suite.runner.progress import eta_from_prices  # noqa: E402
from opt_suite.stages import Stage  # noqa: E402

HERE = Path(__file__).resolve().parent
TIMINGS = HERE / "timings"
CELLS = TIMINGS / "cells"
OUTPUT = HERE / "estimates.md"
MACHINE = "the project's 2-core machine"
#: Where the progress line's ETA is judged: after this fraction of a run's computed cells.
ETA_POINTS = (0.1, 0.25, 0.5)
COLUMNS = (
    "cell",
    "stage",
    "seed",
    "position",
    *KEY_PARTS[1:],
    "units",
    "deps",
    "wall_s",
    "finished_s",
    "run",
)
ID = 16  # cell-id characters kept: unique within a plan


# -- export: a kept run's store -> docs/timings/cells/<spec>.json ---------------------------------
def export(directory: Path) -> Path:
    """Write what the fit needs of the timed run in ``directory``; return the file written."""
    from opt_suite.run_view import RunView
    from opt_suite.runner.planning import cost_keys

    with RunView(directory) as view:
        runs = view.store.runs()
    hashes = list(dict.fromkeys(r.spec_hash for r in runs))
    out_runs: list[dict[str, Any]] = []
    rows: list[list[Any]] = []
    seen: set[str] = set()
    for index, spec_hash in enumerate(hashes):
        with RunView(directory, spec_hash=spec_hash) as view:
            info = view.info
            if info.finished is None or info.status != "done":
                raise SystemExit(f"{directory}: run of {view.label} did not finish: time it again")
            spec, components = view.spec(), view.components()
            plan = view.plan(info.seeds)
            keyed = cost_keys(spec, components, plan)
            stored = {c.cell_id: c for c in view.store.cells()}
            # This code's plan names its cells by this code's source digest; the run's by its
            # own. Both plan the same cells in the same order: pair them by position.
            ids = _stored_ids(directory, info.run_id, plan)
            out_runs.append(
                {
                    "spec": info.spec_name,
                    "spec_hash": spec_hash,
                    "commit": info.git_commit,
                    "workers": info.workers,
                    "wall_s": round(info.finished - info.started, 2),
                    "cells": len(plan.cells),
                }
            )
            for cell in plan.cells:
                cell_id = ids[cell.cell_id]
                if cell_id in seen:
                    continue  # computed by an earlier variant: priced there
                seen.add(cell_id)
                got = stored[cell_id]
                if got.status != "done" or got.wall_s is None or got.finished is None:
                    raise SystemExit(f"{directory}: {cell.label} is {got.status}: time it again")
                key, units = keyed[cell.cell_id]
                rows.append(
                    [
                        cell_id[:ID],
                        cell.kind,
                        cell.seed,
                        cell.position,
                        *key[1:],
                        units,
                        [ids[d][:ID] for d in cell.deps],
                        round(got.wall_s, 3),
                        round(got.finished - info.started, 3),
                        index,
                    ]
                )
    name = directory.name  # gen_timings.py --keep names the folder after the spec
    CELLS.mkdir(parents=True, exist_ok=True)
    path = CELLS / f"{name}.json"
    body = {"spec": name, "runs": out_runs, "columns": list(COLUMNS), "cells": rows}
    path.write_text(json.dumps(body, separators=(",", ":")) + "\n")
    return path


def _stored_ids(directory: Path, run_id: int, plan: Any) -> dict[str, str]:
    """This code's cell id -> the run's, pairing the two plans cell by cell (same order)."""
    import sqlite3

    from opt_suite.store import DB_NAME

    uri = f"file:{directory / DB_NAME}?mode=ro"
    with sqlite3.connect(uri, uri=True) as conn:
        rows = conn.execute(
            "SELECT cell_id, kind, method, seed, position FROM plan WHERE run_id = ?"
            " ORDER BY rowid",  # the order the run recorded its plan in: its cells' order
            (run_id,),
        ).fetchall()
    if len(rows) != len(plan.cells):
        raise SystemExit(
            f"{directory}: run {run_id} planned {len(rows)} cells, this code plans"
            f" {len(plan.cells)}: export with the code that ran it"
        )
    ids = {}
    for cell, (stored, kind, method, seed, position) in zip(plan.cells, rows, strict=True):
        if (cell.kind, cell.method, cell.seed, cell.position) != (kind, method, seed, position):
            raise SystemExit(
                f"{directory}: run {run_id}'s plan differs from this code's at"
                f" {cell.label}: export with the code that ran it"
            )
        ids[cell.cell_id] = stored
    return ids


# -- reading the committed timings ----------------------------------------------------------------
def timed() -> dict[str, dict[str, Any]]:
    """Every exported timed run with its measured wall time, by spec name."""
    found = {}
    for path in sorted(CELLS.glob("*.json")):
        body = json.loads(path.read_text())
        measured = TIMINGS / f"{body['spec']}.json"
        if not measured.exists():
            raise SystemExit(f"{path}: no measured wall time {measured}: time it with gen_timings")
        body["measured"] = json.loads(measured.read_text())
        body["rows"] = [dict(zip(body["columns"], row, strict=True)) for row in body["cells"]]
        found[body["spec"]] = body
    return found


def _key(row: dict[str, Any]) -> tuple[str, str, str, str]:
    return (row["stage"], row["component"], row["environment"], row["runs"])


def samples(runs: dict[str, dict[str, Any]]) -> list[Sample]:
    """Every timed cell as a fit sample."""
    return [
        Sample(_key(row), float(row["units"]), float(row["wall_s"]), name)
        for name, body in runs.items()
        for row in body["rows"]
    ]


def _cells(body: dict[str, Any], run: int) -> list[Cell]:
    """The cells a run computed, as the scheduler sees them (order and dependencies)."""
    return [
        Cell(r["cell"], Stage(r["stage"]), r["seed"], None, r["position"], tuple(r["deps"]), {})
        for r in body["rows"]
        if r["run"] == run
    ]


def actual_makespan(body: dict[str, Any]) -> float:
    """The cells' own schedule with their measured seconds, summed over the runs (variants)."""
    seconds = {r["cell"]: float(r["wall_s"]) for r in body["rows"]}
    return sum(
        schedule(_cells(body, run), seconds, int(info["workers"]))
        for run, info in enumerate(body["runs"])
    )


def calibrate(runs: dict[str, dict[str, Any]]) -> Calibration:
    """Rates fitted on ``runs``' cells; the fixed cost from what the schedule does not explain.

    The fixed cost of a timed spec is its measured wall time minus its cells' schedule (start-up,
    planning, the store, the report); ``fixed_s`` per run and ``fixed_per_cell_s`` are its least
    squares fit over the timed specs (both >= 0), and ``fixed_by_learner`` the per-run part
    refitted on each test-time learner's specs.
    """
    rates = fit(samples(runs))
    points = [
        (len(b["runs"]), len(b["rows"]), b["measured"]["wall_s"] - actual_makespan(b))
        for b in runs.values()
    ]
    fixed_s, per_cell = _fixed_fit(points)
    # Per learner, the fixed cost per run alone (least squares through the origin on runs): a
    # tabular run's workers start in seconds, a TensorFlow learner's import TensorFlow first.
    by_learner: dict[str, list[tuple[int, float]]] = {}
    for body, (n_runs, cells, extra) in zip(runs.values(), points, strict=True):
        by_learner.setdefault(_learner(body), []).append((n_runs, extra - per_cell * cells))
    fixed_by = {
        learner: max(0.0, sum(r * e for r, e in pts) / sum(r * r for r, _ in pts))
        for learner, pts in by_learner.items()
    }
    return Calibration(rates, fixed_s, per_cell, MACHINE, fixed_by)


def _learner(body: dict[str, Any]) -> str:
    """The test-time learner of a timed spec: its evaluation cells' component."""
    return next((r["component"] for r in body["rows"] if r["stage"] == "evaluation"), "")


def _fixed_fit(points: list[tuple[int, int, float]]) -> tuple[float, float]:
    """Least squares of ``extra = a * runs + b * cells`` with a, b >= 0 (a only, if b < 0)."""
    if not points:
        return 0.0, 0.0
    srr = sum(r * r for r, _, _ in points)
    scc = sum(c * c for _, c, _ in points)
    src = sum(r * c for r, c, _ in points)
    sre = sum(r * e for r, _, e in points)
    sce = sum(c * e for _, c, e in points)
    det = srr * scc - src * src
    if det > 0:
        a = (sre * scc - sce * src) / det
        b = (srr * sce - src * sre) / det
        if a >= 0 and b >= 0:
            return a, b
    return max(0.0, sre / srr), 0.0


def estimate(body: dict[str, Any], calibration: Calibration) -> tuple[float, int]:
    """(wall seconds, cells priced by a similar key) of a timed spec under ``calibration``."""
    keyed = {r["cell"]: (_key(r), float(r["units"])) for r in body["rows"]}
    total, fallback = 0.0, 0
    for run, info in enumerate(body["runs"]):
        cells = _cells(body, run)
        found = estimate_time(cells, keyed, calibration, int(info["workers"]), (), _learner(body))
        total += found.wall_s  # each run (a sweep's variant) with its own fixed cost
        fallback += found.fallback
    return total, fallback


def eta_errors(body: dict[str, Any], calibration: Calibration) -> dict[float, tuple[float, float]]:
    """At each of ETA_POINTS of the first run's cells: (priced, counted) relative ETA errors.

    The progress line's prediction of the run's end (elapsed + ETA) against when it ended: the
    priced ETA of the cost model, and the count-based one (elapsed / cells done x cells left).
    """
    rows = sorted((r for r in body["rows"] if r["run"] == 0), key=lambda r: r["finished_s"])
    actual = float(body["runs"][0]["wall_s"])
    price = {r["cell"]: calibration.price(_key(r), float(r["units"]))[0] for r in rows}
    errors = {}
    for point in ETA_POINTS:
        k = max(1, math.ceil(point * len(rows)))
        elapsed = float(rows[k - 1]["finished_s"])
        done = sum(price[r["cell"]] for r in rows[:k])
        left = sum(price[r["cell"]] for r in rows[k:])
        priced = eta_from_prices(elapsed, done, left)
        counted = elapsed / k * (len(rows) - k)
        errors[point] = (
            math.nan if priced is None else (elapsed + priced) / actual - 1,
            (elapsed + counted) / actual - 1,
        )
    return errors


# -- the page ------------------------------------------------------------------------------------
HEADER = """\
# Estimates: how long a run will take, and how far off that was

<!-- Generated by docs/gen_estimates.py from docs/timings/: do not edit by hand. -->

`opt-suite validate SPEC` prints how long the spec will take with `--workers N` (default 2), and
the progress line's ETA prices the cells left. Both come from one time model
(`opt_suite/runner/cost_model.py`):

- **a cell's price** is `per_cell + per_unit × env steps` seconds of a worker, with two
  coefficients per *cost key*: the cell's stage, its component (learner, method or demonstration
  source), the environment, and for an evaluation the method whose options it runs;
- **the wall time** is the plan scheduled as the runner schedules it (ready cells in stage, seed,
  entry order, each to the first free worker), plus a fixed cost per run (per test-time learner)
  and per cell (start-up,
  planning, the store, the report);
- **the ETA** is the elapsed time × (price of the cells left / price of the cells done): the
  prices set the proportions, the run's own pace sets the speed, so a faster or busier machine
  than the calibration's corrects itself as the run goes.

The coefficients (`opt_suite/runner/cell_costs.json`) are least-squares fits to every timed cell
of the runs below (`docs/timings/cells/`), on {machine}. A key the calibration never saw is
priced by the nearest one it did (another method's evaluation on the same learner and
environment, then the same component elsewhere, then the stage) and `validate` says how many
cells were priced so; a stage never timed gives no estimate at all.
"""


def _pct(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x * 100:+.0f}%"


def render(runs: dict[str, dict[str, Any]], calibration: Calibration) -> str:
    """The page: the estimate's and the ETA's errors for every timed spec."""
    parts = [HEADER.format(machine=MACHINE)]
    parts += [
        "## validate's estimate against the measured wall time",
        "",
        "Measured: `python docs/gen_timings.py --measure SPEC` (`opt-suite run SPEC --workers 2`"
        " into a fresh folder; its load is in [timings.md](timings.md)). *Fitted on all*: the"
        " committed calibration, which includes this spec's own cells. *Fitted on the others*: a"
        " calibration fitted without this spec, as for a spec never timed; its cells are then"
        " priced by similar keys (the last column counts them) or, when their stage was never"
        " timed elsewhere, not at all.",
        "",
        "| spec | cells | measured | fitted on all | error | fitted on the others | error |"
        " priced by a similar key |",
        "|---|---|---|---|---|---|---|---|",
    ]
    worst, worst_short = 0.0, 0.0  # relative error of runs >= a minute; seconds of shorter ones
    unseen: list[float] = []  # the errors fitted on the other specs
    for name, body in runs.items():
        measured = float(body["measured"]["wall_s"])
        own, _ = estimate(body, calibration)
        others = {k: v for k, v in runs.items() if k != name}
        out_cal = calibrate(others) if others else None
        if out_cal is not None:
            out, fallback = estimate(body, out_cal)
        else:
            out, fallback = math.nan, 0
        error = own / measured - 1
        if measured >= 60:
            worst = max(worst, abs(error))
        else:  # under a minute the fixed cost (start-up, the report) is most of it: say seconds
            worst_short = max(worst_short, abs(own - measured))
        if not math.isnan(out):
            unseen.append(out / measured - 1)
        out_text = "n/a" if math.isnan(out) else duration(out)
        parts.append(
            f"| `{name}` | {len(body['rows'])} | {duration(measured)} | {duration(own)} |"
            f" {_pct(error)} | {out_text} | {_pct(out / measured - 1)} |"
            f" {fallback} of {len(body['rows'])} |"
        )
    parts += [
        "",
        f"Largest error of the committed calibration: {worst * 100:.0f}% on the runs of a minute"
        f" or more (the target is ±30%); {worst_short:.0f} s on the shorter ones, where the fixed"
        " cost per run, fitted over all of them, is most of the time.",
        "",
        f"Fitted on the others, the errors range from {_pct(min(unseen, default=math.nan))} to"
        f" {_pct(max(unseen, default=math.nan))}: a spec on an environment never timed is priced"
        " by other environments' rates, and environments differ in cost per step by more than"
        " the model can know. Timing one run calibrates it: `python docs/gen_timings.py"
        " --measure SPEC --keep DIR`, then `python docs/gen_estimates.py --export DIR/SPEC`. The"
        " ETA below needs no such run: it takes its speed from the run itself.",
        "",
        "## The progress line's ETA",
        "",
        "Replayed from each run's cell finish times (its first run, for a sweep): at 10%, 25% and"
        " 50% of the cells computed, the predicted end (elapsed + ETA) against the run's measured"
        " end (`runs.finished - runs.started` in its store). *priced*: the time model's ETA;"
        " *counted*: elapsed / cells done × cells left, the ETA before it.",
        "",
        "| spec | " + " | ".join(f"{p:.0%} priced | {p:.0%} counted" for p in ETA_POINTS) + " |",
        "|---|" + "---|---|" * len(ETA_POINTS),
    ]
    for name, body in runs.items():
        errors = eta_errors(body, calibration)
        cells = " | ".join(f"{_pct(errors[p][0])} | {_pct(errors[p][1])}" for p in ETA_POINTS)
        parts.append(f"| `{name}` | {cells} |")
    parts += [
        "",
        "## The timed runs",
        "",
        "| spec | runs | commit | load | date |",
        "|---|---|---|---|---|",
    ]
    for name, body in runs.items():
        m = body["measured"]
        parts.append(
            f"| `{name}` | {len(body['runs'])} | `{short_commit(m.get('commit'))}` |"
            f" {m['load_before']} → {m['load_after']} | {m['date']} |"
        )
    return "\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Export what is asked, then fit and write the calibration and the page (or check them)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--export", nargs="*", default=[], type=Path, metavar="RUN_DIR")
    parser.add_argument("--check", action="store_true", help="exit 1 if stale")
    args = parser.parse_args(argv)
    for directory in args.export:
        print(f"wrote {export(directory)}")
    runs = timed()
    calibration = calibrate(runs)
    status = write_or_check(CALIBRATION, calibration.to_json(), "gen_estimates.py", args.check)
    return max(
        status, write_or_check(OUTPUT, render(runs, calibration), "gen_estimates.py", args.check)
    )


if __name__ == "__main__":
    sys.exit(main())
