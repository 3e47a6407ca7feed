"""``offline_options`` (and its control ``bc_option``) without a model: FrozenLake (index
observations), CartPole (vectors).

Tiny budgets (a few epochs, one or two options): these check that Algorithm 1 reads each
observation kind through the ``gymnasium`` family and that what it returns acts on the env's own
observations, not that the options are good.
"""

from __future__ import annotations

import numpy as np
import pytest

from opt_suite._tf import tensorflow

tensorflow()

from opt_suite.families.base import Task  # noqa: E402
from opt_suite.families.gymnasium.family import Gymnasium, Params, TaskParams  # noqa: E402
from opt_suite.methods.base import DiscoveryContext  # noqa: E402
from opt_suite.methods.offline_options import OfflineOptions  # noqa: E402
from opt_suite.methods.offline_options.demos import vector_demo_batch  # noqa: E402
from opt_suite.methods.offline_options.params import Params as OfflineParams  # noqa: E402
from opt_suite.option_networks.features import StateFeatures, index_features  # noqa: E402
from opt_suite.option_networks.initial import new_option  # noqa: E402
from opt_suite.option_networks.networks import (  # noqa: E402
    keras_vector_option_network,
    option_outputs,
)
from opt_suite.options import TabularOptionSet  # noqa: E402
from opt_suite.options.network import NetworkOptionSet  # noqa: E402
from opt_suite.params import FrozenDict  # noqa: E402
from opt_suite.trajectory import Trajectory  # noqa: E402

TINY = OfflineParams(epochs=3, max_epochs=3, steps_per_epoch=2, max_options=2, delta=0.0)
# FrozenLake 4x4 without slipping: down, down, right, down, right, right reaches the goal (15).
LAKE_PATH = (1, 1, 2, 1, 2, 2)


def rollout(family, actions_of, steps, seed):
    """One trajectory of ``family``'s default task, actions from ``actions_of(obs, t)``."""
    env = family.make_env(TaskParams(kwargs=FrozenDict()))
    obs, _ = env.reset(seed=seed)
    observations, actions, rewards = [obs], [], []
    for t in range(steps):
        action = actions_of(obs, t)
        obs, reward, terminated, truncated, _ = env.step(action)
        observations.append(obs)
        actions.append(action)
        rewards.append(reward)
        if terminated or truncated:
            break
    env.close()
    return Trajectory(
        f"{family.instance_name}/train/0",
        np.asarray(observations),
        np.asarray(actions, np.int64),
        np.asarray(rewards, np.float64),
    )


def discover(family, demos, params=TINY):
    task = Task(f"{family.instance_name}/train/0", "train", 0, family.default_task())
    context = DiscoveryContext(family, [task], demos, 0, np.random.SeedSequence(11))
    return OfflineOptions(params).discover(context)


@pytest.fixture(scope="module")
def lake():
    return Gymnasium(Params(id="FrozenLake-v1", kwargs=FrozenDict(is_slippery=False)))


@pytest.fixture(scope="module")
def pole():
    return Gymnasium(Params(id="CartPole-v1"))


@pytest.fixture(scope="module")
def pole_demos(pole):
    # Push towards the side the pole falls to: a few dozen steps upright.
    return [rollout(pole, lambda obs, t: int(obs[2] + obs[3] > 0), 30, seed) for seed in (0, 1)]


def test_frozenlake_options_are_tables_over_every_index(lake):
    demo = rollout(lake, lambda obs, t: LAKE_PATH[t], len(LAKE_PATH), 0)
    assert demo.observations[-1] == 15 and demo.rewards[-1] == 1.0  # the demonstration solves
    found = discover(lake, [demo, demo])
    assert isinstance(found.options, TabularOptionSet)
    assert found.options.mu.shape == (2, 16, 4) and found.options.beta.shape == (2, 16)
    np.testing.assert_allclose(found.options.mu.sum(-1), 1.0, rtol=1e-6)
    assert found.info["demonstrated_states"] == 7  # 0, 4, 8, 9, 13, 14, 15
    assert np.all(np.isfinite(found.curves["jhat"]))
    # π over every index, saved beside the options (opt-suite diagnose reads it)
    assert "policy.npz" in found.files


def test_index_features_without_a_model():
    """The chain's inputs, over the Discrete space's n (no training: a trace costs ~15 s)."""
    onehot, coords = index_features(16, "onehot"), index_features(16, "coords")
    assert onehot.use_index and onehot.coords is None and onehot.num_states == 16
    assert not coords.use_index and coords.coords.shape == (16, 1)
    assert coords.coords[0, 0] == -1.0 and coords.coords[-1, 0] == 1.0
    with pytest.raises(ValueError, match="expected 'onehot', 'coords' or 'both'"):
        index_features(16, "frames")


