"""Tests of the SMDP Q-learning test-time learner (opt_suite.learners.smdp_q and its engines)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from tabular_toys import FOUR_ROOMS_11, ToyFamily, corridor, grid_model, toy_tasks

from opt_suite.families.base import TabularModel
from opt_suite.families.tabular import fourrooms
from opt_suite.learners.base import LearnerContext, LearnerRun
from opt_suite.learners.smdp_batch import HANDOFF_RUNS, run_batch
from opt_suite.learners.smdp_q import SMDPQLearning
from opt_suite.learners.smdp_scalar import ScalarOptions, ScalarRun, ScalarTables
from opt_suite.learners.smdp_tables import BLOCK_STEPS, Hyper, OptionTables, TaskTables
from opt_suite.methods.base import TabularOptionSet
from opt_suite.testing import LearnerContract

UP, RIGHT, DOWN, LEFT = range(4)
ROOM = ("#######", "#.....#", "#.....#", "#.....#", "#######")


def learner(**params) -> SMDPQLearning:
    return SMDPQLearning(SMDPQLearning.Params(**params))


def runs(tasks, seeds) -> list[LearnerRun]:
    return [LearnerRun(t, np.random.SeedSequence(s)) for t in tasks for s in seeds]


def random_options(rng: np.random.Generator, m: int, S: int, A: int, beta_scale=0.3):
    """m options with random (some deterministic, some stochastic) policies and small betas."""
    mu = rng.dirichlet(np.ones(A), size=(m, S))
    mu[: m // 2] = np.eye(A)[mu[: m // 2].argmax(-1)]
    return TabularOptionSet(mu, rng.random((m, S)) * beta_scale)


def reference_smdp_q(model: TabularModel, options, p, episodes, max_steps, seed):
    """SMDP Q-learning written plainly from the equations, reading the learner's uniform layout."""
    S, A, _ = model.next_state.shape
    mu = np.concatenate([np.broadcast_to(np.eye(A)[:, None], (A, S, A)), options.mu])
    beta = np.concatenate([np.ones((A, S)), options.beta])
    n_opts = len(mu)
    q = np.full((S, n_opts), p.q_init)
    rng = np.random.default_rng(seed)

    def uniforms():
        while True:
            yield from rng.random((BLOCK_STEPS, 5))

    u_iter = uniforms()
    returns, steps = [], []
    for _ in range(episodes):
        s, o, ret, t = model.start, None, 0.0, 0
        while True:
            u = next(u_iter)
            if o is None:  # epsilon-greedy, ties broken uniformly by u[1]
                if u[0] < p.epsilon:
                    o = min(int(u[1] * n_opts), n_opts - 1)
                else:
                    best = np.flatnonzero(q[s] == q[s].max())
                    o = best[min(int(u[1] * len(best)), len(best) - 1)]
                s0, k, big_r, disc = s, 0, 0.0, 1.0
            a = min(int(np.searchsorted(np.cumsum(mu[o, s]), u[2], side="right")), A - 1)
            j = int(np.searchsorted(np.cumsum(model.prob[s, a]), u[3], side="right"))
            s2, r = model.next_state[s, a, j], model.reward[s, a, j]
            k, t, ret = k + 1, t + 1, ret + r
            big_r += disc * r
            disc *= p.gamma
            done, cut = model.terminal[s2], t >= max_steps
            if done or cut or u[4] < beta[o, s2] + p.termination_bump * k:
                # Q(s, o) <- Q(s, o) + alpha [R + gamma^k max Q(s', .) - Q(s, o)]
                target = big_r if done else big_r + disc * q[s2].max()
                q[s0, o] = q[s0, o] + p.alpha * (target - q[s0, o])
                o = None
            s = s2
            if done or cut:
                break
        returns.append(ret)
        steps.append(t)
    return np.array(returns), np.array(steps)


