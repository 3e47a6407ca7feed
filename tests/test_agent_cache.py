"""A worker's PPO agent per graph (``opt_suite.agents.agent_cache``): traced once, fresh per run."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from agent_cache_runs import run_fingerprint

from opt_suite._tf import tensorflow
from opt_suite.agents import acting, agent_cache, ppo
from opt_suite.agents.params import NetworkParams, PPOParams

tf = tensorflow()

from tf_agents.specs import array_spec  # noqa: E402
from tf_agents.trajectories import time_step as ts  # noqa: E402

OBSERVATION = array_spec.BoundedArraySpec((3,), np.float32, -1.0, 1.0)
ACTION = array_spec.BoundedArraySpec((), np.int64, 0, 2)
PARAMS = PPOParams(
    num_envs=2, steps_per_iteration=4, epochs=1, network=NetworkParams(fc_units=(8,))
)


def _agent(seed: int, params: PPOParams = PARAMS, observation=OBSERVATION, action=ACTION):
    return agent_cache.fresh_agent(ts.time_step_spec(observation), action, params, seed)


def _train_once(agent, seed: int, train=None, observation=OBSERVATION) -> None:
    """One PPO update on a made-up batch: moves the weights, Adam's moments and the counters."""
    rng = np.random.default_rng(seed)
    steps = 4
    mid = np.full((2,), ts.StepType.MID, np.int32)

    def step(reward):
        low, high = float(observation.minimum), float(observation.maximum)
        found = rng.uniform(low, high, (2, *observation.shape)).astype(observation.dtype)
        return ts.TimeStep(mid, reward.astype(np.float32), np.ones(2, np.float32), found)

    policy = acting.NumpyCollectPolicy(agent, seed)
    transitions, current = [], step(np.zeros(2))
    for _ in range(steps):
        actions, logits = policy.act(current)
        following = step(rng.normal(size=2))
        transitions.append(acting.Transition(current, actions, logits, following))
        current = following
    (train or agent.train)(acting.experience(transitions))


def _same(found: dict[str, np.ndarray], expected: dict[str, np.ndarray]) -> bool:
    return found.keys() == expected.keys() and all(
        found[k].dtype == expected[k].dtype and found[k].tobytes() == expected[k].tobytes()
        for k in found
    )


IMAGE = array_spec.BoundedArraySpec((5, 5, 2), np.uint8, 0, 255)
SHARED = dataclasses.replace(PARAMS, network=NetworkParams(fc_units=(8,), shared=True))


@pytest.mark.parametrize(
    "observation, params",
    [(OBSERVATION, PARAMS), (IMAGE, PARAMS), (OBSERVATION, SHARED)],
    ids=["mlp", "conv", "shared-trunk"],
)
def test_a_reused_agent_is_reset_to_a_fresh_builds_whole_state(observation, params, monkeypatch):
    agent_cache.clear()
    first = _agent(1, params, observation)
    _train_once(first, 1, observation=observation)  # dirty every variable: weights, Adam, counts
    trained = agent_cache.state(first)
    tf.random.set_seed(2)  # draws under the next run's seed: a kernel it must not continue
    tf.random.uniform([3])
    cleared = []  # set_seed clears TF's caches, compiled update included: the reset must not
    monkeypatch.setattr(tf.random, "set_seed", lambda seed: cleared.append(seed))
    again = _agent(2, params, observation)
    assert cleared == []
    monkeypatch.undo()
    assert again is first  # the same graph: the agent (and its compiled update) is kept
    fresh = agent_cache.state(ppo.build_agent(ts.time_step_spec(observation), ACTION, params, 2))
    assert _same(agent_cache.state(again), fresh)
    # the check can fail: training moved the optimiser's moments and the weights off a build's
    changed = [k for k in fresh if not np.array_equal(trained[k], fresh[k])]
    assert any(k.startswith("optimizer/m/") for k in changed)
    assert any(k.startswith("agent/") for k in changed)
    agent_cache.clear()


def test_another_shape_observation_kind_or_setting_gets_its_own_agent():
    agent_cache.clear()
    first = _agent(1)
    wider = _agent(1, dataclasses.replace(PARAMS, network=NetworkParams(fc_units=(16,))))
    vector5 = _agent(1, observation=array_spec.BoundedArraySpec((5,), np.float32, -1.0, 1.0))
    index = _agent(1, observation=array_spec.BoundedArraySpec((), np.int64, 0, 9))
    more_actions = _agent(1, action=array_spec.BoundedArraySpec((), np.int64, 0, 4))
    lr = _agent(1, dataclasses.replace(PARAMS, learning_rate=1e-2))
    built = [first, wider, vector5, index, more_actions, lr]
    assert len({id(a) for a in built}) == len(built)
    assert len(agent_cache.agents()) == agent_cache.MAX_AGENTS  # the oldest were dropped
    assert _agent(3, observation=array_spec.BoundedArraySpec((), np.int64, 0, 9)) is index
    agent_cache.clear()


def test_an_agent_with_a_plain_function_mask_is_never_kept():
    agent_cache.clear()

    def mask(observations):  # traced into the graph: not data a kept graph could be given
        return tf.ones(tf.concat([tf.shape(observations)[:-1], [3]], 0), tf.bool)

    spec = ts.time_step_spec(OBSERVATION)
    one = agent_cache.fresh_agent(spec, ACTION, PARAMS, 1, mask)
    two = agent_cache.fresh_agent(spec, ACTION, PARAMS, 1, mask)
    assert one is not two and agent_cache.agents() == []


INDEX = array_spec.BoundedArraySpec((), np.int64, 0, 9)


