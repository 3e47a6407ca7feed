"""Intra-option Q-learning: the update by hand, Q-learning with primitives, initiation sets."""

from __future__ import annotations

import numpy as np
import pytest
from tabular_toys import FOUR_ROOMS_11, ToyFamily, grid_model, toy_tasks

from opt_suite.families.tabular.fourrooms import FourRooms, Params, Variation
from opt_suite.learners.base import LearnerContext, LearnerRun
from opt_suite.learners.intra_option_kernels import intra_option_update
from opt_suite.learners.intra_option_q import IntraOptionQLearning
from opt_suite.learners.smdp_q import SMDPQLearning
from opt_suite.options import TabularOptionSet
from opt_suite.spec.canonical import to_plain
from opt_suite.testing import LearnerContract

EAGER_AND_COMPILED = [intra_option_update.py_func, intra_option_update]


class TestIntraOptionQLearningContract(LearnerContract):
    learner_class = IntraOptionQLearning
    params = IntraOptionQLearning.Params()


def _update(update, q_s, q_s2, mu_a, beta_s2, available_s2, r, done, bumps=(-1, 0.0, 0.0)):
    """``bumps``: (running option, bump on its beta, bump on the others'); none by default."""
    update(
        q_s, q_s2, np.array(mu_a), np.array(beta_s2), np.array(available_s2), r, done, 0.5, 0.9,
        *bumps,
    )  # fmt: skip
    return q_s


@pytest.mark.parametrize("update", EAGER_AND_COMPILED)
def test_update_by_hand(update):
    """Two options: a primitive-like one (beta 1) and one that continues w.p. 0.75; alpha 0.5."""
    q_s2 = np.array([4.0, 3.0])
    # max_o' Q(s', o') = 4.
    # o0: mu 1, beta 1: target -1 + 0.9 * 4 = 2.6; 1 + 0.5 * 1 * (2.6 - 1) = 1.8.
    # o1: mu 0.5: U = 0.75 * 3 + 0.25 * 4 = 3.25; target -1 + 0.9 * 3.25 = 1.925;
    #     2 + 0.5 * 0.5 * (1.925 - 2) = 1.98125.
    q = _update(
        update, np.array([1.0, 2.0]), q_s2, [1.0, 0.5], [1.0, 0.25], [True, True], -1, False
    )
    np.testing.assert_allclose(q, [1.8, 1.98125])
    # o0 not available in s': the max is Q(s', o1) = 3. o0: -1 + 2.7 = 1.7; 1 + 0.5 * 0.7 = 1.35.
    # o1: U = 0.75 * 3 + 0.25 * 3 = 3, target 1.7; 2 + 0.25 * (1.7 - 2) = 1.925.
    q = _update(
        update, np.array([1.0, 2.0]), q_s2, [1.0, 0.5], [1.0, 0.25], [False, True], -1, False
    )
    np.testing.assert_allclose(q, [1.35, 1.925])
    # s' terminal: targets are r = -1. o0: 1 + 0.5 * (-2) = 0; o1: 2 + 0.25 * (-3) = 1.25.
    q = _update(update, np.array([1.0, 2.0]), q_s2, [1.0, 0.5], [1.0, 0.25], [True, True], -1, True)
    np.testing.assert_allclose(q, [0.0, 1.25])
    # An option that could not have taken the action (mu 0) is not updated.
    q = _update(
        update, np.array([1.0, 2.0]), q_s2, [0.0, 0.5], [1.0, 0.25], [True, True], -1, False
    )
    np.testing.assert_allclose(q, [1.0, 1.98125])


