"""Reference returns as cells of the plan (issue 38, item 2).

Each (seed, test task) reference pair is a ``references`` cell: computed by a worker, stored and
counted like any cell, resumed after an interrupt and reused by another spec with the same key.
Its numbers are those the runner measured in its own process before the pairs were cells:
``fixtures/references_before_cells.json`` was written on main before this change, by
``references.measure_references`` on the toy chain spec (seeds 0-1, 2 test tasks; and again with
the random policy sampled instead of evaluated exactly).
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
import yaml
from runner_support import fakes, run_cli, write_spec  # noqa: F401  (fakes: a fixture)

from opt_suite.runner import references as refs
from opt_suite.runner.planning import plan_spec, resolve_components, work_estimate
from opt_suite.spec import load_spec, spec_hash
from opt_suite.stages import Stage
from opt_suite.store import ResultsStore
from opt_suite.store.files import REFERENCES_DIR, references_file
from opt_suite.store.sealed import read_sealed

BEFORE = json.loads(
    (Path(__file__).parent / "fixtures" / "references_before_cells.json").read_text()
)

pytestmark = pytest.mark.usefixtures("fakes")


def _spec_references(spec: Path, out: Path) -> dict:
    return read_sealed(references_file(out, spec_hash(load_spec(spec))), "reference returns")


def _same_as_before(payload: dict, case: str) -> None:
    for key in ("seeds", "tasks", "random", "expert_returns", "expert"):
        assert payload[key] == BEFORE[case][key], key  # exact: the same floats


def _reference_cells(out: Path) -> list:
    with ResultsStore(out) as store:
        return [c for c in store.cells() if c.kind == Stage.REFERENCES]


def test_a_run_measures_the_references_of_before_in_its_workers(tmp_path):
    spec, out = write_spec(tmp_path, seeds=2, test=2), tmp_path / "out"
    assert run_cli(spec, "--out", out, "--workers", "1", "--quiet", "--no-report") == 0
    _same_as_before(_spec_references(spec, out), "chain-toy")
    cells = _reference_cells(out)
    assert len(cells) == 4 and {c.status for c in cells} == {"done"}
    # computed by the pool's worker, not by the runner (this process)
    assert {c.info["pid"] for c in cells} - {os.getpid()} == {c.info["pid"] for c in cells}
    for cell in cells:  # the cell is named by the pair's key: its sealed file's name
        pair = read_sealed(out / REFERENCES_DIR / f"{cell.cell_id}.json", "reference returns")
        assert (pair["random"], pair["expert"]) == (cell.info["random"], cell.info["expert"])
        assert pair["key"]["seed"] == cell.seed


def test_the_sampled_random_policy_keeps_each_pairs_seed_stream(tmp_path, monkeypatch):
    # No model: the random policy is sampled from the pair's own stream (reference_seed).
    # `measure`, since `auto` measures only families with a model; it is not in the pair's key.
    spec = write_spec(tmp_path, seeds=2, test=2)
    doc = yaml.safe_load(spec.read_text())
    doc["report"]["references"] = "measure"
    spec.write_text(yaml.safe_dump(doc, sort_keys=False))
    monkeypatch.setattr(refs, "exact_model", lambda *a: None)
    out = tmp_path / "out"
    # --workers 0: the cells run in this process, where the model is hidden
    assert run_cli(spec, "--out", out, "--workers", "0", "--quiet", "--no-report") == 0
    _same_as_before(_spec_references(spec, out), "chain-toy-sampled")


def test_an_interrupted_run_measures_only_the_missing_pairs(tmp_path, monkeypatch):
    spec, out = write_spec(tmp_path, seeds=2, test=2), tmp_path / "out"
    measured: list[tuple[int, int]] = []
    real = refs._measure  # what measure_pair calls when the pair has no trusted file

    def interrupted_on_the_third(spec_, components, family, task, seed, *args):
        if len(measured) == 2:  # SIGTERM while the third pair is measured: the run unwinds
            os.kill(os.getpid(), signal.SIGTERM)
        measured.append((seed, task.index))
        return real(spec_, components, family, task, seed, *args)

    monkeypatch.setattr(refs, "_measure", interrupted_on_the_third)
    args = (spec, "--out", out, "--workers", "0", "--quiet", "--no-report")
    assert run_cli(*args) == 128 + signal.SIGTERM
    with ResultsStore(out) as store:
        assert store.run().status == "interrupted"
    done = [c for c in _reference_cells(out) if c.status == "done"]
    assert len(done) == 2 and not references_file(out, spec_hash(load_spec(spec))).exists()
    first = list(measured)
    measured.clear()
    assert run_cli(*args) == 0
    # the rerun measures the two pairs not done, never the two done ones
    assert len(measured) == 2 and not set(measured) & set(first[:2]), (first, measured)
    _same_as_before(_spec_references(spec, out), "chain-toy")


def test_another_spec_with_the_same_pairs_reuses_them(tmp_path, monkeypatch):
    spec, out = write_spec(tmp_path, seeds=2, test=2), tmp_path / "out"
    assert run_cli(spec, "--out", out, "--workers", "0", "--quiet", "--no-report") == 0
    monkeypatch.setattr(refs, "_measure", lambda *a: pytest.fail("measured again"))
    other = write_spec(tmp_path, seeds=2, test=2, episodes=20, file="other.yaml")
    assert spec_hash(load_spec(other)) != spec_hash(load_spec(spec))
    assert run_cli(other, "--out", out, "--workers", "0", "--quiet", "--no-report") == 0
    _same_as_before(_spec_references(other, out), "chain-toy")


@pytest.mark.parametrize("references", ["auto", "none"])
def test_the_estimate_counts_the_references_cells(tmp_path, references):
    path = write_spec(tmp_path, seeds=2, test=2)
    doc = yaml.safe_load(path.read_text())
    doc["report"]["references"] = references
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    spec = load_spec(path)
    components = resolve_components(spec)
    family, train, _, plan = plan_spec(spec, [0, 1], components)
    planned = sum(1 for c in plan.cells if c.stage is Stage.REFERENCES)
    assert planned == (4 if references == "auto" else 0)
    assert work_estimate(spec, [0, 1], components, family, train).cells == len(plan.cells)


def _references_job(spec_path: Path, run_dir: Path):
    """The first references cell's job, as the runner builds it (its one assembly of jobs)."""
    import sys

    from opt_suite.runner.protocol import _Inputs

    spec = load_spec(spec_path)
    components = resolve_components(spec)
    plan = plan_spec(spec, [0], components)[3]
    cell = next(c for c in plan.cells if c.stage is Stage.REFERENCES)
    return _Inputs(spec, plan, components, run_dir, sys.stderr).job(cell)


