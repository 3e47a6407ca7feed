"""The README stays true: its spec example validates, and CI runs its test command verbatim."""

import re
from pathlib import Path

from opt_suite.spec import load_spec, load_sweep

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _section(title: str) -> str:
    start = README.index(f"## {title}")
    end = README.find("\n## ", start + 1)
    return README[start : end if end > 0 else None]


def test_writing_a_spec_example_validates(tmp_path):
    example, sweep = re.findall(r"```yaml\n(.*?)```", _section("Writing a spec"), re.S)
    quick = (ROOT / "specs" / "fourrooms-quick.yaml").read_text()
    (tmp_path / "fourrooms-quick.yaml").write_text(quick)  # the example extends it
    (tmp_path / "mine.yaml").write_text(example)
    spec = load_spec(tmp_path / "mine.yaml")
    assert spec.name == "my-benchmark"
    assert spec.family.params.layout == "paper-40x40"
    assert (spec.tasks.count, spec.tasks.train, spec.tasks.test) == (30, 6, 24)
    assert [m.name for m in spec.methods] == ["primitives", "offline-options"]
    # The sweep example is a block of that spec: 3 alphas x 2 lambda2 x 2 (episodes, max_steps).
    (tmp_path / "swept.yaml").write_text(example + sweep)
    variants = load_sweep(tmp_path / "swept.yaml").variants
    assert len(variants) == 12
    assert variants[-1].name == "alpha=1.0,lambda2=100,episodes=1000,max_steps=2000"


def test_quick_start_is_two_commands_and_ci_runs_the_test_one():
    (block,) = re.findall(r"```bash\n(.*?)```", _section("Quick start"), re.S)
    commands = block.strip().splitlines()
    assert len(commands) == 2
    assert "opt-suite run specs/fourrooms-quick.yaml" in commands[0]
    assert commands[1].rstrip().endswith("pytest")
    # CI runs the README's test command split at its pytest, with lint and types in between.
    install, run_tests = commands[1].rsplit(" && ", 1)
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    steps = [install, ".venv/bin/ruff check .", ".venv/bin/mypy opt_suite baselines", run_tests]
    assert all(step in ci for step in steps), steps
    assert [ci.index(step) for step in steps] == sorted(ci.index(step) for step in steps)
