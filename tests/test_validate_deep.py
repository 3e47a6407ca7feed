"""Contracts callable without pytest (``check_*``) and ``opt-suite validate --deep``.

A broken method must come back as a list naming every check it fails, never a traceback. Each
``check_method`` spawns one interpreter (the TensorFlow-import check): a few seconds per call.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest

from opt_suite import registry
from opt_suite.cli import main
from opt_suite.methods.base import Discovery, Method
from opt_suite.options import TabularOptionSet

HERE = Path(__file__).resolve().parent

SPEC = """\
extends: chain-validation
name: deep-broken
evaluation: {episodes: 10, seeds: 1}
methods+:
  - {name: bad, method: broken}
"""


class Broken(Method):
    """Returns an option that is no distribution, declares none, and keeps an object in info."""

    name = "broken"  # description left empty: a contract failure

    @dataclasses.dataclass  # not frozen: a contract failure
    class Params:
        count: int = 1

    @classmethod
    def option_count(cls, params):
        return 0  # fewer than discover returns

    def discover(self, context):
        S, A = context.family.observation_space.n, context.family.action_space.n
        mu = np.full((1, S, A), 0.9)  # rows do not sum to 1
        return Discovery(TabularOptionSet(mu, np.zeros((1, S))), info={"model": object()})


@pytest.fixture
def broken_registered(monkeypatch):
    load = registry.load

    def patched(group, name):
        return Broken if (group, name) == (registry.METHODS, "broken") else load(group, name)

    monkeypatch.setattr(registry, "load", patched)
    # the checks' TensorFlow-import check imports this module in a fresh interpreter
    monkeypatch.setenv("PYTHONPATH", str(HERE))


def test_check_method_lists_every_failed_check_without_pytest(broken_registered):
    from opt_suite.testing import check_method

    problems = check_method(Broken)
    failed = {line.split(":")[0] for line in problems}
    assert failed == {
        "class attributes",
        "default params construct",
        "acting gives distributions",
        "declares at least the options it returns",
        "info is json serialisable",
    }, problems
    assert any("option_count says 0, discover returned 1 options" in p for p in problems)
    assert "pytest" not in sys.modules["opt_suite.testing.method_checks"].__dict__


def test_validate_deep_lists_every_failed_check_and_exits_2(broken_registered, tmp_path, capsys):
    path = tmp_path / "deep.yaml"
    path.write_text(SPEC)
    status = main(["validate", "--deep", str(path)])
    out, err = capsys.readouterr()
    assert status == 2, err
    assert out.startswith("ok: deep-broken")  # the spec itself is valid
    lines = err.splitlines()
    assert all(
        line.startswith(f"{path}: deep check: methods[1] 'bad' (broken): ") for line in lines
    )
    assert len(lines) == 5 and "Traceback" not in err
