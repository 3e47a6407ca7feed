"""Ĵ (eq. 2) and its parts, the KL term, dtypes and long trajectories.

The compiled path (networks -> Ĵ -> Adam, one graph per round) is training's; its tests are in
test_offline_options.py.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf  # noqa: I001
from test_objective_brute_force import random_batch

import opt_suite  # noqa: F401
from opt_suite.objective import (
    JhatConfig,
    jhat,
    jhat_and_gradients,
    option_diversity,
    trajectory_terms,
)


def kl(p, q):
    return float((p * np.log(p / q)).sum())


def test_parts_combine_as_in_eq_2():
    pi, mu, beta, lengths = random_batch(0, 4, 2, [6, 3, 5])
    probs = np.random.default_rng(1).dirichlet(np.ones(2), size=(3, 8, 2))
    parts = jhat(pi, mu, beta, lengths, probs, lambda1=0.1, lambda2=7.0, jit_compile=False)
    terms = trajectory_terms(pi, mu, beta, lengths)
    np.testing.assert_allclose(parts.log_prob, terms.log_prob, rtol=1e-12)
    np.testing.assert_allclose(parts.expected_terminations, terms.expected_terminations, rtol=1e-12)
    assert float(parts.prob_term) == pytest.approx(np.exp(terms.log_prob).mean(), rel=1e-12)
    assert float(parts.termination_term) == pytest.approx(
        (terms.expected_terminations.numpy() / lengths).mean(), rel=1e-12
    )
    assert float(parts.total) == pytest.approx(
        7.0 * float(parts.prob_term) - float(parts.termination_term) + 0.1 * float(parts.kl_term),
        rel=1e-12,
    )


def test_log_prob_per_step_likelihood():
    pi, mu, beta, lengths = random_batch(2, 3, 0, [6, 2])
    parts = jhat(pi, mu, beta, lengths, likelihood="log_prob_per_step", jit_compile=False)
    assert float(parts.prob_term) == pytest.approx((parts.log_prob.numpy() / lengths).mean())
    assert float(parts.kl_term) == 0.0


def test_kl_is_the_ordered_pair_mean_summed_over_states():
    # Two options over two actions at two states of one trajectory of T = 2 (a third state padded):
    # g = Σ_t ½ [KL(p_0 || p_1) + KL(p_1 || p_0)].
    probs = np.array([[[[0.9, 0.1], [0.5, 0.5]], [[0.2, 0.8], [0.6, 0.4]], [[0.0, 1.0], [1, 0]]]])
    expected = sum(
        0.5 * (kl(probs[0, t, 0], probs[0, t, 1]) + kl(probs[0, t, 1], probs[0, t, 0]))
        for t in range(2)
    )
    assert float(option_diversity(probs, [2])[0]) == pytest.approx(expected, rel=1e-12)


def test_kl_with_three_options_and_masking():
    rng = np.random.default_rng(3)
    probs = rng.dirichlet(np.ones(4), size=(2, 5, 3))
    got = option_diversity(probs, [4, 1]).numpy()
    for b, length in enumerate([4, 1]):
        pairs = [(o, p) for o in range(3) for p in range(3) if o != p]
        expected = sum(kl(probs[b, t, o], probs[b, t, p]) for t in range(length) for o, p in pairs)
        assert got[b] == pytest.approx(expected / 6, rel=1e-12)


def test_kl_is_zero_with_one_option():
    probs = np.random.default_rng(4).dirichlet(np.ones(4), size=(2, 5, 1))
    assert not option_diversity(probs, [4, 2]).numpy().any()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtypes(dtype):
    pi, mu, beta, lengths = random_batch(5, 3, 1, [6, 4])
    pi, mu, beta = (x.astype(dtype) for x in (pi, mu, beta))
    parts = jhat(pi, mu, beta, lengths, jit_compile=False)
    assert parts.total.dtype == tf.as_dtype(dtype)
    reference = jhat(*(x.astype(np.float64) for x in (pi, mu, beta)), lengths, jit_compile=False)
    assert float(parts.total) == pytest.approx(float(reference.total), rel=1e-5)


def test_bad_arguments_are_named():
    pi, mu, beta, lengths = random_batch(6, 2, 0, [3])
    with pytest.raises(ValueError, match="likelihood.*'log'"):
        jhat(pi, mu, beta, lengths, likelihood="log")
    with pytest.raises(ValueError, match=r"mu: expected a \[B, L, n\]"):
        trajectory_terms(pi, mu[0], beta, lengths)
    with pytest.raises(ValueError, match="option_action_probs"):
        jhat(pi, mu, beta, lengths, option_action_probs=mu)
    with pytest.raises(ValueError, match="chunk"):
        JhatConfig(chunk=0)
    with pytest.raises(ValueError, match=r"lengths: expected 1 values in \[0, 7\].*got \[8\]"):
        trajectory_terms(pi, mu, beta, [8])
    with pytest.raises(ValueError, match="lengths: expected 1 values"):
        jhat(pi, mu, beta, [3, 2])


def test_long_trajectory_is_finite_and_accurate_in_float32():
    rng = np.random.default_rng(7)
    length, n = 10_000, 6
    pi = rng.dirichlet(np.ones(n), size=(1, length + 1))
    mu = rng.uniform(0.01, 1.0, size=(1, length + 1, n))
    beta = rng.uniform(size=(1, length + 1, n))
    exact = trajectory_terms(pi, mu, beta, [length], jit_compile=True)
    tables = [tf.constant(x, tf.float32) for x in (pi, mu, beta)]
    with tf.GradientTape() as tape:
        tape.watch(tables)
        single = trajectory_terms(*tables, [length], jit_compile=True)
        value = single.log_prob[0]
    grads = tape.gradient(value, tables)
    assert -1e5 < float(exact.log_prob[0]) < -1e3  # Pr(h) itself underflows any float
    assert float(single.log_prob[0]) == pytest.approx(float(exact.log_prob[0]), rel=1e-5)
    for name in ("expected_terminations", "posterior_terminations"):
        assert float(getattr(single, name)[0]) == pytest.approx(
            float(getattr(exact, name)[0]), rel=1e-4
        )
    assert all(np.isfinite(g.numpy()).all() for g in grads)


@pytest.mark.parametrize("jit_compile", [False, True], ids=["graph", "xla"])
def test_with_and_without_kl_in_one_process(jit_compile):
    """Same config, with and without option_action_probs: one signature, no retracing crash."""
    pi, mu, beta, lengths = random_batch(9, 3, 1, [6, 4])
    probs = np.random.default_rng(10).dirichlet(np.ones(2), size=(2, 8, 2))
    config = JhatConfig(lambda1=0.5, lambda2=2.0, jit_compile=jit_compile)
    without = jhat(pi, mu, beta, lengths, None, 0.5, 2.0, jit_compile=jit_compile)
    with_kl = jhat(pi, mu, beta, lengths, probs, 0.5, 2.0, jit_compile=jit_compile)
    assert float(without.kl_term) == 0.0 < float(with_kl.kl_term)
    assert float(with_kl.total - without.total) == pytest.approx(0.5 * float(with_kl.kl_term))
    _, grads = jhat_and_gradients(pi, mu, beta, lengths, None, config)
    assert grads[3] is None
    _, grads = jhat_and_gradients(pi, mu, beta, lengths, probs, config)
    assert grads[3].shape == probs.shape
