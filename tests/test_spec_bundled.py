"""The shipped specs: valid with the real families and methods, faithful to the paper, packaged."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from baselines.bc_ppo import BCPPOParams
from opt_suite.spec import (
    bundled_specs,
    bundled_specs_dir,
    canonical_yaml,
    find_spec,
    load_spec,
    load_sweep,
    parse_spec,
    spec_hash,
    to_plain,
)

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted(p.name for p in (ROOT / "specs").glob("*.yaml"))


def test_bundled_specs_are_the_repository_specs():
    assert [p.name for p in bundled_specs()] == SHIPPED
    assert {"fourrooms-quick.yaml", "fourrooms-paper.yaml", "chain-validation.yaml"} <= set(SHIPPED)
    assert bundled_specs_dir().resolve() == (ROOT / "specs").resolve()


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_spec_validates_and_round_trips(name):
    sweep = load_sweep(ROOT / "specs" / name)
    assert sweep.base.name == Path(name).stem  # the file name is the spec name
    for _, spec in sweep.specs:  # the spec itself, or every variant of its sweep
        assert parse_spec(canonical_yaml(spec)) == spec


def test_every_shipped_spec_passes_opt_suite_validate(capsys):
    """Registered families, methods, learners and demonstration sources, capabilities, rules."""
    from opt_suite.cli import main

    assert main(["validate", *(str(ROOT / "specs" / name) for name in SHIPPED)]) == 0
    out = capsys.readouterr().out
    assert "ok: atari-smoke " in out and "ok: atari-middle " in out
    for name in ("atari-breakout", "atari-amidar"):
        assert f"ok: {name}: a sweep of 3 variants, each valid" in out


def test_atari_specs_use_the_ppo_expert_and_the_paper_variations():
    """Sec. 4.2: a trained agent demonstrates (no exact model), frames are what options see."""
    for name in ("atari-smoke", "atari-middle", "atari-breakout", "atari-amidar"):
        spec = load_sweep(ROOT / "specs" / f"{name}.yaml").base
        assert spec.family.name == "atari" and spec.demonstrations.source == "ppo_expert"
        assert spec.evaluation.learner == "tf_agents"


def test_paper_scale_atari_specs_sweep_the_papers_lambda1_on_a_frame_budget():
    """Fig. 3: lambda2 = 5000, lambda1 in {0, 0.01, 0.1}; budgets in frames (equal per skip)."""
    for name in ("atari-breakout", "atari-amidar"):
        sweep = load_sweep(ROOT / "specs" / f"{name}.yaml")
        assert [v.name for v in sweep.variants] == ["lambda1=0.0", "lambda1=0.01", "lambda1=0.1"]
        for variant, lambda1 in zip(sweep.variants, (0.0, 0.01, 0.1), strict=True):
            learned = [m for m in variant.spec.methods if m.method == "offline_options"]
            assert [(m.params.lambda1, m.params.lambda2) for m in learned] == [(lambda1, 5000.0)]
            assert [m.name for m in variant.spec.methods] == [
                "primitives",
                "random-options",
                "offline-options",
            ]
            assert variant.spec.evaluation.frames == 10_000_000


def test_sensitivity_spec_is_a_one_factor_at_a_time_design_around_the_paper_spec():
    sweep = load_sweep(ROOT / "specs" / "fourrooms-paper-sensitivity.yaml")
    paper = load_spec(ROOT / "specs" / "fourrooms-paper.yaml")
    assert len(sweep.variants) == 16 and sweep.base.evaluation.seeds == 5

    def is_paper(spec):  # up to the name and description, which no cell depends on
        return dataclasses.replace(spec, name=paper.name, description=paper.description) == paper

    # Exactly one variant is the paper spec itself; every other one changes one factor.
    assert [v.name for v in sweep.variants if is_paper(v.spec)] == ["alpha=0.1"]
    auto = [v.spec for v in sweep.variants if "lambda2_auto" in v.name]
    assert len(auto) == 1
    assert all(m.params.lambda2_auto for m in auto[0].methods if m.method == "offline_options")
    literal = [v.spec for v in sweep.variants if v.name == "likelihood=prob"]
    assert [m.params.likelihood for m in literal[0].methods if m.method == "offline_options"] == [
        "prob",
        "prob",
    ]
    wide = [v.spec for v in sweep.variants if v.name == "layout=paper-40x40-wide"]
    assert wide[0].family.params.layout == "paper-40x40-wide"
    assert dataclasses.replace(wide[0].family, params=paper.family.params) == paper.family
    intra = [v.spec for v in sweep.variants if v.spec.evaluation.learner != "smdp_q_learning"]
    assert [s.evaluation.learner for s in intra] == ["intra_option_q_learning"]
    # The same numbers: intra-option Q-learning's Params add bump_in_target, off (and unhashed).
    assert to_plain(intra[0].evaluation.params) == to_plain(paper.evaluation.params)


def test_factorial_spec_declares_issue_35s_two_by_two_with_the_clones_length_swept():
    sweep = load_sweep(ROOT / "specs" / "fourrooms-related-factorial.yaml")
    controls = load_spec(ROOT / "specs" / "fourrooms-related-controls.yaml")
    methods = {m.name: m for m in sweep.base.methods}
    # {imitation, none} x {extended, one step}: each corner is an entry.
    never, every = methods["bc-option-never"].params, methods["bc-option-every-step"].params
    assert (never.termination, every.termination) == ("never", "every_step")
    assert methods["reference-options"].method == "reference_options"
    assert methods["primitives"].method == "primitives"
    # The entries it keeps from fourrooms-related-controls are that spec's, so are their cells.
    parent = {m.name: m for m in controls.methods}
    for name in ("primitives", "offline-options"):
        assert methods[name] == parent[name]
    # Issue 35's fairness: untrained options K-matched to the learned ones (only count_of
    # differs from the parent's) ...
    untrained = methods["random-options"].params
    assert untrained.count_of == "offline-options"
    assert untrained.offline_options == parent["random-options"].params.offline_options
    # ... and every clone starting from the weights offline-options draws first (only
    # initial_weights_of differs from the parent's clones).
    for name in ("bc-option-never", "bc-option-every-step"):
        clone = methods[name].params
        assert clone.initial_weights_of == "offline-options"
        assert dataclasses.replace(clone, initial_weights_of=None) == parent[name].params
    assert methods["bc-option-length"].params.initial_weights_of == "offline-options"
    # A never-terminating clone with bc_ppo's cloning budget: 500 Adam steps of 64 pairs at 1e-3.
    budget = methods["bc-option-bc-ppo-budget"].params
    ppo = BCPPOParams()
    assert (budget.cloned_pairs, budget.batch_size) == (ppo.steps * ppo.batch_size, ppo.batch_size)
    assert budget.offline_options.learning_rate == ppo.learning_rate
    assert (budget.termination, budget.initial_weights_of) == ("never", "offline-options")
    # The validity check: the hallway options must beat the never-terminating clone.
    report = sweep.base.report
    assert (report.positive_controls, report.clone) == (("reference-options",), "bc-option-never")
    # Between the imitation corners: the clone's termination probability, strictly inside (0, 1).
    betas = [
        {m.name: m for m in v.spec.methods}["bc-option-length"].params.termination_probability
        for v in sweep.variants
    ]
    assert betas == sorted(betas) and len(betas) == 3 and all(0 < b < 1 for b in betas)


def test_find_spec_by_bundled_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert find_spec("fourrooms-quick") == bundled_specs_dir() / "fourrooms-quick.yaml"
    (tmp_path / "fourrooms-quick").write_text("a local file wins")
    assert find_spec("fourrooms-quick") == Path("fourrooms-quick")
    assert find_spec("no-such-spec") == Path("no-such-spec")
    assert find_spec("fourrooms-quick.yaml") == Path("fourrooms-quick.yaml")  # paths stay paths


def test_paper_spec_matches_the_paper():
    """Sec. 4.1: 40x40, slip 0.1, -1 per step, +10 at the goal, 30 tasks: 6 train, 24 test."""
    spec = load_spec(ROOT / "specs" / "fourrooms-paper.yaml")
    family = spec.family.params
    assert (family.layout, family.dynamics, family.slip) == ("paper-40x40", "slip", 0.1)
    assert (family.step_reward, family.goal_reward) == (-1.0, 10.0)
    assert (spec.tasks.count, spec.tasks.train, spec.tasks.test) == (30, 6, 24)
    entries = {m.name: m for m in spec.methods}
    assert list(entries) == [
        "primitives",
        "random-options",
        "offline-options",
        "offline-options-kl",
        "eigenoptions",
        "option-critic",
        "reference-options",  # not in the paper: Sutton et al. (1999)'s hallway options
    ]
    ours, ours_kl = entries["offline-options"].params, entries["offline-options-kl"].params
    assert (ours.lambda1, ours.lambda2, ours.delta) == (0.0, 100.0, 0.1)
    assert (ours_kl.lambda1, ours_kl.lambda2, ours_kl.delta) == (0.001, 100.0, 0.1)
    assert (ours.epochs, ours.max_options, ours.hidden_sizes) == (50, 4, (32, 32))
    # Same initial networks: random-options' own copy of the settings holds the same values.
    assert to_plain(entries["random-options"].params.offline_options) == to_plain(ours)
    assert spec.evaluation.seeds == 5 and spec.report.baseline == "primitives"


def test_chain_spec_is_appendix_d():
    """Appendix D: 10 MDPs, chains of 7 states with different transition functions."""
    spec = load_spec(ROOT / "specs" / "chain-validation.yaml")
    assert spec.family.name == "chain" and spec.family.params.num_states == 7
    assert spec.tasks.train + spec.tasks.test == spec.tasks.count == 10


def test_wheel_ships_the_bundled_specs(tmp_path):
    """A non-editable install finds the specs: the wheel holds opt_suite/bundled_specs/*.yaml."""
    source = tmp_path / "src"
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "dist")
    for name in ("opt_suite", "baselines", "specs"):
        shutil.copytree(ROOT / name, source / name, symlinks=True, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        if (ROOT / name).exists():
            shutil.copy(ROOT / name, source / name)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-index"]
        + ["--no-build-isolation", "--wheel-dir", str(tmp_path / "dist"), str(source)],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert sorted(n for n in names if n.startswith("opt_suite/bundled_specs/")) == [
        f"opt_suite/bundled_specs/{name}" for name in SHIPPED
    ]


def test_the_ci_baseline_is_of_the_quick_spec_as_it_hashes_today():
    # A key added to a component without added_later changes every spec's hash, and the results
    # gate (.ci/run: compare against ci/baseline.json) then refuses the run as another protocol.
    baseline = json.loads((ROOT / "ci" / "baseline.json").read_text())
    assert spec_hash(load_spec(ROOT / "specs" / "fourrooms-quick.yaml")) == baseline["spec"]["hash"]
