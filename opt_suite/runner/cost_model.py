"""What a run will cost in time: each cell priced from a calibration, the plan scheduled on workers.

The work estimate (:mod:`.estimate`) counts cells and env steps; this turns them into seconds.

* **A cell's price** is ``per_cell + per_unit * units`` seconds of its worker. ``units`` are the
  env steps the cell takes at most (:func:`cell_units`: an evaluation's run and zero-shot
  episodes, a discovery's interaction budget, the experts' training and demonstrations, a
  reference's expert). The two coefficients belong to the cell's *cost key*
  (:func:`cost_key`): its stage, its component (the learner, the method, the source), the
  environment, and for an evaluation the method whose options it runs: the options' networks
  run at every step, so a clone's evaluation costs more than primitives' on the same learner.
* **The calibration** (``cell_costs.json`` beside this module) holds those coefficients, fitted
  by ``docs/gen_estimates.py`` from runs of the bundled specs timed on the project's 2-core
  machine (:func:`fit`), plus the run's fixed cost (start-up, planning, the report) per run and
  per cell. A key it never saw is priced by the nearest key it did (same stage and component on
  another environment, then the stage alone) and the estimate says how many cells were priced so.
* **The wall time** is the plan scheduled as ``runner/scheduler.py`` runs it (:func:`schedule`):
  ready cells in (stage, seed, entry) order, each to the first free worker, plus the fixed cost.
* **The ETA** of the progress line uses the same prices (``progress.eta_from_prices``): elapsed x
  (price of the cells left / price of the cells done), which corrects the calibration for this
  machine's speed and load as the run goes.

Pure functions of the plan and the calibration: nothing here runs a cell.
"""

from __future__ import annotations

import dataclasses
import heapq
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from opt_suite.stages import Stage

if TYPE_CHECKING:
    from opt_suite.runner.cell import Cell
    from opt_suite.spec import Spec

__all__ = [
    "CALIBRATION",
    "Calibration",
    "Rate",
    "Sample",
    "TimeEstimate",
    "cell_units",
    "cost_key",
    "environment_of",
    "estimate_time",
    "fit",
    "load_calibration",
    "schedule",
]

#: The committed calibration (written by docs/gen_estimates.py; package data).
CALIBRATION = Path(__file__).with_name("cell_costs.json")
#: Key parts, in order: what a price is looked up by, most specific first.
KEY_PARTS = ("stage", "component", "environment", "runs")


def environment_of(spec: Spec) -> str:
    """The environment a spec's cells run: the family, and its env id when it has one."""
    env_id = getattr(spec.family.params, "id", None)
    return spec.family.name if env_id is None else f"{spec.family.name}:{env_id}"


def cost_key(cell: Cell, spec: Spec, method_types: Sequence[str]) -> tuple[str, str, str, str]:
    """(stage, component, environment, runs) of ``cell``: what its price is looked up by.

    ``method_types`` are the registered method names of ``spec.methods`` in order; ``runs`` is the
    method whose options an evaluation runs (empty for the other stages).
    """
    env = environment_of(spec)
    if cell.stage is Stage.EVALUATION:
        return (cell.kind, spec.evaluation.learner, env, method_types[cell.position])
    if cell.stage is Stage.DISCOVERY:
        return (cell.kind, method_types[cell.position], env, "")
    return (cell.kind, spec.demonstrations.source, env, "")  # demonstrations, references


def cell_units(cell: Cell, per_stage: Mapping[str, Any]) -> float:
    """The env steps ``cell`` takes at most, from :func:`.estimate.stage_units`' ``per_stage``."""
    if cell.stage is Stage.DISCOVERY:
        return float(per_stage["discovery"][cell.position])
    return float(per_stage[cell.kind])


@dataclasses.dataclass(frozen=True)
class Rate:
    """Seconds of a worker for one cell of a key: ``per_cell + per_unit * units``.

    ``cells`` is how many timed cells it was fitted from, ``specs`` the timed specs they came from.
    """

    per_cell: float
    per_unit: float
    cells: int
    specs: tuple[str, ...] = ()

    def price(self, units: float) -> float:
        """Seconds for one cell of ``units`` env steps."""
        return self.per_cell + self.per_unit * units


@dataclasses.dataclass(frozen=True)
class Sample:
    """One timed cell: its key, its units, the seconds its worker spent (``wall_s``), its spec."""

    key: tuple[str, str, str, str]
    units: float
    seconds: float
    spec: str


