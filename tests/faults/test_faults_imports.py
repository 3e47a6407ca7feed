"""What a spec may import: an id's ``module:`` part names only a module of an installed package.

Naming a module runs its import. A spec that names ``unittest.__main__`` would run unittest at
``validate``, ``venv.__main__`` would create a virtual environment, and a ``.py`` beside the spec
would run under ``python -m opt_suite`` (its folder is the first entry of ``sys.path``).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from opt_suite.cli import main

SPEC = """\
name: imports
family:
  name: gymnasium
  params: {{id: "{id}"}}
tasks: {{count: 2, train: 1, test: 1}}
methods: [{{name: primitives, method: primitives}}]
evaluation: {{learner: tf_agents, frames: 1000}}
"""


@pytest.mark.parametrize(
    ("env_id", "why"),
    [
        ("unittest.__main__:X-v0", "a __main__ module runs a program"),
        ("venv.__main__:X-v0", "a __main__ module runs a program"),
        ("os:X-v0", "'os' is not a package of an installed distribution"),
    ],
)
def test_a_module_outside_installed_packages_is_a_located_error(
    tmp_path, capsys, monkeypatch, env_id, why
):
    monkeypatch.chdir(tmp_path)  # venv.__main__ would create its environment here
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.format(id=env_id))
    code = main(["validate", str(spec)])
    err = capsys.readouterr().err
    assert code == 2 and f"{spec}:4:" in err and why in err, err
    assert "family.params.id" in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spec.yaml"]  # nothing created


def test_a_file_beside_the_spec_is_not_run_even_under_an_installed_name(tmp_path):
    """One subprocess: ``python -m opt_suite`` in the spec's folder puts that folder on sys.path."""
    marker = tmp_path / "ran.txt"
    code = f"open({str(marker)!r}, 'w').write('ran')\n"
    (tmp_path / "beside.py").write_text(code)
    (tmp_path / "minigrid.py").write_text(code)  # shadows the installed minigrid package
    for env_id in ("beside:X-v0", "minigrid:MiniGrid-Empty-5x5-v0"):
        (tmp_path / "spec.yaml").write_text(SPEC.format(id=env_id))
        result = subprocess.run(
            [sys.executable, "-m", "opt_suite", "validate", "spec.yaml"],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=tmp_path,
        )
        assert result.returncode == 2 and "spec.yaml:4:" in result.stderr, result.stderr
        assert not marker.exists(), f"{env_id} ran a file from the spec's folder"
    assert "would be imported from" in result.stderr and "minigrid.py" in result.stderr


def test_validate_says_which_installed_module_an_id_imported(tmp_path, capsys):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.format(id="gymnasium.envs.classic_control:CartPole-v1"))
    assert main(["validate", str(spec)]) == 0
    out = capsys.readouterr().out
    assert "imported module 'gymnasium.envs.classic_control'" in out
    assert "naming a module runs its import" in out
