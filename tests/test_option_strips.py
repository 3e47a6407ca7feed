"""Atari option pictures: an option executed from a start state until it ends, drawn as a strip."""

from __future__ import annotations

import argparse
import types

import numpy as np
import pytest

from opt_suite.families.atari import Atari, TaskParams, Variation
from opt_suite.option_networks.initial import initial_frame_options
from opt_suite.plots.option_strips import run_option, save_option_strip


@pytest.fixture(scope="module")
def breakout():
    family = Atari(Atari.Params(game="breakout", max_episode_frames=4000))
    task = TaskParams(start_actions=3, reward_scale=1.0, frame_skip=4)
    options = initial_frame_options(family, task, 2, np.random.SeedSequence(0))
    return family, task, options


def test_an_option_runs_until_it_terminates_within_the_bump(breakout):
    family, task, options = breakout
    env = family.make_env(task, render_mode="rgb_array")
    runs = [
        run_option(env, options, o, seed, termination_bump=0.05)
        for o in (0, 1)
        for seed in range(3)
    ]
    env.close()
    for run in runs:
        assert run.ended_by in ("termination", "episode")
        assert 1 <= len(run.actions) <= 20  # β + 0.05 j reaches 1 by the 20th step
        assert len(run.screens) == len(run.betas) == len(run.actions) + 1
        assert run.screens[0].shape == (210, 160, 3)  # the RGB screen, not the 84x84 input
        assert all(0.0 <= b <= 1.0 for b in run.betas)
    env = family.make_env(task, render_mode="rgb_array")
    again = run_option(env, options, 0, 0, termination_bump=0.05)
    env.close()
    assert again.actions == runs[0].actions  # deterministic in the seed


def test_show_options_writes_one_strip_per_option(breakout, tmp_path):
    from opt_suite.cli.show_options import _draw_strips

    family, task, options = breakout
    spec = types.SimpleNamespace(
        family=types.SimpleNamespace(name="atari", params=family.params),
        tasks=types.SimpleNamespace(
            vary=Variation(frame_skip=(4,)), list=[], count=2, train=1, test=1, seed=0
        ),
        evaluation=types.SimpleNamespace(params=types.SimpleNamespace(termination_bump=0.05)),
    )
    written = _draw_strips(tmp_path, spec, options, None, argparse.Namespace(), "random-seed0", 0)
    assert [p.name for p in written] == [
        "options-random-seed0-random-0.png",
        "options-random-seed0-random-1.png",
    ]
    assert all(p.read_bytes()[:4] == b"\x89PNG" for p in written)


def test_strip_of_observation_frames_without_rendering(tmp_path, breakout):
    family, task, options = breakout
    env = family.make_env(task)
    run = run_option(env, options, 1, 5)
    env.close()
    assert run.screens[0].shape == (84, 84)  # the newest frame of the observation
    path = save_option_strip(tmp_path / "s.png", run, None, "t")
    assert path.stat().st_size > 0
