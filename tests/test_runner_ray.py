"""The Ray backend gives exactly the numbers of the local one, alone or joining a cluster."""

from __future__ import annotations

import subprocess
import sys

import pytest
from runner_support import (
    REPO,
    fakes,  # noqa: F401  (fixture)
    numbers,
    run_cli,
    run_subprocess,
    write_spec,
)

from opt_suite.store import ResultsStore

pytestmark = pytest.mark.usefixtures("fakes")


# Ray keeps per-process state (its config, a cached auth token) that an in-process cluster of
# another test file on the same xdist worker would inherit: this test's Ray runs in a child.
_RAY_CHILD = """
import sys
import ray
ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
print(ray.get_runtime_context().gcs_address, flush=True)
sys.stdin.read()  # until the test closes it
ray.shutdown()
"""


@pytest.fixture
def ray_cluster():
    """A local two-CPU Ray cluster in a child process (after the fakes are on PYTHONPATH)."""
    child = subprocess.Popen(
        [sys.executable, "-c", _RAY_CHILD],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    try:
        address = child.stdout.readline().strip()  # type: ignore[union-attr]
        assert address, "the Ray child printed no address"
        yield address
    finally:
        child.communicate(timeout=120)


@pytest.mark.ray
@pytest.mark.slow
def test_ray_gives_the_local_numbers(tmp_path, ray_cluster):
    spec = write_spec(tmp_path)
    local, joined = tmp_path / "local", tmp_path / "joined"
    assert run_cli(spec, "--out", local, "--workers", "2", "--quiet", "--no-report") == 0
    args = (spec, "--out", joined, "--backend", "ray", "--address", ray_cluster, "--no-report")
    result = run_subprocess(*args)
    assert result.returncode == 0, result.stderr
    assert numbers(joined) == numbers(local)
    assert ResultsStore(joined).run().backend == "ray"
    # the references cells too: the same spec file of reference returns
    [ours], [theirs] = ((d / "references").glob("spec-*.json") for d in (joined, local))
    assert ours.read_text() == theirs.read_text()


def test_missing_ray_is_a_clear_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    assert run_cli(write_spec(tmp_path), "--out", tmp_path / "out", "--backend", "ray") == 2
    err = capsys.readouterr().err
    assert "--backend ray needs Ray: pip install 'opt-suite[ray]'" in err
