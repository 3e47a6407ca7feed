"""The head of a joined Ray cluster dies mid-run: the driver stops with one line saying so (exit
1, not 2: nothing was wrong with the input), every finished cell is stored and the run is marked
``interrupted``; rerunning the same command against a new cluster computes exactly what is
missing, to the numbers of an uninterrupted run. (A worker node dying: test_faults_ray_node.py.)"""

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

from opt_suite.store import ResultsStore

pytestmark = [pytest.mark.usefixtures("fakes"), pytest.mark.ray, pytest.mark.slow]

# 3 seeds x 2 methods x (discovery + one evaluation) = 12 cells, and 3 references cells: the
# evaluations wait while a file exists, so the head goes with all of them still to run, however
# loaded the machine (no sleeps to race).
METHODS = (method("none", num_options=0), method("rand"))


def new_cluster(nodes: int):
    """A Ray cluster of ``nodes`` raylets, 2 CPUs in all (no dashboard: nothing here reads it)."""
    from ray.cluster_utils import Cluster

    head = {"num_cpus": 2 // nodes, "include_dashboard": False}
    cluster = Cluster(initialize_head=True, head_node_args=head)
    for _ in range(nodes - 1):
        cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    return cluster


def test_the_head_dying_mid_run_stops_it_with_one_line_and_a_rerun_completes(tmp_path, monkeypatch):
    pytest.importorskip("ray")
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")
    hold = tmp_path / "hold"
    spec = write_spec(tmp_path, METHODS, learner={"hold_while_exists": str(hold)}, seeds=3, test=1)
    clean = tmp_path / "clean"
    assert run_cli(spec, "--out", clean, "--workers", "0", "--quiet", "--no-report") == 0
    hold.touch()

    out = tmp_path / "out"
    cluster = new_cluster(nodes=2)  # the head goes while the other raylet still runs cells
    try:
        command = cli_command(spec, "--out", out, "--backend", "ray", "--quiet", "--no-report")
        address = cluster.address
        driver = subprocess.Popen(
            [*command, "--address", address],
            cwd=tmp_path,
            env=dict(os.environ),
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 120
        while done_cells(out) < 2 and time.monotonic() < deadline:
            assert driver.poll() is None, "the run ended before the head went"
            time.sleep(0.05)
        cluster.remove_node(cluster.head_node)
        _, err = driver.communicate(timeout=120)
    finally:
        hold.unlink(missing_ok=True)
        cluster.shutdown()
    assert driver.returncode == 1, err
    last = err.strip().splitlines()[-1]
    assert last.startswith(
        f"opt-suite run: error: the Ray cluster stopped answering mid-run (cannot reach the Ray"
        f" cluster at {address}: "
    ), last
    assert last.endswith(
        "rerun the same command against a running cluster to compute what is missing"
    ), last
    before = done_cells(out)
    assert 2 <= before < 15
    with ResultsStore(out) as store:
        assert store.run().status == "interrupted"

    cluster = new_cluster(nodes=1)  # any running cluster: the rerun is about what it computes
    try:
        rerun = subprocess.run(
            [*command, "--address", cluster.address],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        cluster.shutdown()
    assert rerun.returncode == 0, rerun.stderr
    assert f"({before} reused, {15 - before} computed) all done" in rerun.stderr
    assert numbers(out) == numbers(clean)
