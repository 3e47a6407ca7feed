"""Option pictures: the data they show comes from the tables, the files get written, the CLI."""

from __future__ import annotations

import numpy as np
import pytest

from opt_suite.cli import main
from opt_suite.families.tabular.grid_dynamics import MOVES
from opt_suite.methods.base import TabularOptionSet
from opt_suite.plots.option_data import (
    demonstrated_action_probs,
    epsilon_greedy_policy,
    greedy_arrows,
    grid_image,
    option_usage,
)
from opt_suite.plots.options import save_options_figure
from opt_suite.plots.policy_on_task import greedy_path, learn_q
from opt_suite.testing import tiny_setting
from opt_suite.trajectory import Trajectory


@pytest.fixture(scope="module")
def setting():
    return tiny_setting()


@pytest.fixture(scope="module")
def model(setting):
    return setting.family.tabular_model(setting.train_tasks[0])


def random_options(model, m=2, seed=0) -> TabularOptionSet:
    rng = np.random.default_rng(seed)
    mu = rng.dirichlet(np.ones(model.num_actions), size=(m, model.num_states))
    return TabularOptionSet(mu, rng.uniform(size=(m, model.num_states)))


def test_grid_image_puts_each_state_at_its_cell_and_nan_on_walls(model):
    values = np.arange(model.num_states, dtype=float)
    image = grid_image(model, values)
    assert image.shape == model.shape
    rows, cols = model.cells[:, 0], model.cells[:, 1]
    np.testing.assert_array_equal(image[rows, cols], values)
    assert np.isnan(image).sum() == model.shape[0] * model.shape[1] - model.num_states
    with pytest.raises(ValueError, match="one value per state"):
        grid_image(model, values[:-1])


def test_arrows_follow_argmax_mu(model):
    mu = np.zeros((model.num_states, 4))
    mu[:, 3] = 0.6  # right everywhere ...
    mu[:, 0] = 0.4
    mu[5] = [0.1, 0.7, 0.1, 0.1]  # ... but down in state 5
    arrows = greedy_arrows(model, mu, MOVES)
    assert arrows.actions[5] == 1 and (arrows.d_rows[5], arrows.d_cols[5]) == (1, 0)
    others = np.delete(np.arange(model.num_states), 5)
    np.testing.assert_array_equal(arrows.d_cols[others], 1)
    np.testing.assert_array_equal(arrows.d_rows[others], 0)
    np.testing.assert_allclose(arrows.confidence[others], 0.6)
    np.testing.assert_array_equal(arrows.rows, model.cells[:, 0])


def test_demonstrated_action_probs_read_mu_at_each_step():
    mu = np.array([[0.5, 0.5], [0.9, 0.1], [0.2, 0.8]])
    h = Trajectory("t", np.array([0, 2, 1, 0]), np.array([1, 1, 0]), np.zeros(3))
    np.testing.assert_allclose(demonstrated_action_probs(mu, h), [0.5, 0.8, 0.9])


def test_option_usage_and_epsilon_greedy():
    q = np.array([[1.0, 0.0, 3.0], [2.0, 2.0, 0.0]])  # state 1: a tie between 0 and 1
    pi = epsilon_greedy_policy(q, 0.3)
    np.testing.assert_allclose(pi[0], [0.1, 0.1, 0.8])
    np.testing.assert_allclose(pi[1], [0.45, 0.45, 0.1])
    np.testing.assert_allclose(pi.sum(axis=1), 1.0)
    np.testing.assert_array_equal(option_usage(pi, num_actions=2), pi[:, 2:].T)


def test_policy_on_task_and_greedy_path(model):
    options = random_options(model)
    q = learn_q(model, options, _learner_params(), 5, 200, np.random.SeedSequence(0))
    assert q.shape == (model.num_states, model.num_actions + len(options))
    states, chosen = greedy_path(model, options, q, 0.05, 50, np.random.default_rng(0))
    assert states[0] == model.start and len(states) == len(chosen) + 1 <= 51
    assert set(chosen) <= set(range(model.num_actions + len(options)))


