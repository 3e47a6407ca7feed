"""The sub-goal MiniGrid spec with a bad sequence or held-out choice: one located line, exit 2."""

from __future__ import annotations

import pytest
import yaml
from runner_support import REPO

from opt_suite.cli import main

SPEC = REPO / "specs" / "minigrid-subgoals.yaml"


@pytest.mark.parametrize(
    ("edit", "where", "expected"),
    [
        (
            lambda doc: doc["tasks"]["vary"].update(held_out_kwargs={"size": [9]}),
            "tasks.vary.held_out_kwargs",
            "held_out_kwargs.size: expected a kwarg family.params.kwargs lists choices for",
        ),
        (
            lambda doc: doc["tasks"]["vary"]["held_out_kwargs"].update(subgoals=["door-ball"]),
            "tasks.vary.held_out_kwargs",
            "'door-ball' is not one of family.params.kwargs.subgoals's choices",
        ),
        (
            lambda doc: doc["family"]["params"]["kwargs"]["subgoals"].append("goal-ball"),
            "family.params.kwargs",
            "'goal' ends the episode, so it comes last",
        ),
    ],
)
def test_a_bad_subgoal_spec_is_one_located_line(capsys, tmp_path, edit, where, expected):
    doc = yaml.safe_load(SPEC.read_text())
    edit(doc)
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(doc, sort_keys=False))
    capsys.readouterr()
    code = main(["validate", str(spec)])
    captured = capsys.readouterr()
    assert (code, captured.out) == (2, "")
    assert "Traceback" not in captured.err
    (line,) = captured.err.splitlines()
    assert line.startswith(f"{spec}:") and f": {where}: " in line and expected in line