def _table_mask(seed: int, states: int = 10):
    """A mask over ACTION's 3 choices: choice 0 everywhere, 1 and 2 in a seed's random states."""
    from opt_suite.learners.initiation_mask import ActionMask

    table = np.random.default_rng(seed).random((states, 3)) < 0.5
    table[:, 0] = True
    return ActionMask(lambda flat: table[flat.astype(np.int64)], (), 3, table), table


@pytest.mark.parametrize("params", [PARAMS, SHARED], ids=["mlp", "shared-trunk"])
def test_a_masked_agent_is_kept_reset_and_given_the_next_runs_mask(params):
    from opt_suite.learners import ppo_parts

    agent_cache.clear()
    spec = ts.time_step_spec(INDEX)
    first_mask, _ = _table_mask(1)
    first = agent_cache.fresh_agent(spec, ACTION, params, 1, first_mask)
    train = ppo_parts._compiled_train(first)
    _train_once(first, 1, train, observation=INDEX)
    second_mask, table = _table_mask(2)
    again = agent_cache.fresh_agent(spec, ACTION, params, 2, second_mask)
    assert again is first and ppo_parts._compiled_train(again) is train
    # the kept graph applies the second run's mask, in TensorFlow and in the NumPy policy
    states = np.arange(10)
    np.testing.assert_array_equal(again.actor_net.mask_of(tf.constant(states)).numpy(), table)
    np.testing.assert_array_equal(acting.NumpyCollectPolicy(again, 2)._mask.allowed(states), table)
    # ... and starts from exactly a fresh build's state (weights, Adam, counters): nothing of run 1
    fresh_mask, _ = _table_mask(2)
    built = ppo.build_agent(spec, ACTION, params, 2, fresh_mask)
    assert _same(agent_cache.state(again), agent_cache.state(built))
    _train_once(again, 2, train, observation=INDEX)
    assert train.experimental_get_tracing_count() == 1  # two masked runs, one trace
    agent_cache.clear()


def test_a_mask_of_another_kind_gets_its_own_agent():
    from opt_suite.learners.initiation_mask import ActionMask

    agent_cache.clear()
    spec = ts.time_step_spec(INDEX)
    plain = agent_cache.fresh_agent(spec, ACTION, PARAMS, 1)
    masked = agent_cache.fresh_agent(spec, ACTION, PARAMS, 1, _table_mask(1)[0])
    wider_table = agent_cache.fresh_agent(spec, ACTION, PARAMS, 1, _table_mask(1, states=12)[0])
    function = ActionMask(lambda flat: np.ones((len(flat), 3), bool), (), 3)
    by_function = agent_cache.fresh_agent(spec, ACTION, PARAMS, 1, function)
    built = [plain, masked, wider_table, by_function]
    assert len({id(a) for a in built}) == len(built)
    assert agent_cache.fresh_agent(spec, ACTION, PARAMS, 2, _table_mask(3)[0]) is masked
    assert agent_cache.fresh_agent(spec, ACTION, PARAMS, 2) is plain
    with pytest.raises(ValueError, match="cannot load"):
        _table_mask(1)[0].load(function)
    agent_cache.clear()


def test_the_update_is_traced_once_for_two_runs():
    from opt_suite.learners import ppo_parts

    agent_cache.clear()
    agent = _agent(1)
    train = ppo_parts._compiled_train(agent)
    _train_once(agent, 1, train)
    assert _agent(2) is agent and ppo_parts._compiled_train(agent) is train
    _train_once(agent, 2, train)
    assert train.experimental_get_tracing_count() == 1
    agent_cache.clear()


def test_an_experts_actor_outlives_the_next_run():
    agent_cache.clear()
    agent = _agent(1)
    _train_once(agent, 1)
    actor = agent_cache.detached_actor(agent, PARAMS, 1)
    kept = [w.copy() for w in actor.get_weights()]

    def equal(weights) -> bool:
        return all(np.array_equal(a, b) for a, b in zip(kept, weights, strict=True))

    assert equal(agent.actor_net.get_weights())
    _agent(2)  # resets the cached agent's actor
    assert equal(actor.get_weights())
    assert not equal(agent.actor_net.get_weights())
    agent_cache.clear()


@pytest.mark.slow
def test_runs_in_one_worker_equal_the_same_runs_in_fresh_processes():
    # (observation kind, hidden units, seed): chain, then CartPole with another network (another
    # observation kind and shape: a second agent is built), then chain's agent again, reset; then
    # two runs with options whose initiation sets mask the policy (each seed its own sets): the
    # second reuses the first's masked agent, reset and given its own mask.
    runs = [
        ("chain", 16, 1),
        ("cartpole", 8, 2),
        ("chain", 16, 3),
        ("chain-masked", 16, 4),
        ("chain-masked", 16, 5),
    ]
    here = [run_fingerprint(*run) for run in runs]
    assert len(set(here)) == len(here)
    assert len(agent_cache.agents()) == 3  # chain, CartPole, masked chain: each kept once
    tests = Path(__file__).resolve().parent
    path = os.pathsep.join([str(tests.parent), str(tests), os.environ.get("PYTHONPATH", "")])
    fresh = [  # the first run is a first build in any process: the others are the question
        subprocess.Popen(
            [sys.executable, str(tests / "agent_cache_runs.py"), *map(str, run)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": path},
        )
        for run in runs[1:]
    ]
    for run, found, process in zip(runs[1:], here[1:], fresh, strict=True):
        out, err = process.communicate()
        assert process.returncode == 0, err[-2000:]
        assert out.split()[-1] == found, f"run {run} in a worker differs from a fresh process's"
