"""Interaction budgets: envs from the context count steps and frames and stop at the budget."""

import dataclasses

import numpy as np
import pytest

from opt_suite.families.tabular.fourrooms import FourRooms, Params, Variation
from opt_suite.methods.base import Discovery, DiscoveryContext, Method
from opt_suite.methods.budget import BudgetExhausted
from opt_suite.options import TabularOptionSet
from opt_suite.runner.cells import DiscoveryJob

FAMILY = FourRooms(Params(layout="sutton-13x13"))
TRAIN, _ = FAMILY.make_tasks(Variation(), (), 2, 2, 0, seed=0)


def _context(budget: int) -> DiscoveryContext:
    return DiscoveryContext(FAMILY, TRAIN, (), budget, np.random.SeedSequence(0))


def test_envs_share_the_budget_and_stop_at_it():
    context = _context(7)
    first, second = (context.make_env(task) for task in TRAIN)
    first.reset(seed=0)
    second.reset(seed=0)
    for _ in range(4):
        first.step(0)
    for _ in range(2):
        *_, truncated, info = second.step(1)
        assert not truncated or info.get("budget_exhausted") is None
    *_, truncated, info = second.step(1)  # the seventh step, over both envs
    assert truncated and info["budget_exhausted"]
    assert context.budget.steps == 7 and context.budget.frames == 7
    with pytest.raises(BudgetExhausted, match="budget of 7 env steps is spent"):
        first.step(0)


class _Walker(Method):
    name = "walker"
    description = "walks right until the budget stops it"

    @classmethod
    def discovery_budget(cls, params):
        from opt_suite.methods.budget import DiscoveryBudget

        return DiscoveryBudget(False, None)

    @dataclasses.dataclass(frozen=True)
    class Params:
        pass

    def discover(self, context):
        env = context.make_env(context.train_tasks[0])
        env.reset(seed=0)
        truncated = False
        while not truncated:
            *_, terminated, truncated, info = env.step(3)
            if terminated:
                env.reset()
        S, A = FAMILY.observation_space.n, FAMILY.action_space.n
        return Discovery(TabularOptionSet.empty(S, A), info={"env_steps": 1})


def test_the_runner_stores_what_the_envs_counted():
    job = DiscoveryJob(
        "c", "discovery of 'walker', seed 0", FourRooms, FAMILY.params, TRAIN,
        np.random.SeedSequence(0), _Walker, _Walker.Params(), (), 25,
    )  # fmt: skip
    result, problem = job.compute()
    assert problem is None
    # the method under-reports; the cell keeps the counted truth next to it
    assert result.info() == {"env_steps": 1, "counted_env_steps": 25, "counted_env_frames": 25}


class _DeclaredWalker(_Walker):
    """Declares 10 env steps, then walks until something stops it."""

    name = "declared-walker"

    @classmethod
    def discovery_budget(cls, params):
        from opt_suite.methods.budget import DiscoveryBudget

        return DiscoveryBudget(False, 10, None)

    def discover(self, context):
        env = context.make_env(context.train_tasks[0])
        env.reset(seed=0)
        for _ in range(1000):  # ignores truncation: steps past its budget
            *_, terminated, _, _ = env.step(3)
            if terminated:
                env.reset()
        raise AssertionError("the budget should have stopped the walk")


def test_the_runner_stops_a_method_at_its_declared_discovery_budget():
    from opt_suite.runner.protocol import discovery_steps

    spec = type("S", (), {"evaluation": type("E", (), {"interaction_budget": 25})()})()
    assert discovery_steps(_DeclaredWalker, None, spec) == 10  # declared, below the spec's
    assert discovery_steps(_Walker, None, spec) == 25  # interacting, nothing declared
    job = DiscoveryJob(
        "c", "discovery of 'declared-walker', seed 0", FourRooms, FAMILY.params, TRAIN,
        np.random.SeedSequence(0), _DeclaredWalker, None, (), discovery_steps(
            _DeclaredWalker, None, spec
        ),
    )  # fmt: skip
    with pytest.raises(BudgetExhausted, match="budget of 10 env steps is spent.*stepped past it"):
        job.compute()
