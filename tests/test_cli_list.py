"""``opt-suite list``: families, methods, learners and bundled specs; broken plugins listed."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from spec_fakes import VALID, fake_registry

from opt_suite import registry
from opt_suite.cli import list_cmd, main
from opt_suite.spec import bundled_specs


@pytest.fixture(autouse=True)
def _fakes():
    with fake_registry():
        yield


@pytest.fixture
def with_broken_method(monkeypatch):
    """A registered method whose entry point fails to import."""
    load, names = registry.load, registry.names

    def broken_load(group, name):
        if name == "broken":
            raise registry.RegistryError(
                "method 'broken' is registered as nowhere:Broken but failed to load: "
                "ModuleNotFoundError: No module named 'nowhere'"
            )
        return load(group, name)

    monkeypatch.setattr(registry, "load", broken_load)
    monkeypatch.setattr(
        registry,
        "names",
        lambda g: sorted(names(g) + (["broken"] if g == registry.METHODS else [])),
    )


def test_text_listing(capsys, with_broken_method):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        "Task families\n"
        "  NAME  GYMNASIUM ID  DESCRIPTION\n"
        "  grid  fake/Grid-v0  A fake grid family for spec tests.\n"
        "\n"
        "Methods\n"
        "  NAME        LEARNS FROM     DESCRIPTION\n"
        "  broken      -               ERROR: method 'broken' is registered as nowhere:Broken but "
        "failed to load: ModuleNotFoundError: No module named 'nowhere'\n"
        "  options     demonstrations  Fake option learner.\n"
        "  primitives  -               No options.\n"
        "\n"
        "Test-time learners\n"
        "  NAME             DESCRIPTION\n"
        "  smdp_q_learning  Fake learner.\n"
        "\n"
        "Demonstration sources\n"
        "  NAME     DESCRIPTION\n"
        "  optimal  Fake demonstration source.\n"
        "\n"
        "Bundled specs (opt-suite validate NAME / opt-suite run NAME)\n"
    )
    assert re.search(
        r"\n  fourrooms-paper +The four-rooms experiment of Garcia, Nota & Thomas", out
    )


def test_json_listing(capsys, with_broken_method):
    assert main(["list", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert listing["families"] == [
        {
            "name": "grid",
            "description": "A fake grid family for spec tests.",
            "env_id": "fake/Grid-v0",
            "error": None,
        }
    ]
    methods = {m["name"]: m for m in listing["methods"]}
    assert methods["options"] == {
        "name": "options",
        "description": "Fake option learner.",
        "uses_demonstrations": True,
        "uses_interaction": False,
        "error": None,
    }
    assert methods["broken"]["error"].startswith("method 'broken' is registered as nowhere:Broken")
    assert [s["file"] for s in listing["specs"]] == [str(p) for p in bundled_specs()]
    assert {s["name"] for s in listing["specs"]} >= {
        "fourrooms-quick",
        "fourrooms-paper",
        "chain-validation",
    }
    assert all(s["error"] is None and s["description"] for s in listing["specs"])


def test_spec_descriptions_follow_extends_and_report_errors(tmp_path):
    (tmp_path / "base.yaml").write_text(VALID)
    (tmp_path / "child.yaml").write_text("extends: base.yaml\nname: child\n")
    (tmp_path / "bad.yaml").write_text("name: [\n")
    assert list_cmd.describe_spec(tmp_path / "child.yaml") == {
        "name": "child",
        "file": str(tmp_path / "child.yaml"),
        "description": "A small spec for tests.",
        "error": None,
    }
    bad = list_cmd.describe_spec(tmp_path / "bad.yaml")
    assert bad["name"] == "bad" and bad["error"].startswith(f"{tmp_path / 'bad.yaml'}:2:1: ")


def test_validate_and_list_never_import_tensorflow_or_numba():
    """Both commands on the real registry and a real bundled spec, in one fresh process.

    numba alone costs seconds of import (it once came in through an import cycle of the
    demonstrations package and the intra-option learner's kernels); compiled code is imported
    where it runs.
    """
    code = (
        "import sys\n"
        "from opt_suite.cli import main\n"
        "main(['validate', 'fourrooms-quick'])\n"
        "main(['list'])\n"
        "names = ('tensorflow', 'tf_keras', 'tf_agents', 'numba', 'llvmlite')\n"
        "heavy = sorted(m for m in names if m in sys.modules)\n"
        "assert not heavy, heavy\n"
        "print('no tensorflow, no numba')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok: fourrooms-quick (hash ")
    assert result.stdout.endswith("no tensorflow, no numba\n")


def test_params_show_every_key_as_a_yaml_template(capsys):
    assert main(["list", "--params"]) == 0
    out = capsys.readouterr().out
    assert (
        "  grid  fake/Grid-v0  A fake grid family for spec tests.\n"
        "      family.params:\n"
        "        layout: small      # one of 'small', 'large' - grid layout\n"
        "        size: 8            # int, >= 2 and <= 100 - side length\n"
        "        slip: 0.1          # float, >= 0 and < 1 - probability of a random move\n"
        "        step_reward: -1.0  # float - reward per step\n"
        "        walls: []          # a list of [int, int] - extra wall cells\n"
        "        max_steps: null    # int or null, >= 1 and <= 10000000000 - episode cap\n"
        "        diagonal: false    # bool - allow diagonal moves\n"
    ) in out
    assert (
        "      tasks.list[]:\n"
        "        start: (required)  # [int, int], >= 0 and <= 10000000000 - start cell (row, col)\n"
    ) in out
    assert (
        "  primitives  -               No options.\n      methods[].params: {}   # no parameters\n"
        in out
    )


def test_params_in_json(capsys):
    assert main(["list", "--json", "--params"]) == 0
    listing = json.loads(capsys.readouterr().out)
    learner = listing["learners"][0]["params"]["evaluation.params"]
    assert learner[0] == {
        "key": "alpha",
        "type": "float",
        "default": "0.1",
        "range": "> 0 and <= 1",
        "doc": "step size",
    }
