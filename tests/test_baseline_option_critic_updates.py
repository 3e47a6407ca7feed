"""Option-critic's per-step maths, by hand, compiled and as plain Python (rlax-style)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from baselines.option_critic import updates
from baselines.option_critic._jit import COMPILED
from baselines.option_critic.method import option_tables

IMPLS = ["compiled", "python"] if COMPILED else ["python"]


@pytest.fixture(params=IMPLS)
def impl(request):
    """updates.<name>, compiled or its plain-Python original."""
    return lambda name: (
        getattr(updates, name)
        if request.param == "compiled" or not COMPILED
        else getattr(updates, name).py_func
    )


def test_softmax_into_by_hand(impl):
    out = np.empty(2)
    impl("softmax_into")(np.array([0.0, 1.0]), 0.5, out)
    # exp(0 / 0.5) : exp(1 / 0.5) = 1 : e^2
    np.testing.assert_allclose(out, [1 / (1 + math.e**2), math.e**2 / (1 + math.e**2)])
    impl("softmax_into")(np.array([0.0, 10.0]), 0.001, out)  # exp(10000) would overflow
    np.testing.assert_allclose(out, [0.0, 1.0])


@pytest.mark.parametrize(
    ("u", "index"), [(0.0, 0), (0.1, 0), (0.2, 1), (0.69, 1), (0.7, 2), (0.999, 2)]
)
def test_sample_index_inverts_the_cumulative_sum(impl, u, index):
    assert impl("sample_index")(np.array([0.2, 0.5, 0.3]), u) == index


def test_sigmoid_is_stable(impl):
    sigmoid = impl("sigmoid")
    assert sigmoid(0.0) == 0.5
    assert sigmoid(800.0) == 1.0 and sigmoid(-800.0) == 0.0
    assert sigmoid(math.log(3.0)) == pytest.approx(0.75)


@pytest.mark.parametrize(
    ("u", "option"),
    [
        (0.05, 0),  # u < eps: uniform, int(0.05 / 0.3 * 3) = 0
        (0.25, 2),  # int(0.25 / 0.3 * 3) = 2
        (0.3 + 0.7 * 0.25, 1),  # greedy: first of the tied best (1, 2)
        (0.3 + 0.7 * 0.75, 2),  # greedy: second of the tied best
    ],
)
def test_choose_option_epsilon_greedy_breaks_ties_uniformly(impl, u, option):
    buf = np.empty(3)
    assert impl("choose_option")(np.array([1.0, 3.0, 3.0]), False, 1.0, 0.3, u, buf) == option


def test_choose_option_softmax(impl):
    buf = np.empty(2)
    q = np.array([0.0, 0.0])
    assert impl("choose_option")(q, True, 0.01, 0.0, 0.49, buf) == 0
    assert impl("choose_option")(q, True, 0.01, 0.0, 0.51, buf) == 1
    # Q_Omega = (0, 0.1) at T = 0.01: option 1 has probability 1 / (1 + e^-10).
    assert impl("choose_option")(np.array([0.0, 0.1]), True, 0.01, 0.0, 0.999, buf) == 1


def test_arrival_value_by_hand(impl):
    # U(s', o=0) = (1 - 0.25) * 1 + 0.25 * max(1, 4, 2) = 1.75
    assert impl("arrival_value")(np.array([1.0, 4.0, 2.0]), 0, 0.25) == pytest.approx(1.75)


def test_critic_step_by_hand(impl):
    q_omega = np.array([[0.0, 2.0]])
    q_u = np.zeros((1, 2, 2))
    q_u[0, 1, 0] = 1.0
    impl("critic_step")(q_omega, q_u, 0, 1, 0, 3.0, 0.5)
    # Q_U: 1 + 0.5 (3 - 1) = 2;  Q_Omega: 2 + 0.5 (3 - 2) = 2.5; nothing else moves.
    assert q_u[0, 1, 0] == 2.0 and q_omega[0, 1] == 2.5
    assert q_u.sum() == 2.0 and q_omega.sum() == 2.5


def test_intra_option_step_by_hand(impl):
    theta = np.zeros((1, 1, 2))
    impl("intra_option_step")(theta, 0, 0, 0, 2.0, 0.5, 1.0, np.empty(2))
    # pi = (0.5, 0.5): theta += 0.5 * 2 * (onehot(0) - pi) = (+0.5, -0.5)
    np.testing.assert_allclose(theta[0, 0], [0.5, -0.5])


def test_termination_step_by_hand(impl):
    vartheta = np.zeros((2, 3))
    impl("termination_step")(vartheta, np.array([1.0, 3.0]), 0, 2, 0.5, 1.0)
    # beta = 0.5; A = 1 - 3 = -2; with xi = 0.5: -1.5; vartheta -= 1 * 0.25 * -1.5 = +0.375
    assert vartheta[0, 2] == pytest.approx(0.375)
    assert np.count_nonzero(vartheta) == 1
    # The greedy option (A = 0) with no regulariser does not move.
    impl("termination_step")(vartheta, np.array([1.0, 3.0]), 1, 1, 0.0, 1.0)
    assert vartheta[1, 1] == 0.0


def test_option_tables_are_the_softmax_and_sigmoid():
    theta = np.array([[[0.0, 0.01]]])
    vartheta = np.zeros((1, 1))
    mu, beta = option_tables(theta, vartheta, 0.01)
    np.testing.assert_allclose(mu[0, 0], [1 / (1 + math.e), math.e / (1 + math.e)])
    np.testing.assert_allclose(beta, [[0.5]])
    _, beta = option_tables(theta, np.array([[-800.0]]), 0.01)
    assert beta[0, 0] == 0.0
