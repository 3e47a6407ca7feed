"""Every stage of specs/atari-smoke.yaml through the runner: expert, demos, discovery, learner.

The stages are those of the protocol on the paper's Atari domain: PPO experts trained per train task
within a frame budget, demonstrations until a life is lost, primitives / untrained conv options /
conv options learned by Algorithm 1 on the frames, and the tf_agents learner over primitives +
options on the held-out task, at tiny budgets (the settings of specs/atari-smoke.yaml).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
import typing
from pathlib import Path

import numpy as np
import pytest
import yaml

from opt_suite.agents.params import ExpertParams, NetworkParams, PPOParams
from opt_suite.families.atari.family import Atari, Params
from opt_suite.spec import to_plain
from opt_suite.store import ResultsStore

pytestmark = pytest.mark.slow  # about two minutes on 2 loaded cores, the end-to-end run included

SMOKE_SPEC = Path(__file__).resolve().parents[1] / "specs" / "atari-smoke.yaml"

SPEC = yaml.safe_load(
    """
family: {params: {game: breakout, action_set: minimal, max_episode_frames: 4000}}
tasks:
  count: 3
  train: 2
  test: 1
  seed: 0
  vary: {start_actions: [1, 20], reward_scale: [0.0, 10.0], frame_skip: [2, 3, 4]}
demonstrations:
  source: ppo_expert
  params:
    frames: 2000
    ppo:
      num_envs: 2
      steps_per_iteration: 32
      epochs: 1
      network: {conv_filters: [8], conv_kernels: [8], conv_strides: [4], fc_units: [32]}
  trajectories_per_task: 2
  max_steps: 1000
methods:
  - {name: primitives, method: primitives}
  - name: random-options
    method: random_options
    params:
      count: 2
      offline_options: &offline
        {lambda1: 0.0, lambda2: 5000.0, delta: 0.1, epochs: 2, steps_per_epoch: 2, max_options: 2,
         features: frames}
  - {name: offline-options, method: offline_options, params: *offline}
evaluation:
  learner: tf_agents
  params:
    ppo:
      num_envs: 2
      steps_per_iteration: 16
      epochs: 1
      network: {conv_filters: [8], conv_kernels: [8], conv_strides: [4], fc_units: [32]}
  episodes: 3
  max_steps: 1000
"""
)
FAMILY = Atari(Params(game="breakout", action_set="minimal", max_episode_frames=4000))
EXPERT = ExpertParams(
    frames=2000,
    ppo=PPOParams(
        num_envs=2,
        steps_per_iteration=32,
        epochs=1,
        network=NetworkParams(
            conv_filters=(8,), conv_kernels=(8,), conv_strides=(4,), fc_units=(32,)
        ),
    ),
)


def _build(cls, plain: dict):
    """The frozen dataclass ``cls`` from a spec's plain values (nested dataclasses, tuples)."""
    hints = typing.get_type_hints(cls)
    values = {}
    for key, value in plain.items():
        if dataclasses.is_dataclass(hints[key]):
            value = _build(hints[key], value)
        elif isinstance(value, list):
            value = tuple(value)
        values[key] = value
    return cls(**values)


def _subset(small, big) -> bool:
    """Every key of ``small`` (a spec's YAML) has the same value in ``big`` (a full plain dict)."""
    if isinstance(small, dict):
        return all(k in big and _subset(v, big[k]) for k, v in small.items())
    return small == big


def test_the_settings_are_the_smoke_specs():
    assert _subset(SPEC, yaml.safe_load(SMOKE_SPEC.read_text()))
    assert _subset(SPEC["family"]["params"], to_plain(FAMILY.params))
    assert SPEC["demonstrations"]["source"] == "ppo_expert"
    assert _subset(SPEC["demonstrations"]["params"], to_plain(EXPERT))
    assert _build(ExpertParams, SPEC["demonstrations"]["params"]) == EXPERT
    assert [m["name"] for m in SPEC["methods"]] == [
        "primitives",
        "random-options",
        "offline-options",
    ]
    assert SPEC["evaluation"]["learner"] == "tf_agents"


def _run_smoke_spec(out: Path, spec: Path = SMOKE_SPEC, *flags: str) -> str:
    """``opt-suite run SPEC --out OUT FLAGS`` in its own process (SPEC: the smoke spec); its
    stderr."""
    done = subprocess.run(
        [sys.executable, "-m", "opt_suite", "run", str(spec), "--out", str(out), "--quiet", *flags],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return done.stderr


# The smoke spec's demonstrations (the same cell: its id hashes the family, tasks, demonstration
# source and seed, not the methods) and one cheap method that reads them: what the rerun below
# recomputes. Rerunning the smoke spec itself would recompute every discovery and evaluation after
# the demonstrations too (they depend on the recomputed cell), half a minute of work that asks
# nothing about the experts. (A spec of primitives alone plans no demonstrations cell.)
DEMONSTRATIONS_SPEC = f"""\
extends: {SMOKE_SPEC}
name: atari-smoke-demonstrations
methods-: [primitives, random-options, offline-options]
methods+:
  - name: cloned
    method: bc_option
    params: {{offline_options: {{epochs: 1, steps_per_epoch: 1, features: frames}}}}
evaluation: {{episodes: 1}}
report: {{baseline: null, final_fraction: 1.0}}
"""


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory) -> Path:
    """One run of the smoke spec, whose stages the tests below read (not to be changed).

    The stages are those the runner's cells call (experts and demonstrations, each method's
    discovery, the learner); run once through the runner rather than also directly, at the same
    settings (``test_the_settings_are_the_smoke_specs``).
    """
    out = tmp_path_factory.mktemp("atari-smoke") / "run"
    _run_smoke_spec(out)
    return out


