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
    params: {{count: 2, adjacency: observed}}  # reads the demonstrations: the run keeps them
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


def test_run_view_picks_a_spec_says_which_and_compares_stored_with_planned_cells(
    shared, monkeypatch
):
    from opt_suite.run_view import RunView, RunViewError
    from opt_suite.stages import Stage
    from opt_suite.store import StoreError

    with RunView(shared) as view:  # default: the latest run's spec
        assert view.info.spec_name == "two-spec" and view.others() == [
            f"one-spec (hash {RunView(shared, 'one-spec').info.spec_hash[:12]})"
        ]
    with RunView(shared, "one-spec") as view:
        assert "holds 2 specs; reading one-spec" in view.which()
        methods, seeds = view.select()
        assert (methods, seeds) == (["primitives", "eigenoptions"], [0])
        check = view.require_done(list(Stage), methods, seeds)
        # demonstrations, 2 discoveries, 2 evaluations (one test task), all stored as planned
        assert len(check.planned) == 5 and len(check.done) == 5
        assert not check.missing and not check.replaced and not check.unplanned
        with pytest.raises(RunViewError, match=r"--methods 'untrained': the run has"):
            view.select(["untrained"])
    import opt_suite.runner.plan as plan

    monkeypatch.setattr(plan, "PROTOCOL", plan.PROTOCOL + 100)  # the code changed: new cell ids
    with RunView(shared, "one-spec", remedy="rerun it") as view:
        check = view.check_cells(list(Stage), ["eigenoptions"], [0])
        assert len(check.replaced) == 3 and not check.missing and len(check.unplanned) == 3
        with pytest.raises(
            RunViewError, match=r"was stored as cell \w{12}, .* plans \w{12}: rerun"
        ):
            view.require_done(list(Stage), ["eigenoptions"], [0])
    for bad in (shared / "nope", shared / "cells"):
        with pytest.raises(StoreError):  # one error type, a StoreError like the store's own
            RunView(bad)


def test_rewritten_reports_move_another_specs_files_aside(shared, tmp_path, capsys):
    import json
    import shutil

    run = tmp_path / "run"
    shutil.copytree(shared, run)
    capsys.readouterr()
    assert main(["export-tensorboard", str(run), "--spec", "one-spec"]) == 0
    assert "note: " in capsys.readouterr().out  # it says which spec it read
    one = json.loads((run / "tensorboard" / "export.json").read_text())["spec_hash"]
    (run / "diagnose.json").write_text(json.dumps({"spec_hash": one}))
    (run / "diagnose.md").write_text("# one-spec's diagnosis")
    (run / "discovery.png").write_bytes(b"an older report's picture")
    assert main(["report", str(run)]) == 0  # the latest spec, two-spec, has no such curves
    out = capsys.readouterr().out
    aside = run / "stale" / one[:12]
    assert sorted(p.name for p in aside.iterdir()) == [
        "diagnose.json",
        "diagnose.md",
        "tensorboard",
    ]
    assert f"moved diagnose.md, diagnose.json aside to stale/{one[:12]}/" in out
    assert not (run / "tensorboard").exists() and not (run / "diagnose.md").exists()
    assert "holds 2 specs; reading two-spec" in out
    assert not (run / "discovery.png").exists()
    assert (
        run / "stale" / "earlier" / "discovery.png"
    ).read_bytes() == b"an older report's picture"
    assert main(["report", str(run), "--spec", "one-spec"]) == 0  # nothing left to move
    assert "moved" not in capsys.readouterr().out
