"""The README and docs/ stay true: short README, working links, generated pages up to date,
the spec examples validate, and CI runs the README's test command verbatim."""

import importlib.util
import json
import re
from pathlib import Path

import pytest
from report_fakes import linear_table, write_store

from opt_suite.cli import main
from opt_suite.report import load_baseline
from opt_suite.spec import load_spec, load_sweep

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
DOCS = ROOT / "docs"


def _section(title: str, text: str = README) -> str:
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else None]


FRONT = (
    "README",
    "tutorial",
    "architecture",
    "specs",
    "plugins",
    "results-and-gate",
    "atari",
    "scaling",
    "performance",
    "cli",
)


def _pages() -> list[Path]:
    """The README and the pages it owns (other pages' links are their authors' to keep)."""
    return [ROOT / "README.md", *(DOCS / f"{page}.md" for page in FRONT), DOCS / "reference.md"]


def test_readme_is_a_front_door():
    assert len(README.splitlines()) <= 150
    (picture,) = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", README)
    assert (ROOT / picture).is_file() and picture.startswith("docs/results/")
    # Every bundled spec is in its table, and every docs/ page is linked from it.
    specs = sorted(p.stem for p in (ROOT / "specs").glob("*.yaml"))
    table = _section("Bundled specs")
    assert [s for s in specs if f"`{s}`" not in table] == []
    linked = set(re.findall(r"\]\(docs/([^)#/]+\.md)", README))
    assert {f"{page}.md" for page in FRONT} | {"reference.md"} <= linked


@pytest.mark.parametrize("page", _pages(), ids=lambda p: p.name)
def test_relative_links_resolve(page):
    for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
        if "://" in target or target.startswith("#"):
            continue
        path = (page.parent / target.split("#")[0]).resolve()
        assert path.exists(), f"{page.name} links to missing {target}"


def test_timings_page_is_generated_from_measurements():
    gen = _load_script("gen_timings")
    assert (DOCS / "timings.md").read_text() == gen.render(), (
        "docs/timings.md is stale: run python docs/gen_timings.py"
    )


def test_timings_render_every_measurement(tmp_path):
    gen = _load_script("gen_timings")
    row = {"name": "x", "what": "`opt-suite run x`", "command": "c", "wall_s": 75.0, "cpu_s": 9.5}
    row |= {"load_before": 1.5, "load_after": 2.0, "cores": 2, "commit": "abc", "date": "d"}
    (tmp_path / "x.json").write_text(json.dumps(row))
    page = gen.render(tmp_path)
    assert "| `opt-suite run x` | 1 min 15 s | 10 s | 1.5 → 2 | `abc`, d |" in page


def test_gate_rates_page_is_generated_from_the_records():
    gen = _load_script("gen_gate_rates")
    assert (DOCS / "gate-rates.md").read_text() == gen.render(), (
        "docs/gate-rates.md is stale: run python docs/gen_gate_rates.py"
    )


def test_gate_rates_render_every_entry_and_say_when_alarms_exceed_alpha(tmp_path):
    gen = _load_script("gen_gate_rates")
    rates = {"metric": "auc", "alpha": 0.05, "reruns": 20, "false_alarms": 2}
    rates |= {"false_alarm_rate": 0.1, "flagged_methods": {"a": 2, "b": 0}}
    rates |= {"power": {"0.1": {"a": 7, "b": 20}}, "power_rate": {"0.1": 0.675}}
    fresh = {"spec": "g", "seeds": list(range(2, 42)), "workers": 1, "wall_s": 75.0}
    fresh |= {"commit": "abcdef0123", "command": "opt-suite run ci/g.yaml --seeds 2-41"}
    record = {"gate": "ci/g.yaml", "baseline": "ci/baseline-g.json", "fresh_run": fresh}
    record |= {"command": "opt-suite gate-rates", "commit": "1234567890+dirty", "cpu": "X"}
    record |= {"date": "d", "rates": rates}
    (tmp_path / "g.json").write_text(json.dumps(record))
    page = gen.render(tmp_path)
    assert "**false alarms: 2/20 = 0.10** (**above alpha** = 0.05; flagged: a 2)" in page
    assert "the pair as the unit (`compare`'s default)" in page
    assert "| 0.1 | 0.68<br>a 7/20, b 20/20 |" in page
    assert "| 0.05 | not measured |" in page
    assert "(40 seeds, 1 min 15 s wall with `--workers 1`" in page
    assert "`1234567 (with uncommitted changes)`" in page


