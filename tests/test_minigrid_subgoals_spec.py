"""The bundled ``minigrid-subgoals`` spec: its task split, and its stages end to end, tiny budgets.

The run checks that the pipeline runs and reports (the scripted sub-goal options through the
``reference_options`` method and the ``tf_agents`` learner, the validity check), not that anything
is learned.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import yaml

from opt_suite.cli import main
from opt_suite.runner.protocol import plan_spec, resolve_components
from opt_suite.spec import load_spec

SPEC = Path(__file__).resolve().parents[1] / "specs" / "minigrid-subgoals.yaml"
HELD_OUT = {"key-door-ball", "ball-key-door-goal"}


def _sequences(tasks) -> list[str]:
    return [t.params.kwargs["subgoals"] for t in tasks]


def test_train_tasks_are_the_three_listed_and_each_seed_tests_on_held_out_sequences():
    spec = load_spec(SPEC)
    _, train, tasks, plan = plan_spec(spec, [0, 1], resolve_components(spec))
    assert _sequences(train) == ["key-door-goal", "key-door", "ball"]
    for seed in (0, 1):
        drawn = plan.test_tasks[seed]
        assert len(drawn) == spec.tasks.test == 8
        assert set(_sequences(drawn)) <= HELD_OUT
    assert [t.params for t in plan.test_tasks[0]] != [t.params for t in plan.test_tasks[1]]


@pytest.mark.slow  # about a minute on 2 loaded cores (TensorFlow, four PPO runs)
def test_the_spec_runs_end_to_end_at_tiny_budgets(tmp_path):
    doc = yaml.safe_load(SPEC.read_text())
    doc["name"] = "minigrid-subgoals-smoke"
    doc["tasks"].update(count=4, test=1)
    # Episodes of at most 40 steps, so that the tiny learner budget sees some end.
    doc["family"]["params"]["kwargs"]["max_steps"] = 40
    doc["family"]["params"]["max_episode_steps"] = 40
    doc["demonstrations"]["max_steps"] = 40
    doc["evaluation"]["max_steps"] = 40
    doc["demonstrations"].update(
        trajectories_per_task=2, params={**doc["demonstrations"]["params"], "min_per_task": 1}
    )
    for entry in doc["methods"]:
        if "offline_options" in entry["method"] or entry["method"] == "bc_option":
            small = {"epochs": 1, "max_epochs": 1, "steps_per_epoch": 1, "max_options": 1}
            params = entry.setdefault("params", {})
            target = (
                params.setdefault("offline_options", {})
                if entry["method"] == "bc_option"
                else params
            )
            target.update(small)
    ppo = doc["evaluation"]["params"]["ppo"]
    ppo.update(num_envs=2, steps_per_iteration=16, epochs=1)
    doc["evaluation"].update(frames=400, seeds=1)
    spec = tmp_path / "smoke.yaml"
    spec.write_text(yaml.safe_dump(doc, sort_keys=False))
    out = tmp_path / "run"
    assert main(["run", str(spec), "--out", str(out), "--workers", "0", "--quiet"]) == 0
    with (out / "returns.csv").open() as f:
        rows = list(csv.DictReader(f))
    methods = {"primitives", "offline-options", "bc-option-never", "subgoal-options"}
    assert {r["method"] for r in rows} == methods
    board = json.loads((out / "leaderboard.json").read_text())
    assert "validity" in board["verdicts"]
