"""Atari option pictures: an option executed from a start state until it ends, drawn as a strip."""

from __future__ import annotations

import argparse
import types

import numpy as np
import pytest

from opt_suite.families.atari.family import Atari, TaskParams, Variation
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


class _UniformExpert:
    """A demonstrator acting uniformly at random (what sample_demonstration needs of an expert)."""

    def __init__(self, actions: int) -> None:
        self.actions = actions

    def action_probabilities(self, observations):
        return np.full((len(observations), self.actions), 1.0 / self.actions)


@pytest.fixture(scope="module")
def demonstrations(breakout):
    from opt_suite.demonstrations.agent_sampling import sample_demonstration
    from opt_suite.families.base import Task

    family, task, _ = breakout
    train = Task("atari-breakout/train/0", "train", 0, task)
    expert = _UniformExpert(family.action_space.n)
    rng = np.random.default_rng(7)
    return train, [sample_demonstration(family, train, expert, rng, 400)[0] for _ in range(2)]


def test_demonstrations_record_the_reset_seed_that_replays_them(breakout, demonstrations, tmp_path):
    from opt_suite.demonstrations import load_demonstrations, save_demonstrations
    from opt_suite.plots.option_strips import ReplayError, replay_demonstration

    family, task, _ = breakout
    _, demos = demonstrations
    assert all(d.reset_seed is not None and len(d) > 5 for d in demos)
    env = family.make_env(task, render_mode="rgb_array")
    try:
        for d in demos:
            for step in (0, len(d) // 2, len(d) - 1):
                np.testing.assert_array_equal(
                    replay_demonstration(env, d, step), d.observations[step]
                )
        import dataclasses

        wrong = dataclasses.replace(demos[0], reset_seed=demos[0].reset_seed + 1)
        with pytest.raises(ReplayError, match="diverged"):
            replay_demonstration(env, wrong, len(wrong) - 1)
        unseeded = dataclasses.replace(demos[0], reset_seed=None)
        with pytest.raises(ReplayError, match="no reset seed"):
            replay_demonstration(env, unseeded, 1)
    finally:
        env.close()
    path = tmp_path / "demos.npz"
    save_demonstrations(path, demos)
    assert [d.reset_seed for d in load_demonstrations(path)] == [d.reset_seed for d in demos]


def test_tabular_demonstration_files_have_no_reset_seeds(tmp_path):
    from opt_suite.demonstrations import load_demonstrations, save_demonstrations
    from opt_suite.trajectory import Trajectory

    path = tmp_path / "demos.npz"
    save_demonstrations(path, [Trajectory("t", np.arange(3), np.zeros(2, int), np.zeros(2))])
    with np.load(path) as data:
        assert "reset_seeds" not in data.files
    assert load_demonstrations(path)[0].reset_seed is None


def test_the_start_state_is_where_the_option_fits_the_demonstration_best(breakout, demonstrations):
    from opt_suite.plots.option_strips import demonstration_start

    _, _, options = breakout
    _, demos = demonstrations
    for o in (0, 1):
        start = demonstration_start(options, o, demos)
        best = -np.inf
        for d in demos:
            mu, beta = options.probabilities(d.observations[:-1])
            rows = np.arange(len(d))
            score = np.log(mu[rows, o, d.actions]) + np.log1p(-beta[rows, o])
            best = max(best, float(score.max()))
        chosen = demos[start.trajectory]
        assert start.score == pytest.approx(best, rel=1e-6)
        mu, beta = options.probabilities(chosen.observations[start.step][None])
        expected = np.log(mu[0, o, chosen.actions[start.step]]) + np.log1p(-beta[0, o])
        assert start.score == pytest.approx(float(expected), rel=1e-5)
    assert demonstration_start(options, 0, []) is None


def test_show_options_starts_each_option_inside_a_demonstration(
    breakout, demonstrations, tmp_path, monkeypatch
):
    from opt_suite.cli import show_options
    from opt_suite.plots import option_strips

    family, task, options = breakout
    train, demos = demonstrations
    spec = types.SimpleNamespace(
        family=types.SimpleNamespace(name="atari", params=family.params),
        tasks=types.SimpleNamespace(
            vary=Variation(frame_skip=(4,)), list=[task], count=2, train=1, test=1, seed=0
        ),
        evaluation=types.SimpleNamespace(params=types.SimpleNamespace(termination_bump=0.05)),
    )
    starts, titles = [], []
    real_run, real_save = option_strips.run_option, option_strips.save_option_strip

    def run_option(env, options, index, seed, bump, max_steps=100, start=None):
        starts.append(start)
        return real_run(env, options, index, seed, bump, max_steps, start=start)

    def save(path, run, names, title, columns=7):
        titles.append(title)
        return real_save(path, run, names, title, columns)

    monkeypatch.setattr(option_strips, "run_option", run_option)
    monkeypatch.setattr(option_strips, "save_option_strip", save)
    written = show_options._draw_strips(
        tmp_path, spec, options, demos, argparse.Namespace(), "learned-seed0", 0
    )
    assert len(written) == 2
    for o, (start, title) in enumerate(zip(starts, titles, strict=True)):
        chosen = option_strips.demonstration_start(options, o, demos)
        np.testing.assert_array_equal(
            start, demos[chosen.trajectory].observations[chosen.step]
        )  # the option started from the replayed demonstration state, not from a reset
        assert f"from step {chosen.step} of demonstration {chosen.trajectory}" in title
    # without replayable demonstrations the title says the option started from a reset
    titles.clear()
    import dataclasses

    unseeded = [dataclasses.replace(d, reset_seed=None) for d in demos]
    show_options._draw_strips(tmp_path, spec, options, unseeded, argparse.Namespace(), "x", 0)
    assert all("(no replayable demonstration)" in t for t in titles)


@pytest.mark.parametrize("screens", [1, 2, 7, 9])
def test_a_long_title_is_wrapped_inside_the_figure(screens):
    import matplotlib.pyplot as plt

    from opt_suite.plots.option_strips import OptionRun, strip_figure

    frames = [np.zeros((8, 8), np.uint8)] * screens
    run = OptionRun(frames, [0] * (screens - 1), [0.1] * screens, "termination")
    # As show-options writes them: a method, an option, where it started, how it ended.
    title = (
        "offline-options: option-3 from demonstration 2 of breakout/train/1, step 417 "
        "until it ended by termination"
    )
    fig = strip_figure(run, ["NOOP"], title)
    try:
        fig.canvas.draw()
        text = next(t for t in fig.texts if t.get_text() == fig.get_suptitle())
        box = text.get_window_extent(fig.canvas.get_renderer())
        width, height = fig.canvas.get_width_height()
        assert 0 <= box.x0 and box.x1 <= width and 0 <= box.y0 and box.y1 <= height
        assert fig.get_suptitle().replace("\n", " ") == title  # every word, none cut
    finally:
        plt.close(fig)
