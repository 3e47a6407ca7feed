"""The rules written once and shared: the termination rule, eq. 2's weighting, Trajectory's home."""

from __future__ import annotations

import numpy as np
import pytest

from opt_suite.options.termination import terminates


def test_termination_adds_the_bump_per_step_run() -> None:
    # beta 0.1, bump 0.05: after 1 step 0.15, after 3 steps 0.25.
    assert terminates(0.14, 0.1, 0.05, 1)
    assert not terminates(0.16, 0.1, 0.05, 1)
    assert terminates(0.24, 0.1, 0.05, 3)
    assert not terminates(0.26, 0.1, 0.05, 3)


def test_termination_is_certain_once_the_bump_reaches_one() -> None:
    # 0 + 0.05 * 20 = 1: every draw in [0, 1) terminates (the min(1, .) of appendix E).
    draws = np.linspace(0.0, 1.0, 1001, endpoint=False)
    assert terminates(draws, 0.0, 0.05, 20).all()
    assert not terminates(draws, 0.0, 0.05, 19).all()


def test_termination_vectorises_over_runs() -> None:
    draws = np.array([0.5, 0.5, 0.5])
    beta = np.array([0.0, 0.4, 0.9])
    steps = np.array([1, 3, 1])
    # 0.05, 0.55, 0.95 against 0.5
    np.testing.assert_array_equal(terminates(draws, beta, 0.05, steps), [False, True, True])


def test_eq2_weighting() -> None:
    from opt_suite.objective import weighted_total
    from opt_suite.objective.jhat import tf

    # lambda2 * prob - terminations + lambda1 * kl = 100 * 0.5 - 3 + 0.001 * 2 = 47.002
    assert weighted_total(0.5, 3.0, 2.0, 0.001, 100.0) == pytest.approx(47.002)
    tensors = [tf.constant(v, tf.float64) for v in (0.5, 3.0, 2.0, 0.001, 100.0)]
    assert float(weighted_total(*tensors)) == pytest.approx(47.002)


def test_trajectory_lives_below_methods_and_keeps_its_old_import() -> None:
    import opt_suite.methods.base as methods_base
    import opt_suite.trajectory as trajectory

    assert methods_base.Trajectory is trajectory.Trajectory
    t = trajectory.Trajectory("t/train/0", np.arange(4), np.zeros(3, int), np.zeros(3))
    assert len(t) == 3


def test_smdp_target_bootstraps_only_from_a_non_terminal_state() -> None:
    from opt_suite.options.termination import smdp_target

    # R = 1 + 0.9 * 2 = 2.8 over k = 2 steps, gamma^k = 0.81, max Q(s', .) = 10.
    assert smdp_target(2.8, 0.81, 10.0, False) == pytest.approx(2.8 + 8.1)
    assert smdp_target(2.8, 0.81, 10.0, True) == 2.8
    assert isinstance(smdp_target(2.8, 0.81, 10.0, False), float)  # the scalar engine's floats
    batch = smdp_target(
        np.array([2.8, 2.8]),
        np.array([0.81, 0.81]),
        np.array([10.0, 10.0]),
        np.array([False, True]),
    )
    np.testing.assert_allclose(batch, [10.9, 2.8])


def test_adam_ascent_matches_kingma_and_ba_by_hand() -> None:
    from opt_suite.objective.adam import AdamState, adam_ascent
    from opt_suite.objective.jhat import tf

    # Step 1 from zero moments with g = 2: m = 0.2, v = 0.004; the bias-corrected step is
    # lr * m_hat / (sqrt(v_hat) + eps) with m_hat = 2, v_hat = 4: 0.1 * 2 / (2 + 1e-8) ~= 0.1.
    w = tf.constant([1.0, -1.0], tf.float64)
    g = tf.constant([2.0, -0.5], tf.float64)
    zero = AdamState(tf.zeros_like(w), tf.zeros_like(w))
    w1, state = adam_ascent(w, g, zero, 1, 0.1)
    np.testing.assert_allclose(state.m.numpy(), [0.2, -0.05])
    np.testing.assert_allclose(state.v.numpy(), [0.004, 0.00025])
    np.testing.assert_allclose(w1.numpy(), [1.1, -1.1], rtol=1e-7)  # up the gradient, |step| = lr
    # Step 2 with the same gradient: m = 0.38, v ~= 0.007996; m_hat = 2, v_hat = 4 again.
    w2, _ = adam_ascent(w1, g, state, 2, 0.1)
    np.testing.assert_allclose(w2.numpy(), [1.2, -1.2], rtol=1e-7)
