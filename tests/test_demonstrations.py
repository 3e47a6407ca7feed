"""Tests of the Q-learning experts and their demonstrations (opt_suite.demonstrations)."""

from __future__ import annotations

import numpy as np
import pytest
from tabular_toys import FOUR_ROOMS_11, ToyFamily, corridor, grid_model, toy_tasks

from opt_suite.demonstrations import (
    ExpertError,
    collect_demonstrations,
    load_demonstrations,
    sample_trajectory,
    save_demonstrations,
    train_expert,
)
from opt_suite.demonstrations.tabular import QLearningParams as ExpertSpec
from opt_suite.families.base import Task
from opt_suite.families.tabular import fourrooms
from opt_suite.spec.schema import DemonstrationsSpec
from opt_suite.tabular import optimal_actions, policy_evaluation, reachable_states, value_iteration

RIGHT = 1
ROOM = ("#######", "#.....#", "#.....#", "#.....#", "#######")


def assert_follows_model(traj, model):
    """Every step is a positive-probability outcome of the model with the model's reward."""
    obs, acts = traj.observations, traj.actions
    assert len(obs) == len(acts) + 1 == len(traj.rewards) + 1
    assert obs[0] == model.start and model.terminal[obs[-1]]
    assert not model.terminal[obs[:-1]].any()
    for s, a, r, s2 in zip(obs[:-1], acts, traj.rewards, obs[1:], strict=True):
        outcomes = (model.next_state[s, a] == s2) & (model.prob[s, a] > 0)
        assert outcomes.any() and r in model.reward[s, a][outcomes]


def test_corridor_expert_and_demonstration_by_hand():
    # Deterministic corridor 0 1 2 [3]: the optimal expert walks right; its demonstration is
    # 0 -> 1 -> 2 -> 3 with rewards -1, -1, +10 (the goal's reward replaces the step cost).
    model = corridor(4)
    expert = train_expert(model, ExpertSpec(check_every=5), np.random.default_rng(0), 50, 1e-9)
    assert expert.policy[:3].tolist() == [RIGHT] * 3
    traj = sample_trajectory(model, expert.policy, np.random.default_rng(0), 50, "toy/0")
    assert traj.observations.tolist() == [0, 1, 2, 3]
    assert traj.actions.tolist() == [RIGHT] * 3
    assert traj.rewards.tolist() == [-1.0, -1.0, 10.0]
    # V*(0) = -1 + 0.99 * (-1 + 0.99 * 10) = 7.811, and the expert attains it.
    assert policy_evaluation(model, expert.policy, 0.99)[0] == pytest.approx(7.811)
    assert expert.value_gap == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("start", [(3, 1), (2, 3), (1, 5)])
def test_expert_is_optimal_in_every_reachable_state_without_slip(start):
    # Deterministic moves: Q-learning settles, so the strict test holds — the greedy action in
    # every state the expert can reach is one of value iteration's optimal actions.
    model = grid_model(ROOM, start=start, goal=(3, 5))
    spec = ExpertSpec(alpha=0.5, gamma=0.99, epsilon=0.2, check_every=10)
    expert = train_expert(model, spec, np.random.default_rng(1), 200, tolerance=1e-9)
    _, q_star = value_iteration(model, spec.gamma)
    reach = reachable_states(model, expert.policy, model.start) & ~model.terminal
    assert optimal_actions(q_star, 1e-6)[reach, expert.policy[reach]].all()


@pytest.mark.parametrize("goal", [(11, 11), (3, 9), (9, 2)])
def test_expert_is_optimal_from_the_start_with_slip(goal):
    model = grid_model(FOUR_ROOMS_11, start=(1, 1), goal=goal, slip=0.1)
    spec = ExpertSpec(check_every=50)
    expert = train_expert(model, spec, np.random.default_rng(2), 2000, tolerance=0.2)
    v_star, _ = value_iteration(model, spec.gamma)
    v_pi = policy_evaluation(model, expert.policy, spec.gamma)
    assert v_star[model.start] - v_pi[model.start] <= 0.2
    assert expert.value_gap == pytest.approx(v_star[model.start] - v_pi[model.start])
    assert expert.episodes % 50 == 0 and expert.episodes <= spec.max_episodes


def test_expert_gives_up_with_a_clear_error():
    model = grid_model(FOUR_ROOMS_11, start=(1, 1), goal=(11, 11), slip=0.1)
    spec = ExpertSpec(max_episodes=3, check_every=2)
    with pytest.raises(ExpertError, match=r"toy/7.*max_episodes=3"):
        train_expert(model, spec, np.random.default_rng(0), 50, tolerance=1e-12, name="toy/7")