def _learner_params():
    from opt_suite.learners.smdp_q import SMDPQLearning

    return SMDPQLearning.Params()


def test_figure_is_written(tmp_path, model, setting):
    options = random_options(model, m=3)
    pi = epsilon_greedy_policy(np.random.default_rng(1).normal(size=(model.num_states, 7)), 0.1)
    episode = (np.array([model.start, model.start]), np.array([4]))
    path = save_options_figure(
        tmp_path / "a" / "options.png", model, options, MOVES,
        demonstration=setting.demonstrations[0], pi=pi, episode=episode, title="t",
    )  # fmt: skip
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 10_000
    empty = TabularOptionSet.empty(model.num_states, model.num_actions)
    assert save_options_figure(tmp_path / "none.png", model, empty, MOVES).stat().st_size > 1000


SPEC = """
name: show-options-toy
family: {name: fourrooms, params: {layout: 10x15}}
tasks: {count: 3, train: 2, test: 1, seed: 0}
methods:
  - {name: primitives, method: primitives}
  - name: random
    method: random_options
    params: {count: 2, offline_options: {hidden_sizes: [8]}}
evaluation: {episodes: 10, max_steps: 50, seeds: 1}
"""


def test_cli_from_option_file(tmp_path, model, setting, capsys):
    from opt_suite.demonstrations import save_demonstrations

    (tmp_path / "spec.yaml").write_text(SPEC)
    random_options(model).save(tmp_path / "mine.npz")
    save_demonstrations(tmp_path / "demos.npz", setting.demonstrations)
    code = main(["show-options", "--options", str(tmp_path / "mine.npz"), "--spec",
                 str(tmp_path / "spec.yaml"), "--demos", str(tmp_path / "demos.npz"),
                 "--episodes", "3"])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    assert (tmp_path / "options-mine.png").stat().st_size > 10_000


@pytest.mark.slow  # a whole (tiny) `opt-suite run` first: ~10 s on a busy 2-core machine
def test_cli_from_run_dir(tmp_path, capsys):
    (tmp_path / "spec.yaml").write_text(SPEC)
    assert main(["run", str(tmp_path / "spec.yaml"), "--out", str(tmp_path / "run")]) == 0
    capsys.readouterr()
    assert main(["show-options", str(tmp_path / "run"), "--episodes", "3"]) == 0
    out = capsys.readouterr().out
    # Primitives discover no options: only the random options are drawn.
    assert "options-random-seed0.png" in out and "primitives" not in out
    assert (tmp_path / "run" / "options" / "options-random-seed0.png").stat().st_size > 10_000
    assert main(["show-options", str(tmp_path / "run"), "--method", "nope"]) == 2
    assert "the run has primitives, random" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "either RUN_DIR or --options"),
        (["/nonexistent/run"], "no such file or directory"),
        (["--options", "x.npz"], "no such file"),
    ],
)
def test_cli_bad_input_exits_2(argv, message, capsys):
    assert main(["show-options", *argv]) == 2
    assert message in capsys.readouterr().err


def test_the_task_panel_draws_the_declared_goal_not_a_hole():
    import dataclasses

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from opt_suite.families.tabular.fourrooms import FourRooms, Params, TaskParams
    from opt_suite.plots.options import _task_panels

    family = FourRooms(Params(layout="sutton-13x13"))
    model = family.tabular_model(TaskParams((1, 1), (9, 9)))
    hole = family.state_of((1, 5))  # a terminal state that is not a goal
    terminal = model.terminal.copy()
    terminal[hole] = True
    with_hole = dataclasses.replace(model, terminal=terminal)
    assert np.flatnonzero(with_hole.terminal)[0] == hole  # the first terminal state is the hole
    fig, (a, b) = plt.subplots(1, 2)
    _task_panels(a, b, with_hole, None, [], 4, [])
    green = [
        c
        for c in a.collections
        if tuple(c.get_facecolor()[0][:3]) == (0.0, 0.5019607843137255, 0.0)
    ]
    assert [tuple(p) for p in green[0].get_offsets()] == [(9.0, 9.0)]  # (col, row) of the goal
    plt.close(fig)
