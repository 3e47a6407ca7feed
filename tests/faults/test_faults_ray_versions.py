"""The driver's code check of every Ray node (runner/ray_cluster.check_nodes), without a cluster:
a node without opt-suite (its check cannot even be unpickled there) or with another version is
one line naming the node and what to install. A two-raylet cluster with an edited install on
one node: tests/test_runner_ray_cluster.py."""

from __future__ import annotations

import types

import pytest

from opt_suite.runner.ray_cluster import NodeCodeMismatch, check_nodes
from opt_suite.runner.versions import code_fingerprint

pytest.importorskip("ray")
pytestmark = pytest.mark.ray
NODE = {"Alive": True, "NodeID": "2f8b188f9398" + "0" * 44, "NodeManagerAddress": "10.0.0.7"}
MODULES = ["opt_suite"]


class FakeRay:
    """The few calls check_nodes makes; ``answer`` is what the node's check returns or raises."""

    class exceptions:  # noqa: N801  (ray.exceptions)
        GetTimeoutError = TimeoutError

    def __init__(self, answer):
        self.answer = answer

    def nodes(self):
        return [NODE, {"Alive": False, "NodeID": "dead"}]

    def remote(self, **_):
        def wrap(function):
            task = types.SimpleNamespace(remote=lambda modules: ("ref", tuple(modules)))
            return types.SimpleNamespace(options=lambda **_: task)

        return wrap

    def get(self, ref, timeout):
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


def test_a_node_without_opt_suite_is_one_line_naming_it():
    missing = RuntimeError(
        "Failed to unpickle serialized exception\nModuleNotFoundError: No module named 'opt_suite'"
    )
    with pytest.raises(NodeCodeMismatch) as refused:
        check_nodes(FakeRay(missing), MODULES)
    assert str(refused.value) == (
        "Ray node 10.0.0.7 (id 2f8b188f9398) cannot run opt-suite's code (ModuleNotFoundError: No"
        " module named 'opt_suite'); install the same opt-suite and plugins on every node"
        " (docs/scaling.md)"
    )


def test_a_node_with_another_version_is_one_line_naming_both():
    ours = code_fingerprint(MODULES)["opt_suite"]
    theirs = ours.replace("opt-suite ", "opt-suite 0.0.1-", 1)
    with pytest.raises(NodeCodeMismatch) as refused:
        check_nodes(FakeRay({"opt_suite": theirs}), MODULES)
    line = str(refused.value)
    assert "\n" not in line
    assert line.startswith(f"Ray node 10.0.0.7 (id 2f8b188f9398) has opt_suite {theirs!r}, ")
    assert f"this driver {ours!r}; install the same opt-suite and plugins on every node" in line


def test_nodes_of_the_drivers_code_pass():
    assert check_nodes(FakeRay(code_fingerprint(MODULES)), MODULES) == 1