@pytest.mark.parametrize("engine", ["scalar", "batch"])
def test_matches_reference_implementation(engine):
    model = grid_model(ROOM, start=(3, 1), goal=(1, 5), slip=0.2)
    options = random_options(np.random.default_rng(0), 3, model.num_states, 4)
    p = SMDPQLearning.Params(alpha=0.3, gamma=0.95, epsilon=0.2, q_init=2.0)
    if engine == "scalar":  # a single run goes to the scalar engine
        [log] = SMDPQLearning(p).run(
            LearnerContext(ToyFamily(), runs(toy_tasks(model), [7]), options, 40, 60)
        )
        returns, steps = log.returns, log.steps
    else:
        hyper = Hyper(p.alpha, p.gamma, p.epsilon, p.termination_bump, p.q_init, 60)
        tables = OptionTables.build(options, model.num_states, 4)
        rng = np.random.default_rng(np.random.SeedSequence(7))
        [returns], [steps] = run_batch(TaskTables.stack([model]), [0], tables, hyper, [rng], 40, 1)
    ref_returns, ref_steps = reference_smdp_q(model, options, p, 40, 60, np.random.SeedSequence(7))
    np.testing.assert_array_equal(steps, ref_steps)
    np.testing.assert_array_equal(returns, ref_returns)


def test_batch_and_scalar_engines_agree_exactly():
    rng = np.random.default_rng(1)
    models = [grid_model(FOUR_ROOMS_11, (1, 1), goal, slip=0.1) for goal in [(11, 11), (3, 9)]]
    S = models[0].num_states
    tasks = TaskTables.stack(models)
    options = OptionTables.build(random_options(rng, 4, S, 4, beta_scale=0.05), S, 4)
    hyper = Hyper(0.2, 0.99, 0.1, 0.05, 0.5, 200)  # q_init != 0: goal rows must not bootstrap

    def go(handoff):
        gens = [np.random.default_rng(100 + i) for i in range(6)]
        return run_batch(tasks, [0, 1, 0, 1, 1, 0], options, hyper, gens, 15, handoff=handoff)

    batch_returns, batch_steps = go(1)  # numpy engine only
    scalar_returns, scalar_steps = go(10**9)  # scalar engine only
    mixed_returns, mixed_steps = go(4)  # numpy, then scalar once fewer than 4 runs remain
    assert batch_steps.sum() > 6 * 15 * 5
    for steps, returns in ((scalar_steps, scalar_returns), (mixed_steps, mixed_returns)):
        np.testing.assert_array_equal(batch_steps, steps)
        np.testing.assert_array_equal(batch_returns, returns)