@dataclasses.dataclass(frozen=True)
class Calibration:
    """Fitted rates per cost key, and the run's fixed cost: ``fixed_s + fixed_per_cell_s * cells``.

    ``fixed_by_learner`` replaces ``fixed_s`` for a run whose test-time learner it names: a run
    whose workers import TensorFlow starts slower than a tabular one. ``machine`` says where the
    timed runs ran (the figures hold for that machine kind).
    """

    rates: Mapping[tuple[str, str, str, str], Rate]
    fixed_s: float
    fixed_per_cell_s: float
    machine: str = ""
    fixed_by_learner: Mapping[str, float] = dataclasses.field(default_factory=dict)

    def fixed_for(self, learner: str) -> float:
        """Seconds a run with ``learner`` costs beyond its cells (``fixed_s`` if never timed)."""
        return self.fixed_by_learner.get(learner, self.fixed_s)

    def price(self, key: tuple[str, str, str, str], units: float) -> tuple[float, int]:
        """(seconds, how many key parts were dropped to find a rate: 0 = the key itself).

        Falls back by dropping the key's last parts (another method's evaluation on the same
        learner and environment, then the same component anywhere, then the stage): the mean
        price of the rates that share the kept parts, at these ``units``. With none, (nan, 4).
        """
        for dropped in range(len(KEY_PARTS)):
            kept = len(KEY_PARTS) - dropped
            if dropped == 0:
                rate = self.rates.get(key)
                if rate is not None:
                    return rate.price(units), 0
                continue
            near = [r for k, r in self.rates.items() if k[:kept] == key[:kept]]
            if near:
                return sum(r.price(units) for r in near) / len(near), dropped
        return math.nan, len(KEY_PARTS)

    def to_json(self) -> str:
        """The committed file's text (``cell_costs.json``): rates sorted by key."""
        rates = [
            {
                **dict(zip(KEY_PARTS, key, strict=True)),
                "per_cell_s": round(rate.per_cell, 6),
                "per_unit_s": float(f"{rate.per_unit:.6g}"),
                "cells": rate.cells,
                "specs": list(rate.specs),
            }
            for key, rate in sorted(self.rates.items())
        ]
        body = {
            "machine": self.machine,
            "fixed_s": round(self.fixed_s, 3),
            "fixed_per_cell_s": round(self.fixed_per_cell_s, 6),
            "fixed_by_learner": {k: round(v, 3) for k, v in sorted(self.fixed_by_learner.items())},
            "rates": rates,
        }
        return json.dumps(body, indent=1) + "\n"

    @classmethod
    def from_json(cls, text: str) -> Calibration:
        """The calibration of a ``cell_costs.json`` text."""
        body = json.loads(text)
        rates = {
            tuple(str(row[p]) for p in KEY_PARTS): Rate(
                float(row["per_cell_s"]),
                float(row["per_unit_s"]),
                int(row["cells"]),
                tuple(row.get("specs", ())),
            )
            for row in body["rates"]
        }
        return cls(
            rates,  # type: ignore[arg-type]  # 4-tuples of str by KEY_PARTS
            float(body["fixed_s"]),
            float(body["fixed_per_cell_s"]),
            str(body.get("machine", "")),
            {str(k): float(v) for k, v in body.get("fixed_by_learner", {}).items()},
        )


def load_calibration(path: Path = CALIBRATION) -> Calibration | None:
    """The committed calibration, or None when there is none (nothing is priced then)."""
    try:
        return Calibration.from_json(path.read_text())
    except FileNotFoundError:
        return None


def fit(samples: Iterable[Sample]) -> dict[tuple[str, str, str, str], Rate]:
    """Each key's rate from its timed cells: least squares of seconds on units, both terms >= 0.

    A key whose cells all take the same units (the usual case: one spec's evaluations all run the
    same budget) cannot separate the two terms; its time is then taken as proportional to the
    units (``per_unit`` = mean seconds / units), so a spec with twice the budget costs twice as
    much, which holds for the cells that step an env. Cells of no units cost ``per_cell``.
    """
    grouped: dict[tuple[str, str, str, str], list[Sample]] = {}
    for sample in samples:
        grouped.setdefault(sample.key, []).append(sample)
    rates = {}
    for key, group in grouped.items():
        units = [s.units for s in group]
        seconds = [s.seconds for s in group]
        mean_s = sum(seconds) / len(seconds)
        mean_u = sum(units) / len(units)
        specs = tuple(sorted({s.spec for s in group}))
        spread = sum((u - mean_u) ** 2 for u in units)
        if spread > 0:
            slope = (
                sum((u - mean_u) * (t - mean_s) for u, t in zip(units, seconds, strict=True))
                / spread
            )
            slope = max(0.0, slope)
            intercept = mean_s - slope * mean_u
            if intercept < 0:  # through the origin instead
                slope = sum(u * t for u, t in zip(units, seconds, strict=True)) / sum(
                    u * u for u in units
                )
                intercept = 0.0
            rates[key] = Rate(intercept, slope, len(group), specs)
        elif mean_u > 0:
            rates[key] = Rate(0.0, mean_s / mean_u, len(group), specs)
        else:
            rates[key] = Rate(mean_s, 0.0, len(group), specs)
    return rates


