"""``sweep:`` in specs: expansion into named variants, located errors, validate, run and report."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from opt_suite.cli import main
from opt_suite.spec import MAX_VARIANTS, SpecError, load_spec, load_sweep, spec_hash

QUICK = Path(__file__).resolve().parents[1] / "specs" / "fourrooms-quick.yaml"


def write(tmp_path: Path, sweep: str, extra: str = "") -> Path:
    path = tmp_path / "sweep.yaml"
    path.write_text(f"extends: {QUICK}\n{extra}sweep:\n{sweep}")
    return path


def problems_of(path: Path) -> list[str]:
    with pytest.raises(SpecError) as info:
        load_sweep(path)
    return info.value.problems


def test_grid_times_zip_names_and_values(tmp_path):
    path = write(
        tmp_path,
        "  grid:\n"
        "    evaluation.params.alpha: [0.1, 0.5]\n"
        "    methods.offline-options.params.lambda2: [10, 100]\n"
        "  zip:\n"
        "    - evaluation.episodes: [20, 30]\n"
        "      evaluation.max_steps: [100, 200]\n",
    )
    sweep = load_sweep(path)
    assert len(sweep.variants) == 2 * 2 * 2
    first = sweep.variants[0]
    assert first.name == "alpha=0.1,lambda2=10,episodes=20,max_steps=100"
    assert first.values == {
        "evaluation.params.alpha": 0.1,
        "methods.offline-options.params.lambda2": 10,
        "evaluation.episodes": 20,
        "evaluation.max_steps": 100,
    }
    last = sweep.variants[-1].spec
    assert last.evaluation.params.alpha == 0.5 and last.evaluation.episodes == 30
    assert last.evaluation.max_steps == 200
    entry = next(m for m in last.methods if m.name == "offline-options")
    assert entry.params.lambda2 == 100.0
    # Everything not swept is the base spec's; every variant is a distinct protocol.
    assert last.family == sweep.base.family and last.tasks == sweep.base.tasks
    assert len({spec_hash(v.spec) for v in sweep.variants}) == 8


def test_a_list_of_blocks_is_a_fractional_design(tmp_path):
    # One factor at a time: 3 + 2 variants, not the 6 of the full grid.
    path = write(
        tmp_path,
        "  - grid: {evaluation.params.alpha: [0.1, 0.5, 1.0]}\n"
        "  - grid: {evaluation.params.q_init: [-20, -100]}\n",
    )
    names = [v.name for v in load_sweep(path).variants]
    assert names == ["alpha=0.1", "alpha=0.5", "alpha=1.0", "q_init=-20", "q_init=-100"]


def test_axes_sharing_a_key_are_named_once_when_they_agree(tmp_path):
    methods = (
        "methods:\n"
        "  - {name: offline-options, method: offline_options, params: {epochs: 5}}\n"
        "  - {name: other, method: offline_options, params: {epochs: 5}}\n"
        "report: {baseline: other}\n"
    )
    path = write(
        tmp_path,
        "  - zip:\n"
        "      - methods.offline-options.params.lambda2: [10, 1000]\n"
        "        methods.other.params.lambda2: [10, 5]\n",
        extra=methods,
    )
    names = [v.name for v in load_sweep(path).variants]
    # Together (same value): the key once; apart: each axis by its whole path.
    assert names == [
        "lambda2=10",
        "methods.offline-options.params.lambda2=1000,methods.other.params.lambda2=5",
    ]


def test_no_sweep_means_the_spec_itself_and_load_spec_refuses_a_sweep(tmp_path):
    plain = load_sweep(QUICK)
    assert plain.variants == () and plain.specs == [(None, plain.base)]
    path = write(tmp_path, "  grid: {evaluation.params.alpha: [0.1]}\n")
    with pytest.raises(SpecError, match=r"sweep\.yaml:2:1: sweep: this spec is a sweep"):
        load_spec(path)


@pytest.mark.parametrize(
    ("sweep", "expected"),
    [
        (  # an unknown key: the converter's message, at the sweep's line
            "  grid: {evaluation.params.alpah: [0.1]}\n",
            r"sweep\.yaml:3:\d+: evaluation\.params\.alpah: unknown key; did you mean 'alpha'",
        ),
        (
            "  grid: {methods.nope.params.lambda2: [1]}\n",
            r"sweep\.yaml:3:\d+: .*no method entry named 'nope'",
        ),
        ("  grid: {evaluation.episodes: []}\n", r"sweep\.yaml:3:\d+: .*empty axis"),
        ("  grid: {evaluation.episodes: 20}\n", r"sweep\.yaml:3:\d+: .*expected a list of values"),
        (
            "  zip:\n    - evaluation.episodes: [20, 30, 40]\n"
            "      evaluation.max_steps: [100, 200]\n",
            r"sweep\.yaml:4:7: sweep\.zip\[0\]: zip axes must have equal lengths, got "
            r"evaluation\.episodes: 3, evaluation\.max_steps: 2",
        ),
        (  # 0.1 and 0.10 are one value: two variants would share one folder
            "  - grid: {evaluation.params.alpha: [0.1]}\n"
            "  - grid: {evaluation.params.alpha: [0.10]}\n",
            r"sweep\.yaml:4:\d+: sweep: variant name 'alpha=0\.1' collides with the variant at "
            r".*sweep\.yaml:3:\d+",
        ),
        (
            "  grid:\n    evaluation.episodes: [" + ", ".join(map(str, range(10, 19))) + "]\n"
            "    evaluation.max_steps: [" + ", ".join(map(str, range(100, 108))) + "]\n",
            rf"sweep\.yaml:3:3: sweep: expands into 72 variants, more than the maximum of "
            rf"{MAX_VARIANTS}",
        ),
        ("  grid: {name: [a, b]}\n", r"sweep\.yaml:3:\d+: .*cannot sweep 'name'"),
        ("  grid: {evaluation.params.alpha: [2.0]}\n", r"evaluation\.params\.alpha: out of range"),
        ("  axes: {evaluation.episodes: [1]}\n", r"sweep\.yaml:3:3: sweep\.axes: unknown sweep"),
    ],
)
def test_bad_sweeps_are_located_errors(tmp_path, sweep, expected):
    problems = problems_of(write(tmp_path, sweep))
    assert any(re.search(expected, line) for line in problems), problems


def test_validate_checks_every_variant(tmp_path, capsys):
    good = write(tmp_path, "  grid: {evaluation.params.alpha: [0.1, 0.5]}\n")
    assert main(["validate", str(good)]) == 0
    out = capsys.readouterr().out
    assert "a sweep of 2 variants, each valid" in out and "alpha=0.5 (hash" in out
    # One bad value in one variant fails the whole file, exit 2, no traceback.
    bad = tmp_path / "bad.yaml"
    bad.write_text(good.read_text().replace("[0.1, 0.5]", "[0.1, 5.0]"))
    assert main(["validate", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.yaml:3:" in err and "out of range" in err and "Traceback" not in err


TINY = """\
name: tiny-sweep
methods:
  - name: primitives
    method: primitives
  - name: eigenoptions
    method: eigenoptions
    params: {count: 4}