def test_a_references_job_needs_no_run_directory_and_fails_with_one_line(tmp_path, monkeypatch):
    import pickle

    from opt_suite.runner.cells import execute

    job = _references_job(write_spec(tmp_path, seeds=1, test=2), tmp_path / "run")
    # what a Ray node receives names no path of this machine: it reads and writes no run file
    assert str(tmp_path).encode() not in pickle.dumps(job)
    done = execute(job)
    assert done.error is None
    assert (done.record.random, done.record.expert) == (
        BEFORE["chain-toy"]["random"][0][0],
        BEFORE["chain-toy"]["expert_returns"][0][0],
    )

    def broken(*args):
        raise ValueError("no expert\nfor this task")

    monkeypatch.setattr(refs, "_measure", broken)
    failed = execute(job)
    assert failed.error is not None and "\n" not in failed.error
    assert failed.error.startswith(
        f"reference returns not measured: seed 0, test task {job.task.task_id}: ValueError: "
        "for this task"
    )
    assert not failed.retryable  # the same inputs fail the same way


def test_a_folder_whose_references_are_no_cells_reports_as_before(tmp_path):
    # A folder written before the pairs were cells holds their files and no references cells:
    # the report reads the spec's file, so its normalised scores are the same.
    import sqlite3

    from opt_suite.cli import main

    spec, out = write_spec(tmp_path, seeds=2, test=2), tmp_path / "out"
    assert run_cli(spec, "--out", out, "--workers", "0", "--quiet") == 0
    board = (out / "leaderboard.json").read_text()
    assert '"normalised"' in board
    with sqlite3.connect(out / "results.sqlite") as conn:
        for table in ("cells", "plan"):
            conn.execute(f"DELETE FROM {table} WHERE kind = 'references'")
    assert not _reference_cells(out)
    (out / "leaderboard.json").unlink()
    assert main(["report", str(out)]) == 0
    assert (out / "leaderboard.json").read_text() == board