def test_demonstrations_are_deterministic_in_the_seed():
    models = [grid_model(FOUR_ROOMS_11, (1, 1), g, slip=0.1) for g in [(11, 11), (3, 9)]]
    tasks = toy_tasks(*models)
    spec = DemonstrationsSpec(
        trajectories_per_task=3, source="q_learning", params=ExpertSpec(check_every=50)
    )
    seed = np.random.SeedSequence(11)
    first = collect_demonstrations(ToyFamily(), tasks, spec, seed)
    again = collect_demonstrations(ToyFamily(), tasks, spec, seed)  # same object, reused
    other = collect_demonstrations(ToyFamily(), tasks, spec, np.random.SeedSequence(12))
    alone = collect_demonstrations(ToyFamily(), tasks[:1], spec, np.random.SeedSequence(11))
    assert [t.task_id for t in first] == ["toy/test/0"] * 3 + ["toy/test/1"] * 3
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a.observations, b.observations)
        np.testing.assert_array_equal(a.actions, b.actions)
    for a, b in zip(first[:3], alone, strict=True):  # task 0 does not depend on task 1
        np.testing.assert_array_equal(a.observations, b.observations)
    assert any(
        not np.array_equal(a.observations, b.observations)
        for a, b in zip(first, other, strict=True)
    )
    for traj, model in zip(first, [models[0]] * 3 + [models[1]] * 3, strict=True):
        assert_follows_model(traj, model)


def test_save_and_load_round_trip(tmp_path):
    model = grid_model(ROOM, start=(3, 1), goal=(1, 5), slip=0.2)
    spec = DemonstrationsSpec(
        trajectories_per_task=4, source="q_learning", params=ExpertSpec(check_every=20)
    )
    demos = collect_demonstrations(
        ToyFamily(), toy_tasks(model, model), spec, np.random.SeedSequence(0)
    )
    save_demonstrations(tmp_path / "demos.npz", demos)
    loaded = load_demonstrations(tmp_path / "demos.npz")
    assert len(loaded) == 8
    for a, b in zip(demos, loaded, strict=True):
        assert a.task_id == b.task_id and len(a) == len(b)
        np.testing.assert_array_equal(a.observations, b.observations)
        np.testing.assert_array_equal(a.actions, b.actions)
        np.testing.assert_array_equal(a.rewards, b.rewards)
    with pytest.raises(ValueError, match="no trajectories"):
        save_demonstrations(tmp_path / "empty.npz", [])


def test_demonstration_cap_and_missing_model_are_named():
    model = corridor(6)
    walk_right = np.full(model.num_states, RIGHT)
    with pytest.raises(ExpertError, match=r"toy/3.*max_steps=3"):
        sample_trajectory(model, walk_right, np.random.default_rng(0), 3, "toy/3")

    class NoModel(ToyFamily):
        def tabular_model(self, task):
            return None

    with pytest.raises(ExpertError, match="no tabular model"):
        collect_demonstrations(
            NoModel(), toy_tasks(model), DemonstrationsSpec(), np.random.SeedSequence(0)
        )


def test_sutton_four_rooms_demonstrations():
    family = fourrooms.FourRooms(fourrooms.Params(layout="sutton-13x13"))
    train, _ = family.make_tasks(fourrooms.Variation(), (), 8, 3, 5, seed=0)
    spec = DemonstrationsSpec(trajectories_per_task=2)
    demos = collect_demonstrations(family, train, spec, np.random.SeedSequence(0))
    assert [d.task_id for d in demos] == [t.task_id for t in train for _ in range(2)]
    for traj in demos:
        task: Task = next(t for t in train if t.task_id == traj.task_id)
        assert family.cell_of(int(traj.observations[0])) == tuple(task.params.start)
        assert family.cell_of(int(traj.observations[-1])) == tuple(task.params.goal)
        assert_follows_model(traj, family.tabular_model(task))


def test_sutton_four_rooms_expert_is_near_optimal():
    family = fourrooms.FourRooms(fourrooms.Params(layout="sutton-13x13"))
    train, _ = family.make_tasks(fourrooms.Variation(), (), 8, 3, 5, seed=1)
    spec = ExpertSpec()
    for i, task in enumerate(train):
        model = family.tabular_model(task)
        expert = train_expert(model, spec, np.random.default_rng(i), 2000, tolerance=0.1)
        v_star, _ = value_iteration(model, spec.gamma)
        v_pi = policy_evaluation(model, expert.policy, spec.gamma)
        assert v_star[model.start] - v_pi[model.start] <= 0.1


def test_paper_40x40_expert_with_the_default_spec():
    family = fourrooms.FourRooms(fourrooms.Params())  # paper-40x40, slip 0.1
    [task], _ = family.make_tasks(fourrooms.Variation(), (), 2, 1, 1, seed=3)
    spec = DemonstrationsSpec()
    [traj] = collect_demonstrations(family, [task], spec, np.random.SeedSequence(5))
    model = family.tabular_model(task)
    assert_follows_model(traj, model)
    # Near-optimal: about as long as the shortest path d (-(d - 1) + 10 = V* without slip, gamma 1).
    still = fourrooms.FourRooms(fourrooms.Params(slip=0.0)).tabular_model(task)
    shortest = 11 - value_iteration(still, 1.0)[0][still.start]
    assert shortest <= len(traj) <= 1.5 * shortest + 10
