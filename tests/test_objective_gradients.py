"""Gradients of the trajectory terms and of Ĵ against central finite differences (float64)."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf  # noqa: I001
from test_objective_brute_force import random_batch

import opt_suite  # noqa: F401
from opt_suite.objective import (
    JhatConfig,
    forward_terms,
    jhat,
    jhat_and_gradients,
    trajectory_terms,
)

EPS = 1e-6


def directional_check(fn, tables, seed, directions=3, rtol=1e-6):
    """∇f·v from the tape against (f(x + εv) − f(x − εv)) / 2ε for random directions v."""
    rng = np.random.default_rng(seed)
    variables = [tf.constant(x) for x in tables]
    with tf.GradientTape() as tape:
        tape.watch(variables)
        value = fn(*variables)
    grads = tape.gradient(value, variables)
    for _ in range(directions):
        vs = [rng.normal(size=x.shape) for x in tables]
        analytic = sum(float(tf.reduce_sum(g * v)) for g, v in zip(grads, vs, strict=True))
        plus = float(fn(*[x + EPS * v for x, v in zip(tables, vs, strict=True)]))
        minus = float(fn(*[x - EPS * v for x, v in zip(tables, vs, strict=True)]))
        numeric = (plus - minus) / (2 * EPS)
        assert analytic == pytest.approx(numeric, rel=rtol, abs=1e-8)
    return grads


def valid_batch(seed):
    """Tables whose perturbations stay in the valid range (probabilities away from 0 and 1)."""
    pi, mu, beta, lengths = random_batch(seed, 4, 0, [5, 3, 6, 2])
    pi = np.clip(pi, 0.05, None)  # π need not be normalised for the recursion's algebra
    beta = np.clip(beta, 0.05, 0.95)
    return pi, mu, beta, lengths


@pytest.mark.parametrize("output", ["log_prob", "expected_terminations", "posterior_terminations"])
def test_trajectory_terms_gradients(output):
    pi, mu, beta, lengths = valid_batch(0)
    weights = tf.constant([1.0, -0.5, 2.0, 0.25], tf.float64)

    def fn(p, m, b):
        return tf.reduce_sum(weights * getattr(trajectory_terms(p, m, b, lengths), output))

    directional_check(fn, (pi, mu, beta), seed=1)


def test_padding_gets_zero_gradient():
    pi, mu, beta, lengths = valid_batch(2)
    tables = [tf.constant(x) for x in (pi, mu, beta)]
    with tf.GradientTape() as tape:
        tape.watch(tables)
        terms = trajectory_terms(*tables, lengths)
        total = sum(tf.reduce_sum(x) for x in terms)
    d_pi, d_mu, d_beta = (g.numpy() for g in tape.gradient(total, tables))
    for b, t in enumerate(lengths):
        assert not d_mu[b, t:].any()  # μ at the last state and after
        assert not d_pi[b, t:].any()  # π at the last state is never used either
        assert not d_beta[b, t + 1 :].any() and not d_beta[b, 0].any()
        assert d_beta[b, t].any()  # ... but β at the last state is (termination at s_T)


@pytest.mark.parametrize("likelihood", ["prob", "log_prob_per_step"])
@pytest.mark.parametrize("jit_compile", [False, True], ids=["graph", "xla"])
def test_jhat_gradients(likelihood, jit_compile):
    pi, mu, beta, lengths = valid_batch(3)
    probs = np.random.default_rng(4).dirichlet(np.ones(3), size=(*pi.shape[:2], 2))

    def fn(p, m, b, q):
        parts = jhat(p, m, b, lengths, q, lambda1=0.3, lambda2=50.0, likelihood=likelihood,
                     jit_compile=jit_compile)  # fmt: skip
        return parts.total

    directional_check(fn, (pi, mu, beta, probs), seed=5)


def test_xla_gradient_equals_graph_gradient():
    pi, mu, beta, lengths = valid_batch(6)
    results = []
    for jit in (False, True):
        tables = [tf.constant(x) for x in (pi, mu, beta)]
        with tf.GradientTape() as tape:
            tape.watch(tables)
            terms = trajectory_terms(*tables, lengths, jit_compile=jit)
            value = tf.reduce_sum(terms.log_prob) + 3.0 * tf.reduce_sum(
                terms.posterior_terminations
            )
        results.append([g.numpy() for g in tape.gradient(value, tables)])
    for graph, xla in zip(*results, strict=True):
        np.testing.assert_allclose(xla, graph, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("jit_compile", [False, True], ids=["graph", "xla"])
def test_jhat_and_gradients_equals_the_tape(jit_compile):
    pi, mu, beta, lengths = valid_batch(7)
    probs = np.random.default_rng(8).dirichlet(np.ones(3), size=(*pi.shape[:2], 2))
    config = JhatConfig(lambda1=0.2, lambda2=30.0, jit_compile=jit_compile)
    parts, grads = jhat_and_gradients(pi, mu, beta, lengths, probs, config)
    tables = [tf.constant(x) for x in (pi, mu, beta, probs)]
    with tf.GradientTape() as tape:
        tape.watch(tables)
        expected = jhat(*tables[:3], lengths, tables[3], 0.2, 30.0, jit_compile=False)
    assert float(parts.total) == pytest.approx(float(expected.total), rel=1e-12)
    for got, want in zip(grads, tape.gradient(expected.total, tables), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-13)
    _, without_kl = jhat_and_gradients(pi, mu, beta, lengths, None, config)
    assert without_kl[3] is None


@pytest.mark.parametrize("jit_compile", [False, True], ids=["graph", "xla"])
def test_hand_written_adjoint_equals_autodiff(jit_compile):
    """forward_terms (hand-written reverse pass) against autodiff through trajectory_terms."""
    pi, mu, beta, lengths = random_batch(11, 4, 2, [6, 2, 5, 0, 3])
    weights = [tf.constant([1.0, -2.0, 0.5, 3.0, 1.5], tf.float64), tf.constant([0.3] * 5)]
    results = []
    for fn in (forward_terms, trajectory_terms):
        tables = [tf.constant(x) for x in (pi, mu, beta)]
        with tf.GradientTape() as tape:
            tape.watch(tables)
            log_prob, expected = fn(*tables, lengths, jit_compile=jit_compile)[:2]
            value = tf.reduce_sum(weights[0] * log_prob) + tf.reduce_sum(
                tf.cast(weights[1], tf.float64) * expected
            )
        results.append([g.numpy() for g in tape.gradient(value, tables)])
    for ours, autodiff in zip(*results, strict=True):
        np.testing.assert_allclose(ours, autodiff, rtol=1e-10, atol=1e-12)
