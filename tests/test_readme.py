"""The README stays true: its spec example validates, and CI runs its test command verbatim."""

import re
from pathlib import Path

from opt_suite.spec import load_spec

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _section(title: str) -> str:
    start = README.index(f"## {title}")
    end = README.find("\n## ", start + 1)
    return README[start : end if end > 0 else None]


def test_writing_a_spec_example_validates(tmp_path):
    (example,) = re.findall(r"```yaml\n(.*?)```", _section("Writing a spec"), re.S)
    quick = (ROOT / "specs" / "fourrooms-quick.yaml").read_text()
    (tmp_path / "fourrooms-quick.yaml").write_text(quick)  # the example extends it
    (tmp_path / "mine.yaml").write_text(example)
    spec = load_spec(tmp_path / "mine.yaml")
    assert spec.name == "my-benchmark"
    assert spec.family.params.layout == "paper-40x40"
    assert (spec.tasks.count, spec.tasks.train, spec.tasks.test) == (30, 6, 24)
    assert [m.name for m in spec.methods] == ["primitives", "offline-options"]


def test_quick_start_is_two_commands_and_ci_runs_the_test_one():
    (block,) = re.findall(r"```bash\n(.*?)```", _section("Quick start"), re.S)
    commands = block.strip().splitlines()
    assert len(commands) == 2
    assert "opt-suite run specs/fourrooms-quick.yaml" in commands[0]
    assert commands[1].rstrip().endswith("pytest")
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert commands[1] in ci
