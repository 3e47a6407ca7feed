"""A Ray node dies mid-run: the cells it ran fail with one line each naming them, every other
cell finishes, the run exits 1, and rerunning the same command completes exactly what is missing,
to the numbers of an uninterrupted run."""

from __future__ import annotations

import os
import subprocess
import time

import pytest
from runner_support import (
    cli_command,
    done_cells,
    fakes,  # noqa: F401  (fixture)
    method,
    numbers,
    run_cli,
    write_spec,
)

pytestmark = [pytest.mark.usefixtures("fakes"), pytest.mark.ray, pytest.mark.slow]

# 3 seeds x 2 methods x (discovery + one evaluation) = 12 cells (and 3 references cells); the
# evaluations wait while a file exists, so one is surely mid-run on the node when it goes.
METHODS = (method("none", num_options=0), method("rand"))


def running_on(marks, node_id: str) -> bool:
    return marks.is_dir() and any(marks.glob(f"{node_id}.*.running"))


def test_a_node_dying_mid_run_fails_its_cells_and_a_rerun_completes(tmp_path, monkeypatch):
    pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")
    marks, hold = tmp_path / "marks", tmp_path / "hold"
    learner = {"hold_while_exists": str(hold), "mark_running_in": str(marks)}
    spec = write_spec(tmp_path, METHODS, learner=learner, seeds=3, test=1)
    clean = tmp_path / "clean"
    assert run_cli(spec, "--out", clean, "--workers", "0", "--quiet", "--no-report") == 0
    hold.touch()

    cluster = Cluster(
        initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False}
    )
    try:
        node = cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        out = tmp_path / "out"
        args = ("--out", out, "--backend", "ray", "--address", cluster.address, "--no-report")
        command = cli_command(spec, *args, "--quiet")
        env = dict(os.environ)
        driver = subprocess.Popen(command, cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True)
        # The node goes only while one of its evaluations is held mid-run (its marker says so):
        # waiting for "some cells done" raced a loaded machine where the node had not started
        # a worker yet, and nothing died with it.
        deadline = time.monotonic() + 120
        while not running_on(marks, node.node_id) and time.monotonic() < deadline:
            assert driver.poll() is None, "the run ended before a cell ran on the second node"
            time.sleep(0.05)
        assert running_on(marks, node.node_id), "no cell ran on the second node within 120 s"
        cluster.remove_node(node)
        hold.unlink(missing_ok=True)  # the head's held evaluation and the cells left finish
        _, err = driver.communicate(timeout=300)
        assert driver.returncode == 1, err
        lost = [line for line in err.splitlines() if line.startswith("failed: ")]
        assert lost and all("its worker was lost (NodeDiedError" in line for line in lost), err
        assert "rerun the same command to retry the failed cells" in err
        before = done_cells(out)
        assert before < 15  # 3 seeds x 2 methods x (discovery + evaluation) + 3 references

        rerun = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)
        assert rerun.returncode == 0, rerun.stderr
        assert f"({before} reused, {15 - before} computed) all done" in rerun.stderr
        assert numbers(out) == numbers(clean)
    finally:
        hold.unlink(missing_ok=True)
        cluster.shutdown()
