"""PPO experts' checkpoints travel with their demonstrations cell (runner.cells.DemonstrationsJob):
the run's ``experts/`` is written by the runner only, from what the cell's worker sends back, and a
cell that recomputes demonstrations is sent the checkpoints the run already has — so a cell reads
and writes them the same way on a Ray node that cannot see the run directory (the two-node test:
``tests/test_runner_ray_cluster.py``)."""

from __future__ import annotations

import pickle

import pytest
from runner_support import file_digests, forge_experts, run_cli, write_expert_spec

from opt_suite.runner import backends
from opt_suite.runner.cells import DemonstrationsJob

pytestmark = pytest.mark.slow


@pytest.fixture
def demonstrations_jobs(monkeypatch):
    """Every demonstrations job the in-process backend runs, as the bytes a Ray node receives."""
    sent: list[bytes] = []

    def spy(job):
        if isinstance(job, DemonstrationsJob):
            sent.append(pickle.dumps(job))
        return execute(job)

    execute = backends.execute
    monkeypatch.setattr(backends, "execute", spy)
    return sent


def test_a_recomputed_cell_reuses_the_runs_experts_and_a_missing_one_comes_back(
    tmp_path, demonstrations_jobs
):
    out = tmp_path / "out"
    assert run_cli(write_expert_spec(tmp_path), "--out", out, "--workers", "0", "--no-report") == 0
    trained = file_digests(out / "experts")
    assert len(trained) == 4, trained  # two train tasks: a checkpoint and its sidecar each

    # More trajectories: the demonstrations cell is recomputed, its experts' keys are not.
    forge_experts(out / "experts")
    forged = file_digests(out / "experts")
    assert forged != trained
    more = write_expert_spec(tmp_path, trajectories=3)
    assert run_cli(more, "--out", out, "--workers", "0", "--no-report") == 0
    # Loaded, not retrained: a retrained expert's bytes would have been written back.
    assert file_digests(out / "experts") == forged
    # What a node receives names no path of this machine: the checkpoints come as bytes.
    assert len(demonstrations_jobs) == 2
    assert all(str(tmp_path).encode() not in job for job in demonstrations_jobs)

    # A checkpoint the run lost (both files) is trained again, to the same bytes, and kept.
    lost = sorted((out / "experts").glob("expert-*.npz"))[0]
    for path in (lost, lost.with_name(lost.name + ".sha256.json")):
        path.unlink()
    again = write_expert_spec(tmp_path, trajectories=4)
    assert run_cli(again, "--out", out, "--workers", "0", "--no-report") == 0
    restored = file_digests(out / "experts")
    assert restored[lost.name] == trained[lost.name]
    assert restored[lost.name + ".sha256.json"] == trained[lost.name + ".sha256.json"]
    assert {k: v for k, v in restored.items() if not k.startswith(lost.name)} == {
        k: v for k, v in forged.items() if not k.startswith(lost.name)
    }


def test_a_references_cells_expert_travels_with_it_too(tmp_path, monkeypatch):
    # report.references: measure trains one expert per (seed, test task) in a references cell:
    # its checkpoint comes back to the run's experts/ and is sent with the cell next time.
    from opt_suite.runner.cells import ReferencesJob

    sent: list[bytes] = []
    execute = backends.execute

    def spy(job):
        if isinstance(job, ReferencesJob):
            sent.append(pickle.dumps(job))
        return execute(job)

    monkeypatch.setattr(backends, "execute", spy)
    spec = write_expert_spec(tmp_path)
    spec.write_text(
        spec.read_text().replace("baseline: null}", "baseline: null, references: measure}")
    )
    out = tmp_path / "out"
    assert run_cli(spec, "--out", out, "--workers", "0", "--no-report") == 0
    trained = file_digests(out / "experts")
    assert len(trained) == 6, trained  # two train tasks and the test task: checkpoint + sidecar
    assert len(sent) == 1 and str(tmp_path).encode() not in sent[0]

    # The references cell again (its row and pair file lost): it loads the run's expert.
    import sqlite3

    with sqlite3.connect(out / "results.sqlite") as conn:
        conn.execute("DELETE FROM cells WHERE kind = 'references'")
    for pair in (out / "references").glob("[0-9a-f]*.json"):
        pair.unlink()
    forge_experts(out / "experts")
    forged = file_digests(out / "experts")
    assert run_cli(spec, "--out", out, "--workers", "0", "--no-report") == 0
    assert len(sent) == 2 and file_digests(out / "experts") == forged  # loaded, not retrained