def test_batch_invariance_through_the_learner():
    # One run alone (scalar engine) equals the same run inside a large batch of other tasks and
    # seeds (batch engine, then hand-off), bit for bit.
    rng = np.random.default_rng(2)
    goals = [(11, 11), (3, 9), (9, 3), (1, 5)]
    models = [grid_model(FOUR_ROOMS_11, (5, 2), g, slip=0.1) for g in goals]
    tasks = toy_tasks(*models)
    options = random_options(rng, 2, models[0].num_states, 4)
    ln = learner(alpha=0.2, epsilon=0.1)
    batch = runs(tasks, range(HANDOFF_RUNS // len(tasks) + 3))
    assert len(batch) > HANDOFF_RUNS
    logs = ln.run(LearnerContext(ToyFamily(), batch, options, 12, 300))
    for i in (0, len(batch) // 2, len(batch) - 1):
        [alone] = ln.run(LearnerContext(ToyFamily(), [batch[i]], options, 12, 300))
        np.testing.assert_array_equal(alone.steps, logs[i].steps)
        np.testing.assert_array_equal(alone.returns, logs[i].returns)


def test_seeded_determinism():
    model = grid_model(ROOM, start=(3, 1), goal=(1, 5), slip=0.1)
    options = random_options(np.random.default_rng(3), 2, model.num_states, 4)
    ln = learner()
    first = ln.run(LearnerContext(ToyFamily(), runs(toy_tasks(model), [0, 1]), options, 20, 100))
    again = ln.run(LearnerContext(ToyFamily(), runs(toy_tasks(model), [0, 1]), options, 20, 100))
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a.returns, b.returns)
    assert not np.array_equal(first[0].steps, first[1].steps)  # different seeds differ


def test_plain_q_learning_learns_the_shortest_path():
    # No options: SMDP Q-learning is Q-learning. Optimistic Q (0 > any return) explores, and a
    # greedy learner ends on the shortest path: 4 right + 2 up = 6 steps.
    model = grid_model(ROOM, start=(3, 1), goal=(1, 5))
    [log] = learner(alpha=0.5, epsilon=0.0).run(
        LearnerContext(
            ToyFamily(),
            runs(toy_tasks(model), [0]),
            TabularOptionSet.empty(model.num_states, 4),
            60,
            200,
        )
    )
    assert log.steps[-10:].tolist() == [6] * 10
    assert log.returns[-1] == -5 + 10
    assert log.steps[0] > 6


def test_optimal_option_makes_the_first_episode_fast():
    # A corridor of 30 cells and one option that always walks right, terminating only at the goal.
    model = corridor(30)
    S = model.num_states
    mu = np.zeros((1, S, 4))
    mu[0, :, RIGHT] = 1.0
    beta = model.terminal[None].astype(float)
    with_option = TabularOptionSet(mu, beta)
    without = TabularOptionSet.empty(S, 4)
    ln = learner(termination_bump=0.0)
    seeds = range(20)
    fast = [
        g.steps[0]
        for g in ln.run(
            LearnerContext(ToyFamily(), runs(toy_tasks(model), seeds), with_option, 1, 5000)
        )
    ]
    slow = [
        g.steps[0]
        for g in ln.run(
            LearnerContext(ToyFamily(), runs(toy_tasks(model), seeds), without, 1, 5000)
        )
    ]
    assert np.median(fast) < 0.25 * np.median(slow)
    assert min(fast) == 29  # chosen at the start, it walks straight to the goal


def chain_with_shortcut(n: int) -> TabularModel:
    """States 0..n-1 on a line (action 0: one step right, -1) and action 1: to the goal n (0)."""
    S = n + 1
    next_state = np.zeros((S, 2, 1), dtype=np.int32)
    next_state[:, 0, 0] = np.minimum(np.arange(S) + 1, n - 1)
    next_state[:, 1, 0] = n
    reward = np.zeros((S, 2, 1))
    reward[:, 0, 0] = -1.0
    terminal = np.zeros(S, dtype=bool)
    terminal[n] = True
    return TabularModel(next_state, np.ones((S, 2, 1)), reward, terminal, start=0)


@pytest.mark.parametrize("bump", [0.05, 0.1, 0.3, 0.5])
def test_termination_bump_caps_option_length(bump):
    # The option walks right with beta = 0, so it ends only through the bump: after k steps with
    # probability bump * k, surely at k = 1 / bump (20 for the paper's 0.05). Q makes it the greedy
    # choice at state 0 only and the shortcut the greedy choice elsewhere (alpha ~ 0 keeps it so),
    # so every episode takes (option's length L) + 1 steps.
    n, episodes = 60, 3000
    model = chain_with_shortcut(n)
    S = model.num_states
    mu = np.zeros((1, S, 2))
    mu[0, :, 0] = 1.0
    options = OptionTables.build(TabularOptionSet(mu, np.zeros((1, S))), S, 2)
    q = np.zeros((S, 3))
    q[0, 2] = 100.0  # the option at the start
    q[1:, 1] = 100.0  # the shortcut elsewhere
    tables = ScalarTables.build(TaskTables.stack([model]), 0, ScalarOptions.build(options))
    run = ScalarRun(tables, Hyper(1e-12, 0.99, 0.0, bump, 0.0, 500), np.random.default_rng(0), q=q)
    run.run_episodes(episodes)
    lengths = np.array(run.steps) - 1
    cap = math.ceil(1 / bump - 1e-9)  # the first k with bump * k >= 1
    assert lengths.min() >= 1 and lengths.max() <= cap
    # E[L] = sum_k P(L > k), P(L > k) = prod_{j <= k} (1 - bump j).
    survival = np.cumprod(np.clip(1 - bump * np.arange(1, cap + 1), 0, 1))
    expected = 1 + survival.sum()
    assert lengths.mean() == pytest.approx(expected, abs=4 * lengths.std() / np.sqrt(episodes))


def test_without_bump_an_option_that_never_terminates_runs_to_the_cut():
    model = chain_with_shortcut(10)
    S = model.num_states
    mu = np.zeros((1, S, 2))
    mu[0, :, 0] = 1.0
    forever = TabularOptionSet(mu, np.zeros((1, S)))
    ln = learner(termination_bump=0.0, epsilon=1.0)  # uniformly random choices
    [log] = ln.run(LearnerContext(ToyFamily(), runs(toy_tasks(model), [0]), forever, 200, 300))
    assert (log.steps == 300).any()  # picked before the shortcut: stuck until the cut
    [log] = learner(epsilon=1.0).run(
        LearnerContext(ToyFamily(), runs(toy_tasks(model), [0]), forever, 200, 300)
    )
    assert (log.steps < 300).all()  # with the bump every option ends within 20 steps


def test_returns_and_steps_follow_the_model_rewards():
    # -1 per step, +10 instead on the step into the goal: return = -(steps - 1) + 10 when the goal
    # is reached, -steps when the episode is cut.
    model = grid_model(FOUR_ROOMS_11, (1, 1), (5, 4), slip=0.1)
    options = random_options(np.random.default_rng(4), 3, model.num_states, 4)
    logs = learner().run(
        LearnerContext(ToyFamily(), runs(toy_tasks(model), range(3)), options, 30, 80)
    )
    for log in logs:
        assert log.returns.shape == log.steps.shape == (30,)
        assert ((log.steps >= 1) & (log.steps <= 80)).all()
        reached = log.returns == -(log.steps - 1) + 10.0
        cut = (log.returns == -log.steps) & (log.steps == 80)
        assert (reached | cut).all()
        assert reached.any() and (log.steps < 80).any()


def test_learning_improves_on_sutton_four_rooms():
    family = fourrooms.FourRooms(fourrooms.Params(layout="sutton-13x13"))
    _, test_tasks = family.make_tasks(fourrooms.Variation(), (), 6, 2, 4, seed=0)
    S = family.tabular_model(test_tasks[0]).num_states
    logs = learner(alpha=0.5, epsilon=0.1).run(
        LearnerContext(family, runs(test_tasks, range(2)), TabularOptionSet.empty(S, 4), 150, 1000)
    )
    steps = np.array([log.steps for log in logs])
    assert steps[:, -20:].mean() < 0.5 * steps[:, :20].mean()


def test_bad_inputs_are_named():
    model = corridor(4)
    ln = learner()
    with pytest.raises(ValueError, match=r"options: expected mu of shape \[m, 4, 4\]"):
        ln.run(
            LearnerContext(
                ToyFamily(), runs(toy_tasks(model), [0]), TabularOptionSet.empty(5, 4), 1, 10
            )
        )
    with pytest.raises(ValueError, match="share"):
        ln.run(
            LearnerContext(
                ToyFamily(),
                runs(toy_tasks(model, corridor(5)), [0]),
                TabularOptionSet.empty(4, 4),
                1,
                10,
            )
        )

    class NoModel(ToyFamily):
        def tabular_model(self, task):
            return None

    with pytest.raises(ValueError, match="needs a tabular model"):
        ln.run(
            LearnerContext(
                NoModel(), runs(toy_tasks(model), [0]), TabularOptionSet.empty(4, 4), 1, 10
            )
        )
    assert ln.run(LearnerContext(ToyFamily(), [], TabularOptionSet.empty(4, 4), 1, 10)) == []
    with pytest.raises(ValueError, match="episodes >= 1"):
        ln.run(
            LearnerContext(
                ToyFamily(), runs(toy_tasks(model), [0]), TabularOptionSet.empty(4, 4), 0, 10
            )
        )


def test_params_are_frozen_and_documented():
    p = SMDPQLearning.Params()
    assert p.termination_bump == 0.05
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.alpha = 0.5  # type: ignore[misc]
    assert all(f.metadata.get("doc") for f in dataclasses.fields(p))


class TestSMDPQLearningContract(LearnerContract):
    learner_class = SMDPQLearning
    params = SMDPQLearning.Params()


# Initiation sets -------------------------------------------------------------------------------


def _with_initiation(options: TabularOptionSet, initiation: np.ndarray) -> TabularOptionSet:
    return TabularOptionSet(options.mu, options.beta, options.names, initiation)


@pytest.mark.parametrize("episodes_runs", [(12, 1), (12, HANDOFF_RUNS + 4)])
def test_an_option_that_may_start_only_at_the_goal_is_never_chosen(episodes_runs):
    """Available only in the goal state (never a decision state): exactly primitives-only numbers.

    Exploration then draws among the 4 primitives as a primitives-only run does, and greedy
    choices never pick the option (Q = -inf where it may not start), in both engines.
    """
    episodes, count = episodes_runs
    model = grid_model(FOUR_ROOMS_11, (1, 1), (11, 11), slip=0.1)
    goal = int(np.flatnonzero(model.terminal)[0])
    S = model.num_states
    options = random_options(np.random.default_rng(3), 2, S, 4)
    initiation = np.zeros((2, S), dtype=bool)
    initiation[:, goal] = True
    tasks = toy_tasks(model)
    batch = runs(tasks, range(count))
    ln = learner(alpha=0.2, epsilon=0.2)
    masked = ln.run(
        LearnerContext(ToyFamily(), batch, _with_initiation(options, initiation), episodes, 300)
    )
    plain = ln.run(LearnerContext(ToyFamily(), batch, TabularOptionSet.empty(S, 4), episodes, 300))
    unmasked = ln.run(LearnerContext(ToyFamily(), batch, options, episodes, 300))
    for a, b in zip(masked, plain, strict=True):
        np.testing.assert_array_equal(a.steps, b.steps)
        np.testing.assert_array_equal(a.returns, b.returns)
    assert any(not np.array_equal(a.steps, b.steps) for a, b in zip(masked, unmasked, strict=True))


def test_engines_agree_exactly_with_initiation_sets():
    rng = np.random.default_rng(4)
    models = [grid_model(FOUR_ROOMS_11, (1, 1), goal, slip=0.1) for goal in [(11, 11), (3, 9)]]
    S = models[0].num_states
    initiation = rng.random((4, S)) < 0.4
    options = _with_initiation(random_options(rng, 4, S, 4, beta_scale=0.05), initiation)
    tables = OptionTables.build(options, S, 4)
    tasks = TaskTables.stack(models)
    hyper = Hyper(0.2, 0.99, 0.3, 0.05, 0.5, 200)

    def go(handoff):
        gens = [np.random.default_rng(200 + i) for i in range(6)]
        return run_batch(tasks, [0, 1, 0, 1, 1, 0], tables, hyper, gens, 15, handoff=handoff)

    batch, scalar, mixed = go(1), go(10**9), go(4)
    for other in (scalar, mixed):
        np.testing.assert_array_equal(batch[0], other[0])
        np.testing.assert_array_equal(batch[1], other[1])
    # The scalar engine's Q is -inf exactly where an option may not start (never chosen there).
    scalar_options = ScalarOptions.build(tables)
    run = ScalarRun(ScalarTables.build(tasks, 0, scalar_options), hyper, np.random.default_rng(0))
    run.run_episodes(10)
    q = run.q_array()
    assert np.array_equal(np.isinf(q[:, 4:]), ~initiation.T)
    assert np.isfinite(q[:, :4]).all()
