"""Tests of opt_suite.tabular: values worked out by hand, and brute force over all policies."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from tabular_toys import FOUR_ROOMS_11, corridor, grid_model

from opt_suite.tabular import (
    MDPArrays,
    greedy_policy,
    optimal_actions,
    policy_evaluation,
    q_from_v,
    reachable_states,
    value_iteration,
    with_terminate_action,
)

UP, RIGHT, DOWN, LEFT = range(4)


def test_value_iteration_corridor_by_hand():
    # States 0 1 2 [3=goal]; moving right: -1 a step, +10 into the goal; gamma = 0.9.
    # V(2) = 10;  V(1) = -1 + 0.9 * 10 = 8;  V(0) = -1 + 0.9 * 8 = 6.2.
    # Q(0, left) bumps the wall: -1 + 0.9 * V(0) = 4.58.
    v, q = value_iteration(corridor(4), gamma=0.9)
    np.testing.assert_allclose(v, [6.2, 8.0, 10.0, 0.0], atol=1e-9)
    np.testing.assert_allclose(q[0], [4.58, 6.2, 4.58, 4.58], atol=1e-9)
    assert q[3].tolist() == [0.0, 0.0, 0.0, 0.0]  # terminal rows are 0
    assert greedy_policy(q)[:3].tolist() == [RIGHT] * 3


def test_value_iteration_with_slip_by_hand():
    # Two cells, goal on the right, slip 0.3 spread over the 3 other moves, which all bump walls:
    # V = 0.7 * 10 + 0.3 * (-1 + 0.9 V)  =>  V = 6.7 / (1 - 0.27) = 9.178082...
    model = corridor(2, slip=0.3)
    v, q = value_iteration(model, gamma=0.9)
    assert v[0] == pytest.approx(6.7 / 0.73, abs=1e-9)
    # Any other move reaches the goal w.p. 0.1: Q(0, left) = 0.1 * 10 + 0.9 * (-1 + 0.9 V).
    assert q[0, LEFT] == pytest.approx(1.0 + 0.9 * (-1 + 0.9 * v[0]), abs=1e-9)


def test_policy_evaluation_by_hand():
    # "Always left" in the slippery two-cell corridor: V = 0.1 * 10 + 0.9 * (-1 + 0.9 V)
    #  => V = 0.1 / (1 - 0.81) = 0.5263...
    model = corridor(2, slip=0.3)
    v = policy_evaluation(model, np.array([LEFT, LEFT]), gamma=0.9)
    assert v[0] == pytest.approx(0.1 / 0.19, abs=1e-9)
    assert v[1] == 0.0
    # A stochastic policy [S, A] gives the average of the two deterministic ones' Bellman rows.
    half = np.zeros((2, 4))
    half[:, [LEFT, RIGHT]] = 0.5
    # V = 0.5 (0.7 * 10 + 0.3 (-1 + .9V)) + 0.5 (0.1 * 10 + 0.9 (-1 + .9V)) = 3.4 + 0.54 V
    assert policy_evaluation(model, half, 0.9)[0] == pytest.approx(3.4 / 0.46, abs=1e-9)


def _random_mdp(rng: np.random.Generator, S: int, A: int, K: int) -> MDPArrays:
    terminal = np.zeros(S, dtype=bool)
    terminal[-1] = True
    return MDPArrays(
        next_state=rng.integers(S, size=(S, A, K)).astype(np.int32),
        prob=rng.dirichlet(np.ones(K), size=(S, A)),
        reward=rng.normal(size=(S, A, K)),
        terminal=terminal,
    )


@pytest.mark.parametrize("seed", range(5))
def test_value_iteration_matches_brute_force_over_all_policies(seed):
    rng = np.random.default_rng(seed)
    S, A, gamma = 4, 3, 0.8
    mdp = _random_mdp(rng, S, A, K=3)
    v, q = value_iteration(mdp, gamma)
    values = np.array(
        [policy_evaluation(mdp, np.array(p), gamma) for p in itertools.product(range(A), repeat=S)]
    )
    np.testing.assert_allclose(v, values.max(axis=0), atol=1e-8)
    np.testing.assert_allclose(policy_evaluation(mdp, greedy_policy(q), gamma), v, atol=1e-8)
    np.testing.assert_allclose(q, q_from_v(mdp, v, gamma), atol=1e-12)


def test_optimal_actions_keeps_ties():
    # In an open 3x3 room with the goal in a corner, up and left are both optimal far from it.
    layout = ("#####", "#...#", "#...#", "#...#", "#####")
    model = grid_model(layout, start=(3, 3), goal=(1, 1))
    _, q = value_iteration(model, 0.95)
    best = optimal_actions(q, tol=1e-9)
    assert best[model.start].tolist() == [True, False, False, True]  # up, left
    assert best.sum(axis=1)[~model.terminal].min() >= 1


def test_with_terminate_action():
    # All-negative rewards: stopping at once (Q(s, ⊥) = 0) beats every move.
    model = corridor(4)
    mdp = with_terminate_action(MDPArrays.of(model, reward=-np.ones_like(model.reward)))
    v, q = value_iteration(mdp, 0.9)
    assert q.shape == (5, 5) and v.shape == (5,)
    np.testing.assert_allclose(v, 0.0)
    assert (greedy_policy(q)[:3] == 4).all()
    # With the real rewards walking to the goal is better than stopping.
    v2, q2 = value_iteration(with_terminate_action(model), 0.9)
    np.testing.assert_allclose(v2[:4], value_iteration(model, 0.9)[0], atol=1e-9)
    assert (q2[:3, 4] == 0.0).all()


def test_reachable_states():
    model = corridor(4)
    right, left = np.full(4, RIGHT), np.full(4, LEFT)
    assert reachable_states(model, right, 0).tolist() == [True] * 4
    assert reachable_states(model, left, 0).tolist() == [True, False, False, False]
    assert reachable_states(corridor(4, slip=0.1), left, 0).all()  # slips reach everything


def test_gamma_one_needs_a_proper_policy():
    model = corridor(3)
    v, _ = value_iteration(model, 1.0)
    np.testing.assert_allclose(v, [9.0, 10.0, 0.0])
    with pytest.raises(ValueError, match="never reaches a terminal state"):
        policy_evaluation(model, np.full(3, LEFT), 1.0)


def test_bad_inputs_are_named():
    model = corridor(3)
    with pytest.raises(ValueError, match="reward: expected shape"):
        MDPArrays.of(model, reward=np.zeros((3, 4)))
    with pytest.raises(ValueError, match="gamma"):
        value_iteration(model, 0.0)
    with pytest.raises(ValueError, match="policy: expected"):
        policy_evaluation(model, np.zeros(5, dtype=int), 0.9)


def test_four_rooms_values_are_consistent():
    model = grid_model(FOUR_ROOMS_11, start=(1, 1), goal=(11, 11), slip=0.1)
    v, q = value_iteration(model, 0.99)
    # The Bellman optimality equation holds, and the greedy policy attains V*.
    np.testing.assert_allclose(q.max(axis=1), v, atol=1e-8)
    np.testing.assert_allclose(policy_evaluation(model, greedy_policy(q), 0.99), v, atol=1e-6)
