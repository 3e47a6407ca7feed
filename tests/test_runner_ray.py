"""The Ray backend gives exactly the numbers of the local one, alone or joining a cluster."""

from __future__ import annotations

import sys

import pytest
from runner_support import (
    fakes,  # noqa: F401  (fixture)
    numbers,
    run_cli,
    run_subprocess,
    write_spec,
)

from opt_suite.store import ResultsStore

pytestmark = pytest.mark.usefixtures("fakes")


@pytest.fixture
def ray_cluster():
    """A local two-CPU Ray cluster started by this test (after the fakes are on PYTHONPATH)."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


@pytest.mark.ray
@pytest.mark.slow
def test_ray_gives_the_local_numbers(tmp_path, ray_cluster):
    spec = write_spec(tmp_path)
    local, on_ray, joined = tmp_path / "local", tmp_path / "ray", tmp_path / "joined"
    assert run_cli(spec, "--out", local, "--workers", "2", "--quiet", "--no-report") == 0
    # this process's cluster is used as is ...
    assert run_cli(spec, "--out", on_ray, "--backend", "ray", "--quiet", "--no-report") == 0
    assert numbers(on_ray) == numbers(local)
    assert ResultsStore(on_ray).run().backend == "ray"
    # ... and another process joins it with --address
    args = (spec, "--out", joined, "--backend", "ray", "--address", ray_cluster, "--no-report")
    result = run_subprocess(*args)
    assert result.returncode == 0, result.stderr
    assert numbers(joined) == numbers(local)


def test_missing_ray_is_a_clear_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    assert run_cli(write_spec(tmp_path), "--out", tmp_path / "out", "--backend", "ray") == 2
    err = capsys.readouterr().err
    assert "--backend ray needs Ray: pip install 'opt-suite[ray]'" in err