def test_a_baseline_is_restamped_from_its_record_per_entry_only_on_its_numbers(
    tmp_path, monkeypatch
):
    gen = _load_script("gen_gate_rates")
    write_store(tmp_path / "base", linear_table({"a": 0.0, "b": 4.0}, seeds=2))
    baseline = tmp_path / "baseline-g.json"
    assert main(["report", str(tmp_path / "base"), "--export-baseline", str(baseline)]) == 0
    digest = load_baseline(baseline).digest
    rates = {"metric": "auc", "alpha": 0.05, "unit": "pair", "reruns": 20, "false_alarms": 1}
    rates |= {"power": {"0.1": {"a": 7, "b": 20}}, "power_rate": {"0.1": 0.675}}
    record = {"baseline": baseline.name, "date": "2026-11-28", "rates": rates}
    records = tmp_path / "records"
    records.mkdir()
    monkeypatch.setattr(gen, "INPUTS", records)
    monkeypatch.setattr(gen, "ROOT", tmp_path)
    # A record of other numbers (its digest is not the baseline's) stamps nothing.
    (records / "g.json").write_text(
        json.dumps(record | {"rates": rates | {"baseline_digest": "0" * 64}})
    )
    with pytest.raises(SystemExit, match="not measured on these numbers; measure again"):
        gen.restamp("ci/g.yaml")
    assert load_baseline(baseline).measured is None
    (records / "g.json").write_text(
        json.dumps(record | {"rates": rates | {"baseline_digest": digest}})
    )
    gen.restamp("ci/g.yaml")
    measured = load_baseline(baseline).measured
    assert measured is not None and measured.baseline_digest == digest
    assert measured.power == {"0.1": 0.675}
    assert measured.power_by_entry == {"0.1": {"a": 7 / 20, "b": 1.0}}  # count / reruns
    assert (measured.reruns, measured.false_alarms, measured.date) == (20, 1, "2026-11-28")


def test_performance_page_is_generated_from_benchmark_output():
    gen = _load_script("gen_performance")
    assert (DOCS / "performance.md").read_text() == gen.render(), (
        "docs/performance.md is stale: run python docs/gen_performance.py"
    )


def test_performance_rows_come_from_extra_info(tmp_path):
    gen = _load_script("gen_performance")
    run = {
        "commit_info": {"id": "abcdef0123", "dirty": False},
        "datetime": "2026-01-02T03:04:05",
        "machine_info": {"cpu": {"count": 2}, "python_version": "3.11.7"},
        "opt_suite_note": "idle machine.",
        "benchmarks": [
            {"fullname": "b.py::t", "stats": {"median": 0.0125}, "extra_info": {"ratio": 0.474}}
        ],
    }
    (tmp_path / "run.json").write_text(json.dumps(run))
    page = gen.render(tmp_path)
    assert "Measured 2026-01-02 at commit `abcdef0`, 2 CPUs, Python 3.11.7. idle machine." in page
    assert "| `b.py::t` | 12.5 ms | ratio = 0.474 |" in page
    assert "## Recorded figures" not in page  # no recorded.json in that folder


def test_reference_page_is_generated_from_the_declarations():
    gen = _load_script("gen_reference")
    assert (DOCS / "reference.md").read_text() == gen.render(), (
        "docs/reference.md is stale: run python docs/gen_reference.py"
    )


