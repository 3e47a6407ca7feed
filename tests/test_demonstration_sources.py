"""Demonstration sources: optimal by default, Q-learning checked with a relative tolerance, errors
that name the task or file."""

import dataclasses

import numpy as np
import pytest
from tabular_toys import FOUR_ROOMS_11, ToyFamily, grid_model, toy_tasks

from opt_suite.demonstrations import (
    DemonstrationError,
    DemonstrationSource,
    ExpertError,
    collect_demonstrations,
    load_demonstrations,
    save_demonstrations,
    train_expert,
)
from opt_suite.demonstrations.tabular import OptimalExpert, QLearningParams
from opt_suite.spec.schema import DemonstrationsSpec
from opt_suite.tabular import optimal_actions, policy_evaluation, value_iteration


def test_the_default_source_is_the_optimal_policy():
    assert DemonstrationsSpec().source == "optimal"
    models = [grid_model(FOUR_ROOMS_11, (1, 1), g, slip=0.1) for g in [(11, 11), (3, 9)]]
    demos = collect_demonstrations(
        ToyFamily(), toy_tasks(*models), DemonstrationsSpec(trajectories_per_task=2),
        np.random.SeedSequence(0),
    )  # fmt: skip
    assert [d.task_id for d in demos] == ["toy/test/0"] * 2 + ["toy/test/1"] * 2
    for demo, model in zip(demos, [models[0]] * 2 + [models[1]] * 2, strict=True):
        _, q = value_iteration(model, 0.99)
        best = optimal_actions(q, 1e-9)
        states = demo.observations[:-1]
        assert best[states, demo.actions].all()  # every action is optimal where it is taken
        assert model.terminal[demo.observations[-1]]  # and it ends at the goal


def test_q_learning_tolerance_is_relative_to_the_return_scale():
    # Rewards 0 / 1: V*(start) ~ 0.85, so an absolute 0.5 would accept a policy that takes three
    # times the optimal number of steps. The relative default (1% of the scale) does not.
    model = grid_model(FOUR_ROOMS_11, (1, 1), (3, 9), slip=0.1, step_reward=0.0, goal_reward=1.0)
    params = QLearningParams(check_every=50)
    expert = train_expert(model, params, np.random.default_rng(0), 500, name="toy/0")
    v_star, _ = value_iteration(model, params.gamma)
    scale = max(abs(v_star[model.start]), 1.0)
    v_pi = policy_evaluation(model, expert.policy, params.gamma)
    assert v_star[model.start] - v_pi[model.start] <= params.tolerance * scale
    assert expert.value_gap <= 0.01


def test_an_unreachable_goal_is_an_error_naming_the_task():
    walled = ("#######", "#..#..#", "#######")  # the goal (1, 5) is behind a wall
    model = grid_model(walled, (1, 1), (1, 5))
    with pytest.raises(ExpertError, match=r"toy/test/0 did not reach the goal"):
        collect_demonstrations(
            ToyFamily(), toy_tasks(model), DemonstrationsSpec(max_steps=50),
            np.random.SeedSequence(0),
        )  # fmt: skip


def test_a_source_that_skips_a_task_is_an_error():
    class Lazy(DemonstrationSource):
        name = "lazy"
        description = "demonstrates the first task only"

        @dataclasses.dataclass(frozen=True)
        class Params:
            pass

        def collect(self, context):
            first = dataclasses.replace(context, train_tasks=context.train_tasks[:1])
            return OptimalExpert().collect(first)

    models = [grid_model(FOUR_ROOMS_11, (1, 1), g) for g in [(11, 11), (3, 9)]]
    spec = DemonstrationsSpec(source="lazy")
    with pytest.raises(DemonstrationError, match="gave 0 trajectories of toy/test/1"):
        collect_demonstrations(
            ToyFamily(), toy_tasks(*models), spec, np.random.SeedSequence(0), Lazy
        )


def test_a_source_may_keep_fewer_but_not_more_than_asked():
    """Fewer (cut ones dropped, as ppo_expert's min_complete does) is kept; more is an error."""

    class Dropping(DemonstrationSource):
        name = "dropping"
        description = "the optimal expert's demonstrations, one dropped or one repeated"

        @dataclasses.dataclass(frozen=True)
        class Params:
            drop: bool = True
            extra: bool = False

        def collect(self, context):
            demos = list(OptimalExpert().collect(context))
            return demos[: -1 if self.params.drop else None] + demos[: int(self.params.extra)]

    tasks = toy_tasks(grid_model(FOUR_ROOMS_11, (1, 1), (3, 9)))
    spec = DemonstrationsSpec(source="dropping", trajectories_per_task=3)
    seed = np.random.SeedSequence(0)
    kept = collect_demonstrations(ToyFamily(), tasks, spec, seed, Dropping)
    assert len(kept) == 2
    extra = dataclasses.replace(spec, params=Dropping.Params(drop=False, extra=True))
    with pytest.raises(DemonstrationError, match="gave 4 trajectories of toy/test/0; expected 1"):
        collect_demonstrations(ToyFamily(), tasks, extra, seed, Dropping)


def test_a_source_is_given_the_checkpoint_dir_in_its_context(tmp_path):
    seen = []

    class Trained(OptimalExpert):
        uses_checkpoints = True

        def collect(self, context):
            seen.append(context.checkpoint_dir)
            return super().collect(context)

    tasks = toy_tasks(grid_model(FOUR_ROOMS_11, (1, 1), (3, 9)))
    collect_demonstrations(
        ToyFamily(), tasks, DemonstrationsSpec(), np.random.SeedSequence(0), Trained,
        checkpoint_dir=tmp_path,
    )  # fmt: skip
    assert seen == [str(tmp_path)]
    assert not OptimalExpert.uses_checkpoints


def test_missing_and_truncated_demonstration_files_are_clear_errors(tmp_path):
    model = grid_model(FOUR_ROOMS_11, (1, 1), (3, 9))
    demos = collect_demonstrations(
        ToyFamily(), toy_tasks(model), DemonstrationsSpec(), np.random.SeedSequence(0)
    )
    save_demonstrations(tmp_path / "d.npz", demos)
    data = (tmp_path / "d.npz").read_bytes()
    (tmp_path / "cut.npz").write_bytes(data[: len(data) // 2])
    with pytest.raises(DemonstrationError, match="missing.npz: demonstrations file not found"):
        load_demonstrations(tmp_path / "missing.npz")
    with pytest.raises(DemonstrationError, match="cut.npz: not a readable demonstrations file"):
        load_demonstrations(tmp_path / "cut.npz")
    np.savez(tmp_path / "other.npz", lengths=np.array([3]))
    with pytest.raises(DemonstrationError, match="not a demonstrations file"):
        load_demonstrations(tmp_path / "other.npz")
