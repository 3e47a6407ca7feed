"""``opt-suite describe NAME``: one component's params, capabilities and entry point."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest

from opt_suite import registry
from opt_suite.cli import describe, main
from opt_suite.families.tabular.fourrooms import FourRooms
from opt_suite.learners.agent_learner import TFAgentsLearner
from opt_suite.methods.offline_options.method import OfflineOptions


def _json(capsys, name: str) -> dict:
    assert main(["describe", name, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_family_offers_and_every_params_section(capsys):
    entry = _json(capsys, "fourrooms")
    assert entry["kind"] == "family" and entry["env_id"] == "opt_suite/FourRooms-v0"
    assert {"an exact model", "discrete actions", "index observations"} <= set(entry["offers"])
    assert entry["offers"] == sorted(FourRooms(FourRooms.Params()).capabilities)
    assert entry["entry_point"]["value"] == "opt_suite.families.tabular.fourrooms:FourRooms"
    assert set(entry["params"]) == {"family.params", "tasks.vary", "tasks.list[]"}
    layout = next(r for r in entry["params"]["family.params"] if r["key"] == "layout")
    assert layout["default"] == "paper-40x40" and "sutton-13x13" in layout["type"]
    goal = next(r for r in entry["params"]["tasks.list[]"] if r["key"] == "goal")
    assert goal["default"] is None  # required
    assert _json(capsys, "atari")["offers"] == ["discrete actions", "image observations"]


def test_method_params_match_its_dataclass_and_requirements_are_explained(capsys):
    entry = _json(capsys, "offline_options")
    rows = entry["params"]["methods[].params"]
    assert [r["key"] for r in rows] == [f.name for f in dataclasses.fields(OfflineOptions.Params)]
    max_options = next(r for r in rows if r["key"] == "max_options")
    assert (max_options["type"], max_options["default"]) == ("int", "4")
    assert max_options["range"] == ">= 1 and <= 64" and max_options["doc"]
    assert entry["requires"] == ["discrete actions"]  # no model: its inputs fit any family
    assert "model_needed_because" not in entry
    assert entry["requires_depend_on_params"] and "frames" in entry["requirements_doc"]
    assert entry["checks_params_against_family"] and entry["uses_demonstrations"]
    primitives = _json(capsys, "primitives")
    assert primitives["requires"] == ["discrete actions"]
    assert not primitives["requires_depend_on_params"]


def test_nested_params_are_listed_with_dotted_keys(capsys):
    entry = _json(capsys, "tf_agents")
    keys = [r["key"] for r in entry["params"]["evaluation.params"]]
    assert keys.index("ppo") < keys.index("ppo.network") < keys.index("ppo.network.fc_units")
    assert entry["frame_budgets"] is True
    fc_units = next(
        r for r in entry["params"]["evaluation.params"] if r["key"].endswith("fc_units")
    )
    default = list(TFAgentsLearner.Params().ppo.network.fc_units)
    assert fc_units["default"] == str(default) and fc_units["type"] == "a list of int"


def test_text_output_names_the_entry_point_and_bounds(capsys):
    assert main(["describe", "q_learning"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("q_learning (demonstration source)\n")
    assert "opt_suite.demonstrations.tabular:QLearningExpert" in out
    assert "    alpha: float, default 0.5, > 0 and <= 1\n" in out
    assert "requires     discrete actions, index observations" in out  # a model is optional
    assert "no model?" not in out


def test_describe_says_why_a_baseline_needs_a_model(capsys):
    for name in ("eigenoptions", "option_critic", "optimal"):
        entry = _json(capsys, name)
        assert "an exact model" in entry["requires"] and entry["model_needed_because"], name
    assert "model_needed_because" not in _json(capsys, "random_options")


@pytest.mark.parametrize(
    ("name", "closest"),
    [("eigenoption", "eigenoptions"), ("four_rooms", "fourrooms"), ("qlearning", "q_learning")],
)
def test_unknown_name_is_one_line_with_the_closest_names(capsys, name, closest):
    assert main(["describe", name]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert f"named {name!r}" in line and closest in line.split("closest:")[1]


def test_a_broken_plugin_is_described_with_its_error(capsys, monkeypatch):
    names, load = registry.names, registry.load

    def broken(group, name):
        if name == "broken":
            raise registry.RegistryError("method 'broken' failed to load: ImportError: nope")
        return load(group, name)

    monkeypatch.setattr(
        registry, "names", lambda g: names(g) + (["broken"] if g == registry.METHODS else [])
    )
    monkeypatch.setattr(registry, "load", broken)
    assert main(["describe", "broken"]) == 0
    assert "ERROR: method 'broken' failed to load" in capsys.readouterr().out
    assert describe.describe(registry.METHODS, "broken")["error"]


def test_describe_never_imports_tensorflow():
    code = (
        "import sys; from opt_suite.cli import main; main(['describe', 'tf_agents']);"
        "main(['describe', 'offline_options']); assert 'tensorflow' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, timeout=120)