def test_compatibility_page_is_generated_from_the_capability_declarations():
    gen = _load_script("gen_compatibility")
    assert (DOCS / "compatibility.md").read_text() == gen.render(), (
        "docs/compatibility.md is stale: run python docs/gen_compatibility.py"
    )


def test_the_compatibility_page_says_what_validate_says(tmp_path, capsys):
    """A *no* of the page is validate's refusal of that spec, with the same reason."""
    page = (DOCS / "compatibility.md").read_text()
    lake_row = next(line for line in page.splitlines() if line.startswith("| `optimal` |"))
    assert "no: needs a family with an exact model; it has no exact model" in lake_row
    path = tmp_path / "lake.yaml"
    path.write_text(
        "name: lake\nfamily: {name: gymnasium, params: {id: FrozenLake-v1}}\n"
        "tasks: {count: 3, train: 2, test: 1}\nmethods: [{name: o, method: offline_options}]\n"
    )
    assert main(["validate", str(path)]) == 2
    assert (
        "demonstrations.source: optimal (the default) needs a family with an exact model; "
        "gymnasium-frozenlake-v1 has no exact model"
    ) in capsys.readouterr().err


def _load_script(name: str):
    spec = importlib.util.spec_from_file_location(name, DOCS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_writing_a_spec_example_validates(tmp_path):
    text = (DOCS / "specs.md").read_text()
    (example,) = re.findall(r"```yaml\n(.*?)```", _section("Writing a spec", text), re.S)
    quick = (ROOT / "specs" / "fourrooms-quick.yaml").read_text()
    (tmp_path / "fourrooms-quick.yaml").write_text(quick)  # the example extends it
    (tmp_path / "mine.yaml").write_text(example)
    spec = load_spec(tmp_path / "mine.yaml")
    assert spec.name == "my-benchmark"
    assert spec.family.params.layout == "paper-40x40"
    assert (spec.tasks.count, spec.tasks.train, spec.tasks.test) == (30, 6, 24)
    assert [m.name for m in spec.methods] == ["primitives", "offline-options"]
    # The sweep example is a block of that spec: 3 alphas x 2 lambda2 x 2 (episodes, max_steps).
    sweep = re.findall(r"```yaml\n(.*?)```", _section("Sweeps", text), re.S)[0]
    (tmp_path / "swept.yaml").write_text(example + sweep)
    variants = load_sweep(tmp_path / "swept.yaml").variants
    assert len(variants) == 12
    assert variants[-1].name == "alpha=1.0,lambda2=100,episodes=1000,max_steps=2000"


def test_extends_examples_validate(tmp_path):
    text = _section("Inheriting a spec", (DOCS / "specs.md").read_text())
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.S)
    composed = [b for b in blocks if b.startswith("extends: fourrooms-quick\n")]
    assert composed, "the methods+/methods- example is gone"
    for block in composed:
        (tmp_path / "composed.yaml").write_text(block)
        spec = load_spec(tmp_path / "composed.yaml")
        assert [m.name for m in spec.methods][-1] == "offline-options-kl"


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


def test_the_fast_test_subset_is_named_with_its_generated_time(tmp_path):
    gen = _load_script("gen_timings")
    assert '`-m "not slow"`' in README and "docs/timings.md#the-test-suite" in README
    assert '| `pytest -m "not slow"` | not measured yet: `python docs/gen_timings.py' in (
        gen.render(tmp_path)
    )
    row = {"name": "tests-fast", "what": "w", "command": "c", "wall_s": 300.0, "cpu_s": 500.0}
    row |= {"load_before": 0.5, "load_after": 2.0, "cores": 2, "commit": "abc", "date": "d"}
    (tmp_path / "tests-fast.json").write_text(json.dumps(row))
    page = gen.render(tmp_path)
    assert '| `pytest -m "not slow"` | 5 min 00 s | 8 min 20 s | 0.5 → 2 | `abc`, d |' in page
    assert "## Measured by this script" not in page  # a test command is not a spec's row
