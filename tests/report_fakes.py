"""Synthetic results for the report, statistics and compare tests: tables and real stores.

``linear_table`` is built so that every metric can be worked out by hand: the return of episode
``e`` (0-based) of seed ``s`` on task ``t`` for a method with shift ``k`` is

    r = -10 + e + s + 2 t + k                                   (+ optional noise)

so with E episodes, ``auc = E/2 - 10.5 + s + 2t + k`` and the trailing 10-episode mean ending at
1-based episode ``E'`` is ``E' - 15.5 + s + 2t + k``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import yaml

from opt_suite.report import EpisodeTable
from opt_suite.spec.schema import ReportSpec
from opt_suite.store.writer import CellRecord, StoreWriter


def linear_returns(shift: float, seeds: int, tasks: int, episodes: int) -> np.ndarray:
    s, t, e = np.meshgrid(np.arange(seeds), np.arange(tasks), np.arange(episodes), indexing="ij")
    return -10.0 + e + s + 2.0 * t + shift


def linear_table(
    shifts: Mapping[str, float],
    seeds: int = 2,
    tasks: int = 2,
    episodes: int = 20,
    noise: float = 0.0,
    noise_seed: int = 0,
) -> EpisodeTable:
    """One method per entry of ``shifts`` (in order), returns as in the module docstring."""
    rng = np.random.default_rng(noise_seed)
    rows = []
    for name, shift in shifts.items():
        r = linear_returns(shift, seeds, tasks, episodes)
        r = r + noise * rng.normal(size=r.shape)
        for s in range(seeds):
            for t in range(tasks):
                for e in range(episodes):
                    rows.append((name, s, t, e, float(r[s, t, e]), 100 + e))
    return EpisodeTable.from_rows(rows)


def spec_yaml(
    name: str, report: ReportSpec, tasks_per_seed: bool = False, family: str | None = None
) -> str:
    """A stand-in for a resolved spec: only the sections the report reads, each whole (the report
    reads them through the spec's converter, as validate would)."""
    doc: dict = {"name": name, "report": dataclasses.asdict(report)}
    if family is not None:
        doc["family"] = {"name": family, "params": {}}
    if tasks_per_seed:
        doc["tasks"] = {"count": 8, "train": 2, "test": 4, "test_per_seed": True}
    return yaml.safe_dump(doc, sort_keys=False)


def write_store(
    directory: Path,
    table: EpisodeTable,
    *,
    spec_name: str = "synthetic",
    spec_hash: str = "0123456789abcdef",
    report: ReportSpec | None = None,
    failed: Sequence[tuple[str, int]] = (),
    unfinished: Sequence[tuple[str, int]] = (),
    tasks_per_seed: bool = False,
    draw: int = 0,
    family: str | None = None,
    recorded_family: Mapping[str, str] | None = None,
) -> Path:
    """Write ``table`` as one run's evaluation cells, like the runner does.

    Cells (method, seed) in ``failed`` are recorded as failed, those in ``unfinished`` are planned
    but never written; their episodes are not stored. ``tasks_per_seed``: each seed drew its own
    test tasks (``tasks.test_per_seed``); ``draw`` shifts every task's goal (another task draw).
    ``family``: the stored spec's ``family.name``; ``recorded_family``: the family's facts the
    runner records with the run (None: as a run recorded before it did).
    """
    report = report if report is not None else ReportSpec()
    writer = StoreWriter(directory)
    methods = table.methods()
    seeds = sorted({int(s) for s in table.seed})
    tasks = sorted({int(t) for t in table.task})
    run = writer.begin_run(
        spec_name=spec_name,
        spec_hash=spec_hash,
        spec_yaml=spec_yaml(spec_name, report, tasks_per_seed, family),
        provenance={
            "versions": {},
            "host": "test",
            **({} if recorded_family is None else {"family": dict(recorded_family)}),
        },
        backend="local",
        workers=1,
        seeds=seeds,
        argv=["opt-suite", "run"],
    )
    plan = [
        (f"eval-{m}-{s}", "evaluation", m, s, position)
        for position, m in enumerate(methods)
        for s in seeds
    ]
    splits = [(f"test/seed{s}", 100 * (s + 1)) for s in seeds] if tasks_per_seed else [("test", 0)]
    rows = [
        (split, t, f"synthetic/{split}/{t}", {"goal": t + offset + draw})
        for split, offset in splits
        for t in tasks
    ]
    writer.record_plan(run, plan, rows)
    for cell_id, _, m, s, _ in plan:
        if (m, s) in unfinished:
            continue
        episodes = []
        for t in tasks:
            mask = (table.method == m) & (table.seed == s) & (table.task == t)
            order = np.argsort(table.episode[mask])
            picked = (table.returns[mask], table.steps[mask], table.frames[mask])
            episodes.append((t, *(column[order] for column in picked)))
        record = CellRecord(
            cell_id=cell_id,
            kind="evaluation",
            method=m,
            seed=s,
            inputs={"method": m, "seed": s},
            started=0.0,
            finished=1.0,
            wall_s=1.0,
            host="test",
            episodes=episodes,
        )
        if (m, s) in failed:
            writer.record_failure(record, "Traceback ...\nRuntimeError: diverged")
        else:
            writer.commit_cell(record)
    status = "failed" if failed else "done"
    writer.finish_run(run, status, {"total": len(plan), "failed": len(failed)})
    writer.close()
    return directory


def stored_run(demonstrations: Mapping[int, Sequence] | None = None, spec: str = "name: x\n"):
    """A :class:`~opt_suite.report.section.StoredRun` over a store that holds only demonstrations.

    For the sections that read cells alone any run does; ``demonstrations`` (seed -> trajectories)
    feed the demonstrations and degenerate-options sections, ``spec`` is the stored spec's YAML.
    """
    import types

    from opt_suite.report.section import StoredRun
    from opt_suite.spec.stored import stored_sections

    demos = dict(demonstrations or {})
    store = types.SimpleNamespace(
        seeds=lambda: sorted(demos),
        demonstrations=lambda seed: list(demos.get(seed, [])),
        option_set_file=lambda method, seed: None,
        recorded_file=lambda cell_id, name: None,
    )
    return StoredRun(store, stored_sections(spec))
