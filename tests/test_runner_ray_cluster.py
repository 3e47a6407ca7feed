"""Joining a multi-node Ray cluster the way ``ray start`` makes one: token authentication on,
two raylets; the driver (another process, as a user's would be) gives the local backend's numbers
(a real ``ppo_expert`` spec's too, its experts' checkpoints included), and a node with other
opt-suite code is refused with one line naming it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from runner_support import (
    PLUGIN,
    REPO,
    cli_command,
    fakes,  # noqa: F401  (fixture)
    file_digests,
    forge_experts,
    forget_registered,
    numbers,
    register_plugin,
    run_cli,
    write_expert_spec,
    write_spec,
)

from opt_suite.store import ResultsStore

pytestmark = [pytest.mark.usefixtures("fakes"), pytest.mark.ray, pytest.mark.slow]


@pytest.fixture(scope="module")
def token_cluster(tmp_path_factory):
    """Two raylets of one CPU each, with token authentication, as ``ray start --head`` runs them
    once ``~/.ray/auth_token`` exists (HOME is this module's folder: the user's is not touched).

    One cluster for the module's tests (starting one costs seconds): the fake plugin is on its
    nodes' path from the start, and a test that adds a node removes it before the next test.
    """
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    home = tmp_path_factory.mktemp("home")
    (home / ".ray").mkdir(parents=True)
    (home / ".ray" / "auth_token").write_text("opt-suite-test-token-0123456789abcdef")
    from ray._raylet import AuthenticationTokenLoader, Config

    def fresh_auth() -> None:
        # This process may have run Ray already (another test file on this xdist worker), with
        # another mode and a cached token: refresh the config, then drop the cached token.
        Config.initialize("")
        AuthenticationTokenLoader.instance().reset_cache()

    with pytest.MonkeyPatch.context() as monkeypatch:
        register_plugin(monkeypatch, PLUGIN)  # the raylets' workers import the fakes
        monkeypatch.setenv("HOME", str(home))
        monkeypatch.setenv("RAY_AUTH_MODE", "token")  # what `ray start` sets when a token exists
        monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")
        fresh_auth()
        cluster = Cluster(
            initialize_head=True,
            head_node_args={"num_cpus": 1, "include_dashboard": False},
        )
        try:
            cluster.add_node(num_cpus=1)
            cluster.wait_for_nodes()
            yield cluster
        finally:
            if ray.is_initialized():
                ray.shutdown()
            cluster.shutdown()
            monkeypatch.delenv("RAY_AUTH_MODE")
            fresh_auth()
    forget_registered()


def _driver(cwd: Path, *args) -> subprocess.CompletedProcess:
    """``opt-suite run ARGS`` as a user's driver: RAY_AUTH_MODE unset, the token in ~/.ray.

    Run outside the checkout: Ray puts the driver's working directory first on every worker's
    path, which would hide each node's own install.
    """
    env = {k: v for k, v in os.environ.items() if k != "RAY_AUTH_MODE"}
    return subprocess.run(
        cli_command(*args), capture_output=True, text=True, timeout=300, cwd=cwd, env=env
    )


def test_a_two_node_cluster_gives_the_local_numbers(tmp_path, token_cluster):
    spec = write_spec(tmp_path)
    local, joined = tmp_path / "local", tmp_path / "joined"
    assert run_cli(spec, "--out", local, "--workers", "0", "--quiet", "--no-report") == 0
    args = ("--backend", "ray", "--address", token_cluster.address, "--quiet", "--no-report")
    result = _driver(tmp_path, spec, "--out", joined, *args)
    assert result.returncode == 0, result.stderr
    assert numbers(joined) == numbers(local)
    with ResultsStore(joined) as store:
        assert store.run().backend == "ray" and store.run().workers == 2  # both raylets' CPUs

    # A third node whose opt_suite is another source (an edited copy first on its path).
    other = tmp_path / "other-install"
    shutil.copytree(
        Path(REPO) / "opt_suite", other / "opt_suite", ignore=shutil.ignore_patterns("__pycache__")
    )
    with (other / "opt_suite" / "limits.py").open("a") as f:
        f.write("\n# an edit: another source digest\n")
    path = os.environ["PYTHONPATH"]
    os.environ["PYTHONPATH"] = f"{other}{os.pathsep}{path}"
    try:
        node = token_cluster.add_node(num_cpus=0)
        token_cluster.wait_for_nodes()
    finally:
        os.environ["PYTHONPATH"] = path
    try:
        result = _driver(tmp_path, spec, "--out", tmp_path / "refused", *args)
    finally:  # the module's next test joins the two raylets alone
        token_cluster.remove_node(node)
        token_cluster.wait_for_nodes()
    assert result.returncode == 2, result.stderr
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith("opt-suite run: error: the Ray cluster at "), line
    assert f"(id {node.node_id[:12]}) has opt_suite 'opt-suite" in line, line
    assert "install the same opt-suite and plugins on every node" in line
    assert not (tmp_path / "refused" / "results.sqlite").exists()


def test_a_ppo_expert_spec_on_two_nodes_gives_the_local_numbers_and_experts(
    tmp_path, token_cluster
):
    """A real spec (FrozenLake, ``ppo_expert`` demonstrations, 2 seeds: a demonstrations cell per
    raylet): the same cells and the same expert checkpoints, by content, in the driver's ``--out``
    as a local run — and a rerun that recomputes the demonstrations loads the run's experts on
    whichever node it runs (forged valid ones stay as they are; a retrained one would be sent
    back)."""
    spec = write_expert_spec(tmp_path, seeds=2)
    local, joined = tmp_path / "local", tmp_path / "joined"
    assert run_cli(spec, "--out", local, "--workers", "0", "--quiet", "--no-report") == 0
    args = ("--backend", "ray", "--address", token_cluster.address, "--quiet", "--no-report")
    result = _driver(tmp_path, spec, "--out", joined, *args)
    assert result.returncode == 0, result.stderr
    assert numbers_and_files(joined) == numbers_and_files(local)
    assert len(file_digests(joined / "experts")) == 8  # 2 seeds x 2 train tasks, with sidecars
    assert file_digests(joined / "experts") == file_digests(local / "experts")

    for run in (local, joined):
        forge_experts(run / "experts")
    forged = file_digests(joined / "experts")
    more = write_expert_spec(tmp_path, seeds=2, trajectories=3)
    assert run_cli(more, "--out", local, "--workers", "0", "--quiet", "--no-report") == 0
    result = _driver(tmp_path, more, "--out", joined, *args)
    assert result.returncode == 0, result.stderr
    assert file_digests(joined / "experts") == forged
    assert numbers_and_files(joined) == numbers_and_files(local)


def numbers_and_files(run: Path) -> tuple[list, dict[str, str]]:
    """The run's episodes and every cell file but ``cell.json`` (when and where), by digest."""
    with ResultsStore(run) as store:
        episodes = [tuple(r.__dict__.values()) for r in store.episodes()]
    return episodes, file_digests(run / "cells")