@pytest.mark.parametrize("update", EAGER_AND_COMPILED)
def test_update_with_the_termination_bump_in_the_target(update):
    """o1 runs and took its 3rd step (bump 0.05: + 0.15 on its beta); o2 reads the step as its
    first (+ 0.05); o0 is primitive-like (beta 1: its U is the max whatever the bump). alpha 0.5.

    max_o' Q(s', o') = 4. o0: target -1 + 0.9 * 4 = 2.6; 1 + 0.5 * (2.6 - 1) = 1.8.
    o1: b = 0.25 + 0.15 = 0.4, U = 0.6 * 3 + 0.4 * 4 = 3.4, target -1 + 0.9 * 3.4 = 2.06;
        2 + 0.5 * 0.5 * (2.06 - 2) = 2.015 (without the bump: U = 3.25, 1.98125).
    o2: b = 0.25 + 0.05 = 0.3, U = 0.7 * 3 + 0.3 * 4 = 3.3, target 1.97; 2 + 0.25 * -0.03 = 1.9925.
    """
    q_s2 = np.array([4.0, 3.0, 3.0])
    args = ([1.0, 0.5, 0.5], [1.0, 0.25, 0.25], [True, True, True], -1, False)
    q = _update(update, np.array([1.0, 2.0, 2.0]), q_s2, *args, bumps=(1, 0.15, 0.05))
    np.testing.assert_allclose(q, [1.8, 2.015, 1.9925])
    # Past min(1, .): o1 at its 16th step, 0.25 + 0.8 >= 1, so U is the max alone: target 2.6;
    # 2 + 0.25 * (2.6 - 2) = 2.15 (not (1 - 1.05) * 3 + 1.05 * 4, which would give 2.17475).
    q = _update(update, np.array([1.0, 2.0, 2.0]), q_s2, *args, bumps=(1, 0.8, 0.05))
    np.testing.assert_allclose(q, [1.8, 2.15, 1.9925])


@pytest.mark.parametrize("update", EAGER_AND_COMPILED)
def test_update_when_the_step_stays_in_place(update):
    """s' = s (a move into a wall): one array; the max and each Q(s', o) are read before writes.

    max = 2. o0: -1 + 0.9 * 2 = 0.8; 1 + 0.5 * (0.8 - 1) = 0.9.
    o1: U = 0.75 * 2 + 0.25 * 2 = 2 (Q(s, o1) before its update), target 0.8;
        2 + 0.25 * (0.8 - 2) = 1.7.
    """
    q = np.array([1.0, 2.0])
    q = _update(update, q, q, [1.0, 0.5], [1.0, 0.25], [True, True], -1, False)
    np.testing.assert_allclose(q, [0.9, 1.7])


def _runs(tasks, seeds):
    return [LearnerRun(t, np.random.SeedSequence(s)) for t in tasks for s in seeds]


def test_with_primitives_only_it_is_smdp_q_learning_exactly():
    """Primitives only: one-step Q-learning in both learners, same uniforms, same numbers."""
    family = FourRooms(Params(layout="sutton-13x13"))
    _, test = family.make_tasks(Variation(), (), 4, 1, 3, seed=0)
    runs = _runs(test, range(2))
    empty = TabularOptionSet.empty(int(family.observation_space.n), 4)
    params = SMDPQLearning.Params(alpha=0.3, q_init=1.0)
    ours = IntraOptionQLearning(params).run(LearnerContext(family, runs, empty, 20, 300))
    smdp = SMDPQLearning(params).run(LearnerContext(family, runs, empty, 20, 300))
    for a, b in zip(ours, smdp, strict=True):
        np.testing.assert_array_equal(a.steps, b.steps)
        np.testing.assert_array_equal(a.returns, b.returns)


def _hallway_runs(params, episodes=8):
    family = FourRooms(Params(layout="sutton-13x13"))
    _, test = family.make_tasks(Variation(), (), 3, 1, 2, seed=0)
    return IntraOptionQLearning(params).run(
        LearnerContext(
            family, _runs(test, range(2)), family.reference_options(None), episodes, 1000
        )
    )


