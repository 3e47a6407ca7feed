"""The segmentation baselines' bucket padding is masked: the objective is the unpadded one.

On feature inputs LOVE and CompILE pad the demonstrations' steps and states to powers of two
(``baselines.skill_networks.demo_tensors``, ``baselines.xla.bucketed``), so that the seeds of a
family share one compiled fit. Padding must change no term of the loss: these tests evaluate each
method's loss on the padded batch and on the batch as the demonstrations are, with the same
weights (and, for CompILE, the same Gumbel noise on the real positions), and compare.
"""

from __future__ import annotations

import numpy as np
import pytest
from skill_toys import segmented_demonstrations

from baselines.xla import bucketed


@pytest.mark.parametrize(
    ("size", "padded"), [(1, 1), (2, 2), (3, 4), (16, 16), (17, 32), (100, 128)]
)
def test_bucketed_is_the_next_power_of_two(size, padded):
    assert bucketed(size) == padded


def test_bucketed_refuses_an_empty_dimension():
    with pytest.raises(ValueError, match="at least one entry"):
        bucketed(0)


def _inputs(method: str, features: str, segments: int = 1):
    from baselines.segmentation import segment_inputs

    context, _ = segmented_demonstrations(4, seed=1)
    return segment_inputs(context, method, features, segments)


def _unpadded(inputs) -> dict:
    """The batch as the demonstrations are: T and U as drawn (demo_tensors before padding)."""
    from opt_suite.objective.jhat import tf

    states, coords = inputs.state_input()
    batch = {
        "states": tf.constant(states, tf.int32),
        "positions": tf.constant(inputs.demos.positions, tf.int32),
        "actions": tf.constant(inputs.demos.actions, tf.int32),
        "lengths": tf.constant(inputs.demos.lengths, tf.int32),
    }
    if coords is not None:
        batch["coords"] = tf.constant(coords)
    return batch


def test_the_padding_really_pads():
    # the toy's demonstrations are neither a power of two long nor over a power of two of states,
    # else the comparisons below would compare a batch with itself
    from baselines.skill_networks import demo_tensors

    inputs = _inputs("love", "coords")
    padded, plain = demo_tensors(inputs), _unpadded(inputs)
    assert padded["positions"].shape[1] > plain["positions"].shape[1]
    assert padded["states"].shape[0] > plain["states"].shape[0]


def test_frames_are_not_padded():
    from baselines.segmentation import segment_inputs
    from baselines.skill_networks import demo_tensors
    from opt_suite.testing import image_method_setting
    from opt_suite.testing.method_checks import context_for

    inputs = segment_inputs(context_for(image_method_setting(), 0, 0), "love", "frames")
    padded, plain = demo_tensors(inputs), _unpadded(inputs)
    assert {k: v.shape for k, v in padded.items()} == {k: v.shape for k, v in plain.items()}


@pytest.mark.parametrize("features", ["coords", "onehot"])
def test_love_loss_is_the_same_on_the_padded_batch(features):
    from baselines.love import LoveParams
    from baselines.love.model import _at_least_two_steps, love_loss
    from baselines.skill_networks import demo_tensors, init_skills
    from opt_suite.objective.jhat import tf
    from opt_suite.option_networks.networks import init_policy

    inputs = _inputs("love", features)
    params = LoveParams(features=features, num_skills=3, hidden_sizes=(8,))
    skill_seed, prior_seed = np.random.SeedSequence(4).spawn(2)
    weights = {
        "skills": init_skills(
            inputs.features, params.hidden_sizes, inputs.num_actions, 3, skill_seed
        ),
        "prior": init_policy(inputs.features, params.hidden_sizes, 3, prior_seed),
    }
    coefficients = {"coefficients": tf.constant([1.0, 0.5, 0.3], tf.float32)}
    padded = love_loss(weights, {**_at_least_two_steps(demo_tensors(inputs)), **coefficients})
    plain = love_loss(weights, {**_at_least_two_steps(_unpadded(inputs)), **coefficients})
    for key in plain:
        np.testing.assert_allclose(float(padded[key]), float(plain[key]), rtol=1e-5, atol=1e-6)


def test_compile_loss_and_segments_are_the_same_on_the_padded_batch():
    from baselines.compile import CompileParams
    from baselines.compile.model import _batch, compile_loss, init_compile, poisson_log_prior
    from baselines.skill_networks import padded
    from opt_suite.objective.jhat import tf

    params = CompileParams(num_segments=3, latent_dim=3, hidden_dim=8, hidden_sizes=(8,))
    inputs = _inputs("compile", params.features, params.num_segments)
    weights = init_compile(inputs, params, np.random.SeedSequence(7))
    n, b, k = params.num_segments, len(inputs.demos.lengths), params.latent_dim
    drawn = inputs.demos.positions.shape[1]
    rng = np.random.default_rng(3)
    noise_b = rng.gumbel(size=(n, b, drawn)).astype(np.float32)
    noise_z = tf.constant(rng.gumbel(size=(n, b, k)).astype(np.float32))

    batch = _batch(inputs, params.prior_rate)
    width = int(batch["positions"].shape[1])
    assert width > drawn  # the toy is padded
    plain_actions = np.full((b, drawn), inputs.num_actions, np.int32)
    steps = np.arange(drawn - 1)[None, :] < inputs.demos.lengths[:, None]
    plain_actions[:, :-1] = np.where(steps, inputs.demos.actions, inputs.num_actions)
    plain = {
        **_unpadded(inputs),
        "actions": tf.constant(plain_actions),
        "log_prior": tf.constant(poisson_log_prior(drawn, params.prior_rate), tf.float32),
    }
    soft_padded, hard_padded = compile_loss(
        weights, batch, tf.constant(padded(noise_b, width, axis=2)), noise_z, params, hard=False
    )
    soft_plain, hard_plain = compile_loss(
        weights, plain, tf.constant(noise_b), noise_z, params, hard=False
    )
    for key in soft_plain:
        np.testing.assert_allclose(
            float(soft_padded[key]), float(soft_plain[key]), rtol=1e-5, atol=1e-6
        )
    np.testing.assert_allclose(
        hard_padded["b"].numpy()[..., :drawn], hard_plain["b"].numpy(), atol=1e-6
    )
    assert not np.any(hard_padded["b"].numpy()[..., drawn:])  # no boundary in the padding
    np.testing.assert_allclose(
        hard_padded["z"].numpy(), hard_plain["z"].numpy(), rtol=1e-5, atol=1e-6
    )
