"""Convolutional options on Breakout frames, trained by Algorithm 1 with the existing Ĵ."""

from __future__ import annotations

import numpy as np
import pytest
from atari_frames import breakout_demonstrations

from opt_suite._tf import tensorflow

tf = tensorflow()

from opt_suite.methods.offline_options.algorithm import learn_options  # noqa: E402
from opt_suite.methods.offline_options.demos import frame_demo_batch  # noqa: E402
from opt_suite.methods.offline_options.params import Params  # noqa: E402
from opt_suite.option_networks.conv import (  # noqa: E402
    FrameFeatures,
    conv_forward,
    keras_option_network,
)
from opt_suite.option_networks.initial import new_option  # noqa: E402
from opt_suite.option_networks.networks import option_outputs  # noqa: E402

A = 4  # Breakout's minimal action set


@pytest.fixture(scope="module")
def demos():
    return breakout_demonstrations(3, max_steps=12)


@pytest.fixture(scope="module")
def learned(demos):
    batch, frames = frame_demo_batch(demos, A)
    params = Params(
        lambda2=5000.0, epochs=3, max_epochs=3, steps_per_epoch=2, max_options=2,
        learning_rate=1e-3, features="frames",
    )  # fmt: skip
    features = FrameFeatures.of(frames)
    return batch, features, learn_options(batch, features, A, params, np.random.SeedSequence(3))


def test_every_frame_is_numbered_once_and_held_once(demos):
    batch, frames = frame_demo_batch(demos, A)
    assert frames.dtype == np.uint8 and frames.shape[1:] == (84, 84, 2)
    assert len(frames) == sum(len(h) + 1 for h in demos)
    for b, h in enumerate(demos):
        np.testing.assert_array_equal(frames[batch.positions[b, : len(h) + 1]], h.observations)
        np.testing.assert_array_equal(batch.actions[b, : len(h)], h.actions)
    assert batch.lengths.tolist() == [len(h) for h in demos]
    features = FrameFeatures.of(frames)
    assert features.coords is frames  # no per-option (or per-round) copy of the frames


def test_bad_demonstrations_are_named(demos):
    tabular = type(demos[0])("grid/0", np.arange(4), np.zeros(3, np.int64), np.zeros(3))
    with pytest.raises(ValueError, match=r"demonstration 1 \(grid/0\).*uint8 frames"):
        frame_demo_batch([demos[0], tabular], A)
    with pytest.raises(ValueError, match="action out of range"):
        frame_demo_batch(demos, 1)


def test_the_network_is_two_conv_layers_and_two_heads():
    option = new_option(FrameFeatures.of(None, (84, 84, 2)), A, (), np.random.SeedSequence(0), 0)
    shapes = {k: v.shape for k, v in option.items()}
    assert shapes == {
        "conv1_w": (8, 8, 2, 16), "conv1_b": (16,), "conv2_w": (4, 4, 16, 32), "conv2_b": (32,),
        "mu_w": (9 * 9 * 32, A), "mu_b": (A,), "beta_w": (9 * 9 * 32, 1), "beta_b": (1,),
    }  # fmt: skip


def test_keras_model_computes_the_same_option(demos):
    frames = demos[0].observations
    option = new_option(FrameFeatures.of(frames), A, (), np.random.SeedSequence(1), 0)
    log_mu, beta = option_outputs(option, None, tf.constant(frames))
    model = keras_option_network(option, frames.shape[1:])
    mu_k, beta_k = model(frames.astype(np.float32))
    np.testing.assert_allclose(np.exp(log_mu.numpy()), mu_k.numpy(), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(beta.numpy(), beta_k.numpy()[:, 0], rtol=1e-4, atol=1e-6)
    logits = conv_forward(option, frames)
    assert set(logits) == {"mu", "beta"}


def test_algorithm_1_trains_conv_options_on_frames(learned):
    batch, features, out = learned
    first = out.rounds[0]
    assert first["kept"] and first["jhat"] > first["jhat_initial"]  # training ascends Ĵ
    kept = sum(r["kept"] for r in out.rounds)
    assert len(out.weights) == kept == out.mu.shape[0]
    assert np.all(np.isfinite(out.curves["jhat"]))
    # The returned tables are the kept networks on the demonstrated frames.
    log_mu, beta = option_outputs(out.weights[0], None, tf.constant(features.coords))
    np.testing.assert_allclose(out.mu[0], np.exp(log_mu.numpy()), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(out.beta[0], beta.numpy(), rtol=1e-4, atol=1e-6)


def test_conv_training_is_deterministic(learned):
    batch, features, out = learned
    params = Params(
        lambda2=5000.0, epochs=3, max_epochs=3, steps_per_epoch=2, max_options=2,
        learning_rate=1e-3, features="frames",
    )  # fmt: skip
    again = learn_options(batch, features, A, params, np.random.SeedSequence(3))
    for a, b in zip(out.weights, again.weights, strict=True):
        for key in a:
            np.testing.assert_array_equal(a[key], b[key])


def test_offline_options_on_frames_returns_network_options(demos):
    from atari_frames import BreakoutFamily

    from opt_suite.methods.base import DiscoveryContext
    from opt_suite.methods.offline_options import OfflineOptions
    from opt_suite.options import from_bytes, to_bytes
    from opt_suite.options.network import NetworkOptionSet

    params = Params(
        lambda2=5000.0, lambda1=0.01, epochs=2, max_epochs=2, steps_per_epoch=2, max_options=2,
        learning_rate=1e-3, features="frames",
    )  # fmt: skip
    context = DiscoveryContext(BreakoutFamily(), ["task"], demos, 0, np.random.SeedSequence(5))
    found = OfflineOptions(params).discover(context)
    assert isinstance(found.options, NetworkOptionSet) and len(found.options) >= 1
    assert found.info["demonstrated_frames"] == sum(len(h) + 1 for h in demos)
    assert found.info["frames_bytes"] == found.info["demonstrated_frames"] * 84 * 84 * 2
    loaded = from_bytes(to_bytes(found.options))
    mu, beta = loaded.probabilities(demos[0].observations)
    assert mu.shape == (len(demos[0].observations), len(found.options), A)
    np.testing.assert_allclose(mu.sum(-1), 1.0, rtol=1e-5)
    mu0, beta0 = found.options.probabilities(demos[0].observations)
    np.testing.assert_allclose(mu, mu0, rtol=1e-5)
    np.testing.assert_allclose(beta, beta0, rtol=1e-5)


def test_random_options_on_frames_are_algorithm_1s_initial_options(demos):
    from atari_frames import BreakoutFamily

    from baselines.random_options import OfflineOptionsSettings, RandomOptions, RandomOptionsParams
    from opt_suite.methods.base import DiscoveryContext

    offline = OfflineOptionsSettings(features="frames")
    seed = np.random.SeedSequence(9)
    context = DiscoveryContext(BreakoutFamily(), ["task"], demos, 0, seed)
    options = (
        RandomOptions(RandomOptionsParams(count=2, offline_options=offline))
        .discover(context)
        .options
    )
    assert options.names == ("random-0", "random-1")
    frames = demos[0].observations
    second = new_option(FrameFeatures.of(frames), A, offline.hidden_sizes, seed, 1)
    log_mu, beta = option_outputs(second, None, tf.constant(frames))
    mu, b = options.probabilities(frames)
    np.testing.assert_allclose(mu[:, 1], np.exp(log_mu.numpy()), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(b[:, 1], beta.numpy(), rtol=1e-4, atol=1e-6)