def test_by_default_the_numbers_are_those_before_bump_in_target_existed():
    """Steps per episode of four hallway-option runs, recorded at commit 05fd221 (before the
    param): the default leaves beta alone in the target, float for float."""
    logs = _hallway_runs(IntraOptionQLearning.Params())
    assert [log.steps.tolist() for log in logs] == [
        [610, 224, 293, 86, 63, 7, 3, 8],
        [29, 3, 24, 125, 3, 143, 3, 3],
        [147, 101, 16, 11, 156, 7, 14, 20],
        [19, 23, 18, 92, 100, 70, 51, 16],
    ]
    assert [float(log.returns.sum()) for log in logs] == [-1206.0, -245.0, -384.0, -301.0]


def test_bump_in_target_changes_the_numbers_with_options_and_not_with_primitives():
    on = IntraOptionQLearning.Params(bump_in_target=True)
    off = IntraOptionQLearning.Params()
    with_options = [log.steps.tolist() for log in _hallway_runs(on)]
    assert with_options != [log.steps.tolist() for log in _hallway_runs(off)]
    # Primitives' beta is 1: their U is the max whatever the bump, so nothing changes.
    family = FourRooms(Params(layout="sutton-13x13"))
    _, test = family.make_tasks(Variation(), (), 4, 1, 3, seed=0)
    empty = TabularOptionSet.empty(int(family.observation_space.n), 4)
    context = LearnerContext(family, _runs(test, range(2)), empty, 10, 300)
    for a, b in zip(
        IntraOptionQLearning(on).run(context), IntraOptionQLearning(off).run(context), strict=True
    ):
        np.testing.assert_array_equal(a.returns, b.returns)


def test_bump_in_target_keeps_every_existing_spec_hash():
    """Left out of the canonical form at its default (``added_later``), kept when set."""
    assert to_plain(IntraOptionQLearning.Params()) == to_plain(SMDPQLearning.Params())
    assert to_plain(IntraOptionQLearning.Params(bump_in_target=True))["bump_in_target"] is True


def test_an_option_that_may_start_only_at_the_goal_is_never_chosen():
    """Its Q is learned (it is consistent with some steps) but it is never started: the runs are
    exactly primitives-only runs, since the option's updates never touch the primitives' Q."""
    model = grid_model(FOUR_ROOMS_11, (1, 1), (11, 11), slip=0.1)
    S, goal = model.num_states, int(np.flatnonzero(model.terminal)[0])
    rng = np.random.default_rng(5)
    mu, beta = rng.dirichlet(np.ones(4), size=(2, S)), rng.random((2, S)) * 0.3
    initiation = np.zeros((2, S), dtype=bool)
    initiation[:, goal] = True
    learner = IntraOptionQLearning(IntraOptionQLearning.Params(epsilon=0.2))
    runs = _runs(toy_tasks(model), range(3))
    masked = learner.run(
        LearnerContext(ToyFamily(), runs, TabularOptionSet(mu, beta, (), initiation), 10, 300)
    )
    plain = learner.run(LearnerContext(ToyFamily(), runs, TabularOptionSet.empty(S, 4), 10, 300))
    free = learner.run(LearnerContext(ToyFamily(), runs, TabularOptionSet(mu, beta), 10, 300))
    for a, b in zip(masked, plain, strict=True):
        np.testing.assert_array_equal(a.steps, b.steps)
    assert any(not np.array_equal(a.steps, b.steps) for a, b in zip(masked, free, strict=True))


def test_hallway_options_learn_on_the_sutton_map():
    """With the hallway options the agent reaches the goal, and learns to do it faster."""
    family = FourRooms(Params(layout="sutton-13x13"))
    _, test = family.make_tasks(Variation(), (), 3, 1, 2, seed=0)
    logs = IntraOptionQLearning(IntraOptionQLearning.Params()).run(
        LearnerContext(family, _runs(test, range(2)), family.reference_options(None), 60, 1000)
    )
    for log in logs:
        assert log.steps[-20:].mean() < log.steps[:5].mean()
        assert (log.steps[-20:] < 1000).all()