def test_experts_and_demonstrations(smoke_run):
    experts = sorted((smoke_run / "experts").glob("expert-*.npz"))
    assert len(experts) == SPEC["tasks"]["train"]  # one checkpoint per train task, in the run
    for path in experts:
        with np.load(path) as arrays:
            assert int(arrays["frames"]) >= EXPERT.frames
    # no demonstration was cut (the ppo_expert source refuses a cut one: the run would have failed)
    with ResultsStore(smoke_run) as store:
        demos = store.demonstrations(0)
    assert len(demos) == SPEC["demonstrations"]["trajectories_per_task"] * SPEC["tasks"]["train"]
    for trajectory in demos:
        assert trajectory.observations.shape == (len(trajectory) + 1, 84, 84, 2)


def test_discovery_gives_options_on_frames(smoke_run):
    with ResultsStore(smoke_run) as store:
        options = {name: store.option_set(name, 0) for name in store.methods()}
    assert len(options["primitives"]) == 0
    assert len(options["random-options"]) == 2
    assert 1 <= len(options["offline-options"]) <= 2


def test_the_learner_logs_episodes_with_frames(smoke_run):
    with ResultsStore(smoke_run) as store:
        episodes = {name: store.episodes(name) for name in store.methods()}
    assert set(episodes) == {"primitives", "random-options", "offline-options"}
    for rows in episodes.values():
        assert [r.episode for r in rows] == list(range(SPEC["evaluation"]["episodes"]))
        frames = np.array([r.frames for r in rows])
        returns = np.array([r.ret for r in rows])
        assert np.all(np.diff(frames) > 0) and np.all(np.isfinite(returns))


def test_the_smoke_spec_runs_end_to_end_and_a_rerun_reuses_its_experts(smoke_run, tmp_path):
    """Every cell through the runner; recomputing the demonstrations reuses the run's experts."""
    out = tmp_path / "run"
    shutil.copytree(smoke_run, out)  # the run the other tests read stays as it was
    board = json.loads((out / "leaderboard.json").read_text())
    assert set(board["methods"]) == {"primitives", "random-options", "offline-options"}
    assert board["spec"]["name"] == "atari-smoke"
    _check_show_options_starts_inside_the_demonstrations(out)
    experts = sorted((out / "experts").glob("expert-*.npz"))
    assert len(experts) == SPEC["tasks"]["train"]  # one checkpoint per train task, in the run
    stamps = [p.stat().st_mtime_ns for p in experts]
    (demos_file,) = (out / "cells").glob("*/demonstrations.npz")
    before = demos_file.read_bytes()
    demos_file.unlink()  # the rerun must recompute the demonstrations cell...

    spec = tmp_path / "demonstrations.yaml"
    spec.write_text(DEMONSTRATIONS_SPEC)
    stderr = _run_smoke_spec(out, spec, "--workers", "0", "--no-report")
    assert f"recomputing demonstrations, seed 0 [cell {demos_file.parent.name}]" in stderr
    # ...from the stored experts (not retrained: same files) into the same demonstrations.
    assert sorted((out / "experts").glob("expert-*.npz")) == experts
    assert [p.stat().st_mtime_ns for p in experts] == stamps
    assert demos_file.read_bytes() == before


def _check_show_options_starts_inside_the_demonstrations(out):
    """The run's demonstrations replay (reset seed + actions); show-options draws every option."""
    from opt_suite.cli import main
    from opt_suite.families.atari.family import Atari
    from opt_suite.plots.option_strips import replay_demonstration

    with ResultsStore(out) as store:
        demos = store.demonstrations(0)
        spec = store.spec()
    assert demos and all(d.reset_seed is not None for d in demos)
    family = Atari(spec.family.params)
    train, _ = family.make_tasks(
        spec.tasks.vary, spec.tasks.list, spec.tasks.count, spec.tasks.train, spec.tasks.test,
        spec.tasks.seed,
    )  # fmt: skip
    by_id = {t.task_id: t for t in train}
    for d in demos:
        env = family.make_env(by_id[d.task_id])
        try:
            last = replay_demonstration(env, d, len(d))
        finally:
            env.close()
        assert (last == d.observations[-1]).all()
    assert main(["show-options", str(out)]) == 0
    strips = sorted(p.name for p in (out / "options").glob("*.png"))
    assert any("offline-options-seed0" in name for name in strips)
    assert any("random-options-seed0" in name for name in strips)
