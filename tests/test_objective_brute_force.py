"""Theorems 1–2 and the posterior against enumeration of every option path (float64, 1e-9)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import opt_suite  # noqa: F401
from opt_suite.objective import brute_force_terms, enumerate_terms, trajectory_terms

TOL = 1e-9


def random_batch(seed: int, num_options: int, primitives: int, lengths, length: int = 8):
    """Random tables [B, L, n]; the last ``primitives`` options are primitives (β ≡ 1, one-hot μ).

    Everything the API promises to ignore is filled with garbage (finite, but far from valid).
    """
    rng = np.random.default_rng(seed)
    batch = len(lengths)
    n = num_options
    pi = rng.dirichlet(np.ones(n), size=(batch, length))
    mu = rng.uniform(0.05, 1.0, size=(batch, length, n))
    beta = rng.uniform(size=(batch, length, n))
    if primitives:
        actions = rng.integers(0, primitives, size=(batch, length))
        mu[..., n - primitives :] = np.eye(primitives)[actions]
        beta[..., n - primitives :] = 1.0
    for b, t in enumerate(lengths):
        mu[b, t:] = rng.normal(size=mu[b, t:].shape) * 1e3  # at and after the last state
        pi[b, t + 1 :] = -7.0
        beta[b, t + 1 :] = 55.0
        beta[b, 0] = -3.0  # β at t = 0 is never used
    return pi, mu, beta, np.asarray(lengths)


CASES = [
    # (seed, n, primitives, lengths): mixed lengths in one batch, padding garbage after each end.
    (0, 2, 0, [1, 2, 3, 4, 5, 6, 0]),
    (1, 3, 0, [6, 5, 4, 3, 2, 1]),
    (2, 4, 0, [6, 3, 5, 1]),
    (3, 3, 2, [6, 6, 2, 4, 1]),
    (4, 4, 2, [5, 6, 3, 0, 2]),
    (5, 4, 3, [6, 4, 1]),
]


@pytest.mark.parametrize(("seed", "n", "primitives", "lengths"), CASES)
def test_matches_enumeration(seed, n, primitives, lengths):
    pi, mu, beta, lengths = random_batch(seed, n, primitives, lengths)
    expected = brute_force_terms(pi, mu, beta, lengths)
    got = trajectory_terms(pi, mu, beta, lengths, chunk=3)
    for name in ("log_prob", "expected_terminations", "posterior_terminations"):
        np.testing.assert_allclose(
            getattr(got, name).numpy(), getattr(expected, name), rtol=TOL, atol=TOL, err_msg=name
        )


def test_xla_and_chunk_sizes_give_the_same_numbers():
    pi, mu, beta, lengths = random_batch(7, 4, 2, [6, 1, 4, 0, 5, 3])
    expected = brute_force_terms(pi, mu, beta, lengths)
    for chunk, jit in [(1, False), (4, False), (16, False), (4, True)]:
        got = trajectory_terms(pi, mu, beta, lengths, chunk=chunk, jit_compile=jit)
        for name in ("log_prob", "expected_terminations", "posterior_terminations"):
            np.testing.assert_allclose(
                getattr(got, name).numpy(), getattr(expected, name), rtol=TOL, atol=TOL
            )


def test_filtering_and_posterior_differ():
    """The two E[#terminations] are different quantities (why the paper's table shows gaps)."""
    pi, mu, beta, lengths = random_batch(8, 3, 0, [6, 6, 6])
    got = trajectory_terms(pi, mu, beta, lengths)
    gap = np.abs(got.expected_terminations.numpy() - got.posterior_terminations.numpy())
    assert gap.min() > 1e-3


def test_hand_worked_two_steps():
    # Two options, two actions, three states s_0, s_1, s_2.
    # t=0: α_0 = π_0 μ_0 = (0.6·0.5, 0.4·0.25) = (0.3, 0.1); Pr(a_0) = 0.4; p_0 = (0.75, 0.25).
    # t=1: Pr(T_1=1 | h_1) = p_0·β_1 = 0.75·0.2 + 0.25·0.5 = 0.275.
    #      α_1 = α_0 ⊙ (1−β_1) ⊙ μ_1 + (α_0·β_1) (π_1 ⊙ μ_1)
    #          = (0.3·0.8·0.8, 0.1·0.5·0.4) + 0.11·(0.5·0.8, 0.5·0.4)
    #          = (0.192 + 0.044, 0.02 + 0.022)
    #          = (0.236, 0.042);  Pr(h) = 0.278.
    # t=2 (last state): Pr(T_2=1 | h_2) = (0.236·0.1 + 0.042·0.9) / 0.278 = 0.0614 / 0.278.
    # Posterior at t=1: Pr(T_1=1, h) / Pr(h) = 0.11·0.6 / 0.278 = 0.066 / 0.278 (the restart paths).
    pi = np.array([[[0.6, 0.4], [0.5, 0.5], [0.3, 0.7]]])
    mu = np.array([[[0.5, 0.25], [0.8, 0.4], [9.0, 9.0]]])  # μ at the last state is ignored
    beta = np.array([[[9.0, 9.0], [0.2, 0.5], [0.1, 0.9]]])  # β at t = 0 is ignored
    got = trajectory_terms(pi, mu, beta, [2])
    assert got.log_prob.numpy()[0] == pytest.approx(math.log(0.278), abs=1e-12)
    assert got.expected_terminations.numpy()[0] == pytest.approx(0.275 + 0.0614 / 0.278, abs=1e-12)
    assert got.posterior_terminations.numpy()[0] == pytest.approx(
        0.066 / 0.278 + 0.0614 / 0.278, abs=1e-12
    )
    assert enumerate_terms(pi[0], mu[0], beta[0], 2) == pytest.approx(
        (0.278, 0.275 + 0.0614 / 0.278, (0.066 + 0.0614) / 0.278), abs=1e-12
    )


def test_primitives_only_is_the_product_of_pi():
    """With primitives alone every step is a decision: Pr(h) = Π π(s_t, a_t), T terminations."""
    rng = np.random.default_rng(3)
    actions = rng.integers(0, 3, size=5)
    pi = rng.dirichlet(np.ones(3), size=(1, 6))
    mu = np.eye(3)[np.append(actions, 0)][None]
    beta = np.ones((1, 6, 3))
    got = trajectory_terms(pi, mu, beta, [5])
    assert got.log_prob.numpy()[0] == pytest.approx(np.log(pi[0, np.arange(5), actions]).sum())
    assert got.expected_terminations.numpy()[0] == pytest.approx(5.0)
    assert got.posterior_terminations.numpy()[0] == pytest.approx(5.0)


def test_never_terminating_option_alone():
    """One option that never stops: Pr(h) = Π μ, no terminations except by β at the last state."""
    mu = np.array([[[0.5], [0.25], [0.5], [1.0]]])
    beta = np.array([[[1.0], [0.0], [0.0], [0.3]]])
    got = trajectory_terms(np.ones((1, 4, 1)), mu, beta, [3])
    assert got.log_prob.numpy()[0] == pytest.approx(math.log(0.5 * 0.25 * 0.5))
    assert got.expected_terminations.numpy()[0] == pytest.approx(0.3)
    assert got.posterior_terminations.numpy()[0] == pytest.approx(0.3)
