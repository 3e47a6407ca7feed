"""A third-party task family, pip-installed, is validated and listed like a built-in one.

The package in ``tests/fixtures/plugin_family`` registers ``toy_corridor`` under the
``opt_suite.families`` entry point group. It is installed with pip into a temporary folder (never
into the shared venv) and used through ``PYTHONPATH`` in fresh processes, so the registry's entry
point cache starts empty.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

FIXTURE = Path(__file__).parent / "fixtures" / "plugin_family"

SPEC = textwrap.dedent(
    """\
    name: toy-plugin
    description: A spec on a family that opt_suite does not ship.
    family:
      name: toy_corridor
      params: {length: 8}
    tasks:
      count: 4
      train: 2
      test: 2
      vary: {goal_side: right}
      list:
        - {start: 1, goal: 7}
    methods:
      - {name: primitives, method: primitives}
    evaluation: {episodes: 10, seeds: 1}
    """
)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("plugin")
    # Build from a copy: pip builds in the source tree and would leave build/ and *.egg-info there.
    source = shutil.copytree(
        FIXTURE, work / "src", ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__")
    )
    target = work / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index"]
        + ["--no-build-isolation", "--target", str(target), str(source)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    assert (target / "toy_corridor" / "__init__.py").exists()
    return target


def run(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(site)},
        timeout=120,
    )


def test_plugin_family_is_listed(site, tmp_path):
    result = run(site, tmp_path, "-m", "opt_suite", "list", "--json")
    assert result.returncode == 0, result.stderr
    families = {entry["name"]: entry for entry in json.loads(result.stdout)["families"]}
    assert families["toy_corridor"] == {
        "name": "toy_corridor",
        "description": "toy corridor (test plugin): walk left or right to the goal",
        "env_id": "toy_corridor/Corridor-v0",
        "error": None,
    }
    assert "fourrooms" in families  # the built-ins are still there


def test_spec_on_the_plugin_family_validates(site, tmp_path):
    (tmp_path / "toy.yaml").write_text(SPEC)
    result = run(site, tmp_path, "-m", "opt_suite", "validate", "toy.yaml", "--resolved")
    assert result.returncode == 0, result.stderr
    assert (
        "  name: toy_corridor\n  params:\n    length: 8\n    step_reward: -1.0\n" in result.stdout
    )


def test_plugin_params_and_tasks_are_checked(site, tmp_path):
    bad = SPEC.replace("{length: 8}", "{lenght: 8}").replace(
        "{start: 1, goal: 7}", "{start: 9, goal: 0}"
    )
    (tmp_path / "bad.yaml").write_text(bad)
    result = run(site, tmp_path, "-m", "opt_suite", "validate", "bad.yaml")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "bad.yaml:5:12: family.params.lenght: unknown key; did you mean 'length'? (expected one "
        "of: length, step_reward)",
        "bad.yaml:12:15: tasks.list[0].start: cell 9 is outside the corridor of 6",
    ]


def test_plugin_env_is_a_working_gymnasium_env(site, tmp_path):
    code = textwrap.dedent(
        """\
        import numpy as np
        from gymnasium.utils.env_checker import check_env
        from opt_suite import registry

        family_cls = registry.load(registry.FAMILIES, "toy_corridor")
        family = family_cls(family_cls.Params(length=5))
        train, test = family.make_tasks(family_cls.Variation("right"), [], 3, 2, 1, seed=0)
        env = family.make_env(test[0])
        check_env(env.unwrapped, skip_render_check=True)
        obs, _ = env.reset(seed=0)
        steps, done = 0, False
        while not done:
            obs, reward, done, truncated, _ = env.step(1)
            steps += 1
        assert obs == 4 and steps == 4 - test[0].params.start, (obs, steps)
        print("ok", test[0].task_id)
        """
    )
    result = run(site, tmp_path, "-W", "error", "-c", code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok toy_corridor/test/0"


def test_the_installed_plugin_passes_the_shipped_contract(site, tmp_path):
    """The plugin's own tests inherit opt_suite.testing; nothing from this repository's tests/."""
    contract = FIXTURE / "contract" / "toy_corridor_contract.py"  # not collected here
    shutil.copy(contract, tmp_path / contract.name)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")  # not this repository's settings
    result = run(site, tmp_path, "-m", "pytest", "-q", "-p", "no:cacheprovider", contract.name)
    assert result.returncode == 0, result.stdout + result.stderr
    assert " passed" in result.stdout and "failed" not in result.stdout
