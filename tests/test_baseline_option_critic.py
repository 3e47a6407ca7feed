"""Tabular option-critic: contract, smoke, the loop traced by hand, schedules, budget, learning."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from baseline_models import ModelFamily, tasks_of

from baselines.option_critic import OptionCritic, OptionCriticParams
from baselines.option_critic import loop as oc_loop
from baselines.option_critic.method import _task_arrays, loop_config
from opt_suite import registry
from opt_suite.families.base import TabularModel
from opt_suite.families.tabular.fourrooms import FourRooms, TaskParams
from opt_suite.families.tabular.fourrooms import Params as FourRoomsParams
from opt_suite.methods.base import DiscoveryContext
from opt_suite.spec import load_spec
from opt_suite.testing import MethodContract


class TestOptionCriticContract(MethodContract):
    method_class = OptionCritic
    params = OptionCriticParams(max_steps=200)


def chain(goal_reward: float = 1.0, length: int = 3, reachable: bool = True) -> TabularModel:
    """One action: 0 -> 1 -> ... -> length-1 (the goal); every step 0 reward but the last."""
    next_state = np.minimum(np.arange(length) + 1, length - 1).reshape(length, 1, 1)
    if not reachable:
        next_state = np.arange(length).reshape(length, 1, 1)  # stays put forever
    terminal = np.zeros(length, dtype=bool)
    terminal[-1] = True
    reward = np.where(terminal[next_state], goal_reward, 0.0)
    reward[-1] = 0.0
    return TabularModel(next_state.astype(np.int32), np.ones((length, 1, 1)), reward, terminal, 0)


def discover(models, budget=10_000, seed=0, **params):
    context = DiscoveryContext(
        ModelFamily(), tasks_of(*models), (), budget, np.random.SeedSequence(seed)
    )
    return OptionCritic(OptionCriticParams(**params)).discover(context)


def run_loop(models, params, episodes, seed=0):
    """Run the compiled loop directly; returns the tables and the outputs."""
    arrays = _task_arrays(models)
    num_states, num_actions = models[0].num_states, models[0].num_actions
    q_omega = np.zeros((num_states, params.options))
    q_u = np.zeros((num_states, params.options, num_actions))
    theta = np.zeros((params.options, num_states, num_actions))
    vartheta = np.zeros((params.options, num_states))
    out = [np.zeros(64, np.int64), np.zeros(64), np.zeros(64)]
    uniforms = np.random.default_rng(seed).random(10_000)
    result = oc_loop.run_chunk(
        *arrays.values(), loop_config(params, 0), q_omega, q_u, theta, vartheta, uniforms,
        0, episodes, 0, 10**9, *out,
    )  # fmt: skip
    return result, (q_omega, q_u, theta, vartheta), out


def test_loop_two_episodes_by_hand():
    params = OptionCriticParams(options=1, gamma=0.9, lr_critic=0.5)
    (episode, steps, recorded), (q_omega, q_u, _, vartheta), out = run_loop([chain()], params, 2)
    assert (episode, steps, recorded) == (2, 4, 2)
    # Episode 1: 0 -> 1 with r = 0 and U(1) = 0, so Q(0) stays 0; 1 -> goal with r = 1:
    #   Q(1) = 0.5 * 1 = 0.5.
    # Episode 2: target at 0 is 0.9 * U(1) = 0.9 * 0.5 = 0.45 (beta(1) = 0.5, one option, so
    #   U = Q(1)), Q(0) = 0.5 * 0.45 = 0.225; Q(1) = 0.5 + 0.5 * (1 - 0.5) = 0.75.
    np.testing.assert_allclose(q_omega[:, 0], [0.225, 0.75, 0.0])
    np.testing.assert_allclose(q_u[:, 0, 0], [0.225, 0.75, 0.0])
    # One option: its advantage is always 0, so its termination never moves.
    assert not vartheta.any()
    np.testing.assert_array_equal(out[0][:2], [2, 2])
    np.testing.assert_array_equal(out[1][:2], [1.0, 1.0])
    assert np.all((out[2][:2] >= 1.0) & (out[2][:2] <= 2.0))


def test_compiled_loop_matches_plain_python(monkeypatch):
    assert oc_loop.COMPILED, "numba is a dependency: the loop must be compiled"
    family = FourRooms(FourRoomsParams(layout="10x15", dynamics="slip", slip=0.1))
    models = [family.tabular_model(TaskParams((0, 0), (9, 14)))]
    params = OptionCriticParams(max_steps=50)
    compiled = run_loop(models, params, 5)
    monkeypatch.setattr(oc_loop, "run_chunk", oc_loop.run_chunk.py_func)
    python = run_loop(models, params, 5)
    assert compiled[0] == python[0]
    for a, b in zip(compiled[1] + tuple(compiled[2]), python[1] + tuple(python[2]), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_budget_is_spent_exactly_and_cut_episodes_are_dropped():
    found = discover([chain()], budget=5, options=1)
    assert found.info["env_steps"] == 5 and found.info["stopped_by_budget"]
    np.testing.assert_array_equal(found.curves["steps_per_episode"], [2, 2])
    assert discover([chain()], budget=1, options=1).info["episodes"] == 0


def test_episode_cap():
    found = discover([chain(reachable=False)], budget=30, options=2, max_steps=7)
    np.testing.assert_array_equal(found.curves["steps_per_episode"], [7, 7, 7, 7])
    np.testing.assert_array_equal(found.curves["return_per_episode"], 0.0)
    assert found.info["env_steps"] == 30


def test_schedules_in_order_and_round_robin():
    tasks = [chain(goal_reward=1.0), chain(goal_reward=2.0)]
    in_order = discover(tasks, episodes_per_task=3, options=1)
    np.testing.assert_array_equal(in_order.curves["return_per_episode"], [1, 1, 1, 2, 2, 2])
    assert not in_order.info["stopped_by_budget"]
    cycled = discover(tasks, budget=12, options=1)
    np.testing.assert_array_equal(cycled.curves["return_per_episode"], [1, 2, 1, 2, 1, 2])


def test_random_starts_avoid_the_goal_and_vary():
    fixed = discover([chain(length=4)], budget=300, options=1)
    assert set(fixed.curves["steps_per_episode"]) == {3}
    spread = discover([chain(length=4)], budget=300, options=1, random_starts=True)
    assert set(spread.curves["steps_per_episode"]) == {1, 2, 3}
    # Every episode reached the goal by a real step (an episode started on the goal would pay 0).
    np.testing.assert_array_equal(spread.curves["return_per_episode"], 1.0)


def test_mean_option_duration_is_between_one_and_the_episode_length():
    found = discover([chain(length=6)], budget=500, options=3)
    duration, steps = found.curves["mean_option_duration"], found.curves["steps_per_episode"]
    assert np.all((duration >= 1.0) & (duration <= steps))


def test_seeds_change_the_run_and_the_options():
    family = FourRooms(FourRoomsParams(layout="10x15"))
    models = [family.tabular_model(TaskParams((0, 0), (9, 14)))]
    a, b = discover(models, budget=3000, seed=0), discover(models, budget=3000, seed=1)
    assert not np.array_equal(a.options.mu, b.options.mu)


SUTTON_SPEC = Path(__file__).resolve().parents[1] / "specs" / "option-critic-sutton.yaml"


@pytest.fixture(scope="module")
def sutton():
    """The shipped spec of the original experiment: its family, train tasks and one run."""
    spec = load_spec(SUTTON_SPEC)
    family = registry.load(registry.FAMILIES, spec.family.name)(spec.family.params)
    t = spec.tasks
    train, _ = family.make_tasks(t.vary, t.list, t.count, t.train, t.test, t.seed)
    method = registry.load(registry.METHODS, spec.methods[0].method)(spec.methods[0].params)
    budget = spec.evaluation.interaction_budget
    context = DiscoveryContext(family, train, (), budget, np.random.SeedSequence(3))
    return family, train, method.discover(context)


@pytest.fixture(scope="module")
def sutton_run(sutton):
    return sutton[2]


def test_sutton_spec_is_the_original_setting(sutton):
    family, train, _ = sutton
    p = family.params
    assert (p.layout, p.dynamics, p.fail_prob) == ("sutton-13x13", "random-neighbour", 1 / 3)
    assert (p.step_reward, p.goal_reward) == (0.0, 1.0)
    assert train[0].params.goal == (7, 9)  # east hallway
    south_east = {tuple(c) for c in family.layout.rooms["south-east"]}
    assert tuple(train[1].params.goal) in south_east
    assert family.tabular_model(train[0]).num_states == 104


def test_learns_the_sutton_four_rooms_and_recovers_after_the_goal_moves(sutton_run):
    steps = sutton_run.curves["steps_per_episode"]
    assert len(steps) == 2000
    first, settled = steps[:20].mean(), steps[900:1000].mean()
    moved, recovered = steps[1000:1020].mean(), steps[1900:].mean()
    assert settled < first / 5  # learns the first goal
    assert moved > settled  # the moved goal costs steps at first ...
    assert recovered < moved / 2  # ... and option-critic adapts
    durations = sutton_run.curves["mean_option_duration"]
    assert np.all(durations >= 1.0)


def test_learned_options_are_softmax_of_the_trained_preferences(sutton_run):
    mu, beta = sutton_run.options.mu, sutton_run.options.beta
    assert mu.shape == (4, 104, 4) and beta.shape == (4, 104)
    # Training moved the options away from their uniform, beta = 0.5 start.
    assert np.abs(mu - 0.25).max() > 0.4 and np.abs(beta - 0.5).max() > 0.1


def test_params_dataclass_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        OptionCriticParams().options = 3
