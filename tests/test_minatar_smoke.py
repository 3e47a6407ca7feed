"""A MinAtar spec end to end at tiny budgets: expert, demonstrations, conv options, learner, report.

The ``gymnasium`` family on 10x10x4 MinAtar frames through every stage of the paper's Atari
protocol (``opt-suite run``, one worker). It checks that the pipeline runs and reports, not that
anything is learned.
"""

from __future__ import annotations

import csv

import pytest

from opt_suite.cli import main

pytestmark = pytest.mark.slow  # about a minute on 2 loaded cores

SPEC = """\
name: minatar-smoke
family:
  name: gymnasium
  params: {id: "MinAtar/Breakout-v1", max_episode_steps: 2000}
tasks:
  count: 3
  train: 2
  test: 1
  seed: 0
  vary: {start_actions: [1, 6], reward_scale: [0.0, 10.0], frame_skip: [1, 2, 3]}
demonstrations:
  source: ppo_expert
  params:
    frames: 256                       # four PPO iterations: the expert is trained, not good
    ppo: &ppo
      num_envs: 2
      steps_per_iteration: 32
      epochs: 1
      network: {conv_filters: [8], conv_kernels: [3], conv_strides: [1], fc_units: [16]}
  trajectories_per_task: 2
  max_steps: 2000
methods:
  - name: primitives
    method: primitives
  - name: offline-options
    method: offline_options
    params: {lambda1: 0.0, lambda2: 5000.0, epochs: 2, steps_per_epoch: 2, max_options: 2,
             features: frames}
evaluation:
  learner: tf_agents
  params: {ppo: *ppo}
  frames: 500
  max_steps: 2000
  seeds: 1
report:
  baseline: primitives
"""


def test_a_minatar_spec_runs_end_to_end_and_reports_its_demonstrations(tmp_path, capsys):
    spec = tmp_path / "minatar-smoke.yaml"
    spec.write_text(SPEC)
    out = tmp_path / "run"
    assert main(["run", str(spec), "--out", str(out), "--workers", "1", "--quiet"]) == 0
    with (out / "returns.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert {r["method"] for r in rows} == {"primitives", "offline-options"}
    for method in ("primitives", "offline-options"):
        frames = [int(r["frames"]) for r in rows if r["method"] == method]
        assert frames == sorted(frames) and frames[-1] <= 500 + 2000  # the budget, in env steps
    board = (out / "leaderboard.md").read_text()
    assert "## Demonstrations" in board
    assert board.count("| 0 | gymnasium-minatar-breakout-v1/train/") == 2  # both train tasks
