"""docs/tutorial.md stays true: its specs validate as the page says, and its commands exist."""

import re
from pathlib import Path

from opt_suite.cli import COMMANDS
from opt_suite.spec import load_spec

PAGE = Path(__file__).resolve().parents[1] / "docs" / "tutorial.md"


def test_the_tutorial_specs_validate(tmp_path):
    blocks = re.findall(r"```yaml\n(.*?)```", PAGE.read_text(), re.S)
    assert len(blocks) == 2, "the tutorial's first spec and its one change"
    first, changed = (tmp_path / "a.yaml", tmp_path / "b.yaml")
    first.write_text(blocks[0])
    changed.write_text(blocks[1])
    names = [m.name for m in load_spec(first).methods]
    assert names == ["primitives", "random-options", "offline-options"]
    spec = load_spec(changed)
    assert [m.name for m in spec.methods] == [*names, "offline-options-kl"]
    assert spec.methods[-1].params.lambda1 == 0.001


def test_every_command_the_tutorial_runs_exists():
    commands = re.findall(r"^opt-suite ([a-z-]+)", PAGE.read_text(), re.M)
    assert commands and set(commands) <= set(COMMANDS)
