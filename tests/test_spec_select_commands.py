"""``--spec NAME_OR_HASH`` selects one spec's results for every command that reads a run.

Two tiny real runs share one directory (the second adds a method), so each command must read the
spec it is told to, not the latest run's.
"""

from __future__ import annotations

import pytest

from opt_suite.cli import main

FIRST = """\
name: {name}
family:
  name: fourrooms
  params: {{layout: sutton-13x13, max_episode_steps: 100}}
tasks: {{count: 3, train: 2, test: 1, seed: 0}}
demonstrations: {{trajectories_per_task: 1}}
methods:
  - name: primitives
    method: primitives
  - name: eigenoptions
    method: eigenoptions
    params: {{count: 2}}
{extra}evaluation:
  learner: smdp_q_learning
  params: {{alpha: 0.1, gamma: 0.99, epsilon: 0.1}}
  episodes: 10
  max_steps: 100
  seeds: 1
"""
EXTRA = "  - name: untrained\n    method: random_options\n    params: {count: 2}\n"


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    root = tmp_path_factory.mktemp("shared")
    out = root / "run"
    for name, extra in (("one-spec", ""), ("two-spec", EXTRA)):
        path = root / f"{name}.yaml"
        path.write_text(FIRST.format(name=name, extra=extra))
        assert main(["run", str(path), "--out", str(out), "--workers", "0", "--quiet"]) == 0
    return out


def test_show_options_draws_the_selected_specs_methods(shared, tmp_path, capsys):
    capsys.readouterr()
    assert main(["show-options", str(shared), "--spec", "one-spec", "--out", str(tmp_path)]) == 0
    drawn = capsys.readouterr().out
    assert "eigenoptions" in drawn and "untrained" not in drawn
    assert main(["show-options", str(shared), "--spec", "two-spec", "--out", str(tmp_path)]) == 0
    assert "untrained" in capsys.readouterr().out


def test_export_demos_exports_the_selected_specs_demonstrations(shared, tmp_path, capsys):
    pytest.importorskip("minari")
    out = tmp_path / "minari"
    assert main(["export-demos", str(shared), "--spec", "one-spec", "--out", str(out)]) == 0
    assert any("one-spec" in p.name for p in out.rglob("*")), sorted(out.rglob("*"))


def test_option_usage_replays_the_selected_spec(shared, capsys):
    assert (
        main(["option-usage", str(shared), "--spec", "one-spec", "--methods", "eigenoptions"]) == 0
    )
    assert main(["option-usage", str(shared), "--spec", "one-spec", "--methods", "untrained"]) == 2
    assert "untrained" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["show-options", "export-demos", "option-usage"])
def test_an_unknown_spec_is_one_line_naming_what_is_recorded(shared, command, capsys):
    capsys.readouterr()
    assert main([command, str(shared), "--spec", "three-spec"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "no spec named or hashed 'three-spec'" in line and "one-spec" in line