def schedule(cells: Sequence[Cell], seconds: Mapping[str, float], workers: int) -> float:
    """The wall time of running ``cells`` (their ``seconds`` each) on ``workers`` workers.

    As ``runner/scheduler.py`` does: the cells wait in (stage, seed, entry) order; whenever a
    worker is free, the first waiting cell whose dependencies are done starts on it.
    """
    if workers < 1:
        raise ValueError(f"schedule: workers must be >= 1, got {workers}")
    waiting = sorted(cells, key=lambda c: (c.stage.order, c.seed, c.position))
    done_at: dict[str, float] = {}
    ids = {c.cell_id for c in cells}
    running: list[tuple[float, str]] = []  # (finish time, cell id), a heap
    now = 0.0
    while waiting or running:
        started = False
        for cell in list(waiting):
            if len(running) >= workers:
                break
            if all(d in done_at or d not in ids for d in cell.deps):
                waiting.remove(cell)
                heapq.heappush(running, (now + max(0.0, seconds[cell.cell_id]), cell.cell_id))
                started = True
        if not running:
            if waiting and not started:  # a dependency that never finishes: not a plan
                raise ValueError("schedule: cells wait on dependencies that never run")
            continue
        now, finished = heapq.heappop(running)
        done_at[finished] = now
    return now


@dataclasses.dataclass(frozen=True)
class TimeEstimate:
    """A run's wall time on ``workers`` workers, and how its cells were priced."""

    wall_s: float
    workers: int
    cells: int
    fallback: int  # cells priced by a nearer key's rate, not their own
    unpriced: int  # cells with no rate at all (the stage was never timed)
    machine: str

    def describe(self) -> str:
        """One line for people (``validate`` prints it)."""
        from opt_suite.runner.progress import format_duration

        if self.unpriced:
            return (
                f"no time estimate: {self.unpriced} of {self.cells} cells are of a stage the"
                " calibration never timed"
            )
        near = (
            f"; {self.fallback} of {self.cells} cells priced by a similar component's rate"
            if self.fallback
            else ""
        )
        return (
            f"about {format_duration(self.wall_s)} with --workers {self.workers}"
            f" on {self.machine or 'the calibration machine'}{near}"
        )


def estimate_time(
    cells: Sequence[Cell],
    keyed: Mapping[str, tuple[tuple[str, str, str, str], float]],
    calibration: Calibration,
    workers: int,
    done: Iterable[str] = (),
    learner: str = "",
) -> TimeEstimate:
    """The wall time of one run computing ``cells`` on ``workers`` workers, from ``calibration``.

    ``keyed`` gives each cell's (cost key, units) (``runner.planning.cost_keys``); the cells in
    ``done`` are already computed (an earlier variant of a sweep computed them) and cost nothing;
    ``learner`` (the spec's ``evaluation.learner``) chooses the run's fixed cost.
    """
    skip = set(done)
    todo = [c for c in cells if c.cell_id not in skip]
    priced = {c.cell_id: calibration.price(*keyed[c.cell_id]) for c in todo}
    unpriced = sum(1 for s, _ in priced.values() if math.isnan(s))
    fallback = sum(1 for s, d in priced.values() if d and not math.isnan(s))
    if unpriced:
        return TimeEstimate(math.nan, workers, len(todo), fallback, unpriced, calibration.machine)
    present = {c.cell_id for c in todo}
    # A done cell's dependents start at once: schedule() treats a dependency outside its cells so.
    makespan = schedule(todo, {k: s for k, (s, _) in priced.items() if k in present}, workers)
    fixed = calibration.fixed_for(learner) + calibration.fixed_per_cell_s * len(todo)
    return TimeEstimate(makespan + fixed, workers, len(todo), fallback, 0, calibration.machine)