evaluation:
  episodes: 12
  seeds: 2
"""


def test_a_sweep_run_shares_cells_and_reports_every_variant(tmp_path, capsys):
    path = write(tmp_path, "  grid: {evaluation.params.alpha: [0.1, 0.5]}\n", extra=TINY)
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--workers", "0", "--quiet"]) == 0
    err = capsys.readouterr().err
    # Per variant: 4 discoveries (shared: α is the learner's) + 24 evaluations (2 methods x 2
    # seeds x 6 test tasks: one evaluation cell per test task) + 12 reference-return cells (2
    # seeds x 6 test tasks, shared: the learner is not in their key). No demonstrations cells:
    # eigenoptions on the exact model read none.
    assert "sweep of 2 variants, 80 cells planned, 64 computed, 16 shared" in err
    manifest = json.loads((out / "sweep.json").read_text())
    assert [v["name"] for v in manifest["variants"]] == ["alpha=0.1", "alpha=0.5"]
    assert [v["cells"]["reused"] for v in manifest["variants"]] == [0, 16]
    for v in manifest["variants"]:
        board = json.loads((out / "variants" / v["name"] / "leaderboard.json").read_text())
        assert board["spec"]["hash"] == v["spec_hash"]
        assert set(board["methods"]) == {"primitives", "eigenoptions"}
    with (out / "sweep.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [(r["variant"], r["method"]) for r in rows] == [
        ("alpha=0.1", "primitives"),
        ("alpha=0.1", "eigenoptions"),
        ("alpha=0.5", "primitives"),
        ("alpha=0.5", "eigenoptions"),
    ] or sorted((r["variant"], r["method"]) for r in rows) == sorted(
        (v, m) for v in ("alpha=0.1", "alpha=0.5") for m in ("primitives", "eigenoptions")
    )
    # The two variants really differ (the learner's α), and the table says so.
    aucs = {(r["variant"], r["method"]): float(r["auc_iqm"]) for r in rows}
    assert aucs[("alpha=0.1", "primitives")] != aucs[("alpha=0.5", "primitives")]
    md = (out / "sweep.md").read_text()
    # Two seeds: each variant's leaderboard warns, and the summary flags its rows and lists why.
    assert "| alpha=0.5 ⚠ | eigenoptions |" in md
    assert "## Warnings" in md and "- **alpha=0.5**: too few runs" in md
    # `opt-suite report DIR` rewrites the same tables from the store.
    before = (out / "sweep.md").read_text()
    (out / "sweep.md").unlink()
    assert main(["report", str(out)]) == 0
    assert (out / "sweep.md").read_text() == before
    assert main(["report", str(out), "--export-baseline", str(tmp_path / "b.json")]) == 2
    assert (
        main(["compare", str(out), "--baseline", str(QUICK.parent.parent / "ci/baseline.json")])
        == 2
    )
    err = capsys.readouterr().err
    assert "is a sweep run: compare one variant with --spec HASH_PREFIX (alpha=0.1 (hash" in err
    # One variant, named by its hash prefix, is one run: compared (here against another
    # protocol's baseline, so refused for that reason, not for being a sweep).
    first = manifest["variants"][0]["spec_hash"][:12]
    quick = str(QUICK.parent.parent / "ci/baseline.json")
    assert main(["compare", str(out), "--spec", first, "--baseline", quick]) == 2
    assert "is a sweep run" not in capsys.readouterr().err
    # A damaged manifest is one located line, exit 2 (not a traceback).
    (out / "sweep.json").write_text("{garbage")
    assert main(["compare", str(out), "--baseline", quick]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "sweep.json: cannot read the sweep manifest" in err
