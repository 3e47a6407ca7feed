"""Chain (Appendix D): the contract, the sampled transition functions and the exact model."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

from opt_suite.families.tabular.chain import Chain, Params, TaskParams, Variation
from opt_suite.testing import FamilyContract

CHAIN = Chain()  # Appendix D: 7 states


class TestChainContract(FamilyContract):
    def family(self):
        return Chain()


class TestChainRandomStartContract(FamilyContract):
    def family(self):
        return Chain(Params(num_states=4, step_reward=0.0, goal_reward=1.0))

    def variation(self):
        return Variation(success_low=0.2, success_high=0.6, start=None)


def test_sampled_probabilities_lie_in_the_range_with_three_decimals():
    tasks = CHAIN.sample_tasks(
        Variation(success_low=0.3, success_high=0.7), 50, np.random.default_rng(0)
    )
    values = np.array([t.success_left + t.success_right for t in tasks])
    assert values.shape == (50, 12)
    assert values.min() >= 0.3 and values.max() <= 0.7
    np.testing.assert_array_equal(values, np.round(values, 3))
    assert values.std() > 0.05  # really drawn, not constant
    assert {t.start for t in tasks} == {0}


def test_random_starts_cover_the_non_terminal_states():
    tasks = CHAIN.sample_tasks(Variation(start=None), 200, np.random.default_rng(1))
    assert {t.start for t in tasks} == set(range(6))


def test_model_is_exactly_the_task_params():
    left, right = (0.9, 0.8, 0.7, 0.6, 0.5, 0.4), (0.1, 0.2, 0.3, 0.4, 0.5, 0.6)
    model = CHAIN.tabular_model(TaskParams(left, right, start=2))
    P = model.dense_transitions()
    assert model.start == 2 and model.terminal.tolist() == [False] * 6 + [True]
    for s in range(6):
        stay_or_left = max(s - 1, 0)
        assert P[s, 0, stay_or_left] == pytest.approx(left[s])
        assert P[s, 0, s + 1] == pytest.approx(1 - left[s])
        assert P[s, 1, s + 1] == pytest.approx(right[s])
        assert P[s, 1, stay_or_left] == pytest.approx(1 - right[s])
    # Left at state 0 with success 0.9: stays at 0 w.p. 0.9, moves right w.p. 0.1.
    assert P[0, 0, 0] == pytest.approx(0.9) and P[0, 0, 1] == pytest.approx(0.1)


def test_rewards_goal_step_pays_goal_reward_instead():
    model = CHAIN.tabular_model(TaskParams((1.0,) * 6, (1.0,) * 6, start=5))
    assert model.reward[5, 1, 0] == 10.0  # right from 5 reaches 6
    assert model.reward[4, 1, 0] == -1.0 and model.reward[5, 0, 0] == -1.0
    env = CHAIN.make_env(TaskParams((1.0,) * 6, (1.0,) * 6, start=5))
    env.reset(seed=0)
    assert env.step(1)[:3] == (6, 10.0, True)


def test_check_task_and_variation_errors():
    assert CHAIN.check_task(TaskParams((0.5,) * 6, (0.5,) * 6)) == []
    assert CHAIN.check_task(TaskParams((0.5,) * 5, (0.5,) * 6)) == [
        ("success_left", "expected 6 probabilities (states 0..5), got 5")
    ]
    assert CHAIN.check_task(TaskParams((0.5,) * 6, (1.5,) * 6))[0][0] == "success_right"
    assert CHAIN.check_task(TaskParams((0.5,) * 6, (0.5,) * 6, start=6)) == [
        ("start", "start must be a non-terminal state in [0, 5] (7 states), got 6")
    ]
    assert Variation(success_low=0.8, success_high=0.7).check()[0][0] == "success_high"
    with pytest.raises(ValueError, match="tasks.vary.start: start must be a non-terminal"):
        CHAIN.sample_tasks(Variation(start=9), 1, np.random.default_rng(0))


def test_instance_name_and_pictures():
    assert CHAIN.instance_name == "chain-7"
    env = CHAIN.make_env(TaskParams((0.5,) * 6, (0.5,) * 6, start=1), render_mode="ansi")
    env.reset(seed=0)
    assert env.render() == ".A....G\n"
    env = CHAIN.make_env(TaskParams((0.5,) * 6, (0.5,) * 6, start=1), render_mode="rgb_array")
    env.reset(seed=0)
    assert env.render().shape == (8, 7 * 8, 3)


def test_gymnasium_make_with_flat_kwargs():
    env = gymnasium.make(
        "opt_suite/Chain-v0", num_states=3, success_left=[1, 1], success_right=[1, 1]
    )
    env.reset(seed=0)
    assert env.step(1)[:3] == (1, -1.0, False) and env.step(1)[:3] == (2, 10.0, True)
    with pytest.raises(ValueError, match="TaskParams.success_left: expected a value <= 1"):
        gymnasium.make("opt_suite/Chain-v0", success_left=(2.0,) * 6, success_right=(1.0,) * 6)