def test_cartpole_options_are_networks_on_the_vectors(pole, pole_demos):
    found = discover(pole, pole_demos)
    options = found.options
    assert isinstance(options, NetworkOptionSet) and options.observation_shape == (4,)
    assert len(options) == found.info["options_kept"] >= 1
    assert found.info["demonstrated_observations"] == sum(len(h) + 1 for h in pole_demos)
    mu, beta = options.probabilities(pole_demos[0].observations)
    assert mu.shape == (len(pole_demos[0]) + 1, len(options), 2)
    np.testing.assert_allclose(mu.sum(-1), 1.0, rtol=1e-5)
    assert np.all((beta > 0) & (beta < 1))


def test_the_keras_vector_option_is_the_trained_mlp(pole_demos):
    batch, vectors = vector_demo_batch(pole_demos, 2)
    features = StateFeatures(len(vectors), use_index=False, coords=vectors)
    weights = new_option(features, 2, (32, 32), np.random.SeedSequence(3), 0)
    log_mu, beta = option_outputs(weights, None, vectors)
    keras_mu, keras_beta = keras_vector_option_network(weights)(vectors)
    np.testing.assert_allclose(np.asarray(keras_mu), np.exp(log_mu.numpy()), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(keras_beta)[:, 0], beta.numpy(), rtol=1e-5, atol=1e-6)


def test_a_bad_vector_demonstration_is_named(pole_demos):
    bad = Trajectory("t/0", np.full((3, 4), np.nan), np.zeros(2, np.int64), np.zeros(2))
    with pytest.raises(ValueError, match=r"demonstration 1 \(t/0\): expected finite real vectors"):
        vector_demo_batch([pole_demos[0], bad], 2)


def test_random_options_are_offline_options_initial_networks_without_a_model(
    lake, pole, pole_demos
):
    """The "options before training" control on indices and vectors: line 6's draws, untrained."""
    from baselines.random_options import RandomOptions, RandomOptionsParams

    seed = np.random.SeedSequence(11)
    task = Task(f"{lake.instance_name}/train/0", "train", 0, lake.default_task())
    lake_set = (
        RandomOptions(RandomOptionsParams(count=2))
        .discover(DiscoveryContext(lake, [task], [], 0, seed))
        .options
    )
    assert isinstance(lake_set, TabularOptionSet) and lake_set.mu.shape == (2, 16, 4)
    first = new_option(index_features(16, "coords"), 4, (32, 32), seed, 0)
    log_mu, _ = option_outputs(
        first, np.arange(16, dtype=np.int32), index_features(16, "coords").coords
    )
    np.testing.assert_allclose(lake_set.mu[0], np.exp(log_mu.numpy()), rtol=1e-5)
    pole_set = (
        RandomOptions(RandomOptionsParams(count=2))
        .discover(DiscoveryContext(pole, [task], [], 0, seed))
        .options
    )
    vectors = pole_demos[0].observations.astype(np.float32)
    shape_only = StateFeatures(0, use_index=False, coords=np.zeros((0, 4), np.float32))
    second = new_option(shape_only, 2, (32, 32), seed, 1)
    log_mu, _ = option_outputs(second, None, vectors)
    mu, _ = pole_set.probabilities(vectors)
    np.testing.assert_allclose(mu[:, 1], np.exp(log_mu.numpy()), rtol=1e-5, atol=1e-6)


def test_bc_option_clones_without_a_model(lake, pole, pole_demos):
    """Issue 25's control where offline_options runs: a table over FrozenLake's indices, an MLP
    on CartPole's vectors, each preferring the demonstrated action and terminating as declared."""
    from opt_suite.methods.offline_options.control import BCOption, BCOptionParams

    bc = OfflineParams(epochs=4, max_epochs=4, steps_per_epoch=5, learning_rate=0.03)
    demo = rollout(lake, lambda obs, t: LAKE_PATH[t], len(LAKE_PATH), 0)
    for termination, value in (("never", 0.0), ("every_step", 1.0)):
        found = discover_with(BCOption(BCOptionParams(termination, bc)), lake, [demo])
        options = found.options
        assert isinstance(options, TabularOptionSet) and options.mu.shape == (1, 16, 4)
        states = demo.observations[:-1]
        # 4 actions: chance 0.25 (the default input, one coordinate per index, after 20 steps)
        assert np.mean(np.argmax(options.mu[0, states], axis=1) == demo.actions) > 0.5
        assert np.all(options.beta == value)
        found = discover_with(BCOption(BCOptionParams(termination, bc)), pole, pole_demos)
        assert isinstance(found.options, NetworkOptionSet)
        assert found.info["likelihood"] > found.info["likelihood_initial"]
        vectors = np.concatenate([h.observations[:-1] for h in pole_demos])
        actions = np.concatenate([h.actions for h in pole_demos])
        mu, beta = found.options.probabilities(vectors)
        assert mu.shape == (len(vectors), 1, 2)
        # A two-action policy (push towards the fall) imitated better than chance.
        assert np.mean(np.argmax(mu[:, 0], axis=1) == actions) > 0.6
        np.testing.assert_allclose(beta, value, atol=1e-30)


def discover_with(method, family, demos):
    task = Task(f"{family.instance_name}/train/0", "train", 0, family.default_task())
    return method.discover(DiscoveryContext(family, [task], demos, 0, np.random.SeedSequence(11)))
