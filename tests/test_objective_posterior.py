"""Per-step posteriors Pr(O_t = o | h) and Pr(T_t = 1 | h) against enumerating every option path."""

from __future__ import annotations

import numpy as np
import pytest
from test_objective_brute_force import CASES, random_batch

import opt_suite  # noqa: F401
from opt_suite.objective import trajectory_terms
from opt_suite.objective.brute_force import enumerate_step_posteriors
from opt_suite.objective.posterior import step_posteriors

TOL = 1e-9


@pytest.mark.parametrize(("seed", "n", "primitives", "lengths"), CASES)
@pytest.mark.parametrize("jit_compile", [False, True])
def test_matches_enumeration(seed, n, primitives, lengths, jit_compile):
    pi, mu, beta, lengths = random_batch(seed, n, primitives, lengths)
    got = step_posteriors(pi, mu, beta, lengths, chunk=3, jit_compile=jit_compile)
    option, termination = got.option.numpy(), got.termination.numpy()
    for b, length in enumerate(lengths):
        if length == 0:
            assert not option[b].any() and not termination[b].any()
            continue
        want_option, want_termination = enumerate_step_posteriors(pi[b], mu[b], beta[b], length)
        np.testing.assert_allclose(option[b, :length], want_option, rtol=TOL, atol=TOL)
        np.testing.assert_allclose(termination[b, : length + 1], want_termination, atol=TOL)
        assert not option[b, length:].any() and not termination[b, length + 1 :].any()


def test_terminations_sum_to_the_posterior_term():
    pi, mu, beta, lengths = random_batch(7, 4, 2, [6, 3, 5, 0])
    got = step_posteriors(pi, mu, beta, lengths)
    terms = trajectory_terms(pi, mu, beta, lengths)
    np.testing.assert_allclose(
        got.termination.numpy().sum(axis=1), terms.posterior_terminations.numpy(), atol=TOL
    )


def test_hand_worked_two_steps():
    # Two options, two actions; option 0 takes a_0 = a_1 surely and never ends (β = 0), option 1
    # takes them w.p. 0.5 and always ends; π = (0.5, 0.5) everywhere.
    # Paths (O_0, T_1, O_1, T_2) with weight π μ ...: O_0 = 0 must continue (β = 0) -> 0.5·1·1·1;
    # O_0 = 1 ends (β = 1) and restarts: O_1 = 0 -> 0.5·0.5·0.5·1, O_1 = 1 -> 0.5·0.5·0.5·0.5.
    # Pr(h) = 0.5 + 0.125 + 0.0625 = 0.6875; T_2 = 1 only on option 1 at s_1.
    pi = np.full((1, 3, 2), 0.5)
    mu = np.array([[[1.0, 0.5], [1.0, 0.5], [0.0, 0.0]]])
    beta = np.array([[[0.0, 1.0], [0.0, 1.0], [0.0, 1.0]]])
    got = step_posteriors(pi, mu, beta, [2])
    np.testing.assert_allclose(
        got.option.numpy()[0, :2],
        [[0.5 / 0.6875, 0.1875 / 0.6875], [0.625 / 0.6875, 0.0625 / 0.6875]],
        atol=TOL,
    )
    np.testing.assert_allclose(
        got.termination.numpy()[0], [0.0, 0.1875 / 0.6875, 0.0625 / 0.6875], atol=TOL
    )
