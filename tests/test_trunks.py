"""Deep pieces fit any observation: trunks sized to small images, [H, W] images and vectors."""

import textwrap

import numpy as np
import pytest
from image_toys import ShapeCorridor
from spec_fakes import where

from opt_suite import registry
from opt_suite.agents.params import NetworkParams, PPOParams, network_fit, ppo_memory
from opt_suite.cli import main
from opt_suite.learners.agent_learner import TFAgentsLearner
from opt_suite.option_networks.trunk import (
    MAX_PARAMETERS,
    fitted_layers,
    network_parameters,
    shrink_problem,
    small_image_layers,
)
from opt_suite.testing import LearnerContract, LearnerSetting

ATARI = [(16, 8, 4), (32, 4, 2)]


# -- the sizing rule (pure) ---------------------------------------------------------------------


def test_shrink_problem_names_each_layer_and_its_sizes():
    # 10 -> (10 - 8) // 4 + 1 = 1 -> (1 - 4) // 2 + 1 = -1: nothing
    assert shrink_problem((10, 10), ATARI) == (
        "layer 1 (8x8 stride 4) shrinks a 10x10 input to 1x1, layer 2 (4x4 stride 2) to nothing"
    )
    assert (
        shrink_problem((7, 9), [(8, 8, 4)])
        == "layer 1 (8x8 stride 4) shrinks a 7x9 input to nothing"
    )
    assert shrink_problem((84, 84), ATARI) is None  # 84 -> 20 -> 9
    assert shrink_problem((20, 20), ATARI) is None and shrink_problem((19, 84), ATARI)


def test_small_images_get_3x3_stride_1_layers_as_many_as_fit():
    assert small_image_layers((10, 10), (16, 32)) == ((16, 3, 1), (32, 3, 1))  # 10 -> 8 -> 6
    assert small_image_layers((7, 7), (16, 32)) == ((16, 3, 1), (32, 3, 1))  # 7 -> 5 -> 3
    assert small_image_layers((4, 10), (16, 32)) == ((16, 3, 1),)  # 4 -> 2 (a second: 0)
    assert small_image_layers((1, 5), (16, 32)) == ()  # no 3x3 fits one row


def test_fitted_layers_keep_atari_replace_defaults_and_reject_configured():
    assert fitted_layers((84, 84, 4), ATARI, default=True) == tuple(ATARI)
    assert fitted_layers((10, 10, 4), ATARI, default=True) == ((16, 3, 1), (32, 3, 1))
    assert fitted_layers((4,), ATARI, default=False) == ()  # vectors: no convolution
    with pytest.raises(ValueError, match="layer 1 \\(8x8 stride 4\\) shrinks a 10x10 input"):
        fitted_layers((10, 10, 4), ATARI, default=False)


def test_network_parameters_by_hand():
    # 10x10x4 -> 3x3x4x16 + 16 = 592 -> 8x8x16; 3x3x16x32 + 32 = 4640 -> 6x6x32 = 1152;
    # dense 1152 x 256 + 256 = 295,168; head 256 x 3 + 3 = 771.
    layers = ((16, 3, 1), (32, 3, 1))
    assert network_parameters((10, 10, 4), layers, (256,), 3) == 592 + 4640 + 295_168 + 771
    assert network_parameters((4,), (), (8,), 2) == 4 * 8 + 8 + 8 * 2 + 2
    assert network_parameters((), (), (8,), 2) == 8 + 8 + 18  # an index: one input


# -- PPO networks ---------------------------------------------------------------------------------


def test_ppo_network_defaults_follow_the_observation():
    network = NetworkParams()
    assert network.conv_layer_params((84, 84, 4)) == ATARI  # Atari's trunk is unchanged
    assert network.conv_layer_params((10, 10, 4)) == [(16, 3, 1), (32, 3, 1)]
    assert network.conv_layer_params((7, 7, 3)) == [(16, 3, 1), (32, 3, 1)]
    assert network.conv_layer_params((6,)) == []
    assert network.fit_problems((10, 10, 4)) == [] and network.fit_problems((1, 5, 1)) == []


def test_configured_convolutions_that_do_not_fit_are_reported_at_their_key():
    network = NetworkParams(
        conv_filters=(16, 32, 64), conv_kernels=(8, 4, 3), conv_strides=(4, 2, 1)
    )
    [(key, message)] = network.fit_problems((10, 10, 4))
    assert key == "conv_kernels"
    assert message == (
        "layer 1 (8x8 stride 4) shrinks a 10x10 input to 1x1, layer 2 (4x4 stride 2) to nothing "
        "('valid' padding, on the family's 10x10x4 observations)"
    )
    family = ShapeCorridor(ShapeCorridor.Params((10, 10, 4)))
    ppo = PPOParams(network=network)
    assert network_fit(ppo, family, "ppo.")[0][0] == "ppo.network.conv_kernels"


def test_too_many_parameters_is_a_fit_problem_at_the_network():
    # 84x84x4 with one 3x3 stride-1 layer of 64: 82 x 82 x 64 = 430,336 features x 512 units
    network = NetworkParams(
        conv_filters=(64,), conv_kernels=(3,), conv_strides=(1,), fc_units=(512,)
    )
    assert network.parameters((84, 84, 4), 6) > MAX_PARAMETERS
    family = ShapeCorridor(ShapeCorridor.Params((84, 84, 4)))
    [(key, message)] = network_fit(PPOParams(network=network), family, "ppo.")
    assert key == "ppo.network"
    assert "parameters on the family's 84x84x4 observations; expected at most 50,000,000" in message


def test_ppo_bounds_on_depth_and_batch():
    deep = NetworkParams(fc_units=(8,) * 9)
    assert deep.check() == [("fc_units", "expected at most 8 layers, got 9")]
    big = PPOParams(num_envs=256, steps_per_iteration=8192)
    [(key, message)] = big.check()
    assert key == "steps_per_iteration" and "2,097,152 steps per update" in message
    assert PPOParams().check() == []


def test_ppo_memory_counts_weights_with_adam_and_the_batch():
    separate = PPOParams(network=NetworkParams(shared=False))
    shape = (10, 10, 4)
    weights = separate.network.parameters(shape, 3) + separate.network.parameters(shape, 1)
    batch = 8 * 128 * 400 * 4
    assert ppo_memory(separate, shape, 3) == 12 * weights + batch
    # A shared trunk is counted once: the two networks less one trunk (a head of 0 outputs).
    shared = PPOParams(network=NetworkParams(shared=True))
    trunk = shared.network.parameters(shape, 0)
    assert ppo_memory(shared, shape, 3) == 12 * (weights - trunk) + batch


@pytest.mark.parametrize(
    "shape, kernels",
    [((10, 10, 4), [3, 3]), ((7, 7, 3), [3, 3]), ((10, 10), [3, 3]), ((1, 5, 1), []), ((4,), [])],
)
def test_ppo_networks_build_on_any_observation(shape, kernels):
    from opt_suite.agents.environment import space_spec
    from opt_suite.agents.ppo import build_networks

    family = ShapeCorridor(ShapeCorridor.Params(shape))
    obs_spec = space_spec(family.observation_space, "observation")
    act_spec = space_spec(family.action_space, "action")
    params = NetworkParams(fc_units=(32,))
    actor, value = build_networks(obs_spec, act_spec, params, seed=0)
    convs = [layer for layer in actor.layers[0].layers if "Conv2D" in type(layer).__name__]
    assert [layer.kernel_size[0] for layer in convs] == kernels
    assert actor.count_params() == params.parameters(shape, 2)
    assert value.count_params() == params.parameters(shape, 1)
    env = family.make_env(family.make_tasks(family.Variation(), (), 2, 1, 1, 0)[0][0])
    obs = np.stack([env.reset(seed=0)[0]] * 3)
    distribution, _ = actor(obs, step_type=np.zeros(3, np.int32), network_state=())
    assert np.all(np.isfinite(distribution.logits_parameter().numpy()))
    assert value(obs, step_type=np.zeros(3, np.int32))[0].shape == (3,)


# -- convolutional options ------------------------------------------------------------------------


@pytest.mark.parametrize("shape, convs", [((10, 10, 4), 2), ((7, 7, 3), 2), ((1, 5, 1), 0)])
def test_conv_options_fit_small_frames_and_their_keras_model_agrees(shape, convs):
    from opt_suite.option_networks.conv import (
        FrameFeatures,
        conv_forward,
        keras_option_network,
    )
    from opt_suite.option_networks.initial import new_option
    from opt_suite.option_networks.networks import option_outputs

    frames = np.random.default_rng(0).integers(0, 256, (5, *shape), dtype=np.uint8)
    features = FrameFeatures.of(frames)
    assert len(features.layers) == convs and all(k == 3 for _, k, _ in features.layers)
    option = new_option(features, 3, (), np.random.SeedSequence(0), 0)
    assert sum(key.startswith("conv") for key in option) == 2 * convs
    logits = conv_forward(option, frames)
    assert logits["mu"].shape == (5, 3) and logits["beta"].shape == (5, 1)
    log_mu, beta = option_outputs(option, np.zeros(5, np.int32), frames)
    mu, beta_keras = keras_option_network(option, shape)(frames.astype(np.float32))
    np.testing.assert_allclose(np.exp(log_mu.numpy()), mu.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(beta.numpy(), beta_keras.numpy()[:, 0], rtol=1e-5, atol=1e-6)


def test_atari_conv_options_keep_their_weight_names():
    from opt_suite.option_networks.conv import CONV_LAYERS, FrameFeatures
    from opt_suite.option_networks.initial import new_option

    features = FrameFeatures.of(None, (84, 84, 2))
    assert features.layers == CONV_LAYERS
    option = new_option(features, 4, (), np.random.SeedSequence(0), 0)
    assert sorted(option) == [
        "beta_b", "beta_w", "conv1_b", "conv1_w", "conv2_b", "conv2_w", "mu_b", "mu_w",
    ]  # fmt: skip


# -- the tf_agents learner on a small image and on vectors (the shipped LearnerContract) ----------

TINY_PPO = PPOParams(
    num_envs=2, steps_per_iteration=4, epochs=1, network=NetworkParams(fc_units=(8,))
)


def shape_setting(shape: tuple[int, ...]) -> LearnerSetting:
    """A test task of the corridor seen as ``shape``; 1 untrained option network on it.

    One: the learner converts each option network for TensorFlow Lite at the start of every run
    (about 2 s each, and the contract learns nine times); what these contracts are about is the
    trunk the agent fits to ``shape``. Two options, each row run by its own, are the PixelGrid
    contract's (tests/test_testing_contracts.py).
    """
    from opt_suite.options.network import NetworkOptionSet, option_network

    family = ShapeCorridor(ShapeCorridor.Params(shape))
    _, test = family.make_tasks(family.Variation(), (), count=2, train=1, test=1, seed=0)
    if len(shape) == 3:  # conv options, as offline_options / random_options draw them on frames
        from opt_suite.option_networks.initial import initial_frame_options

        options = initial_frame_options(family, test[0], 1, np.random.SeedSequence(0))
    else:
        networks = [option_network(shape, 2, 0, hidden_sizes=(8,))]
        options = NetworkOptionSet(networks, 2, shape)
    return LearnerSetting(family, tuple(test), options, NetworkOptionSet.empty(2, shape))


@pytest.mark.slow
class TestTFAgentsOnASmallImage(LearnerContract):
    """PPO over primitives + a conv option on 10x10x4 frames (MinAtar's size): 3x3 trunks."""

    learner_class = TFAgentsLearner
    params = TFAgentsLearner.Params(ppo=TINY_PPO)
    episodes = 2
    max_steps = 8

    def setting(self) -> LearnerSetting:
        return shape_setting((10, 10, 4))


@pytest.mark.slow
class TestTFAgentsOnVectors(LearnerContract):
    """PPO over primitives + a dense option on Box(4,) observations: an MLP trunk."""

    learner_class = TFAgentsLearner
    params = TFAgentsLearner.Params(ppo=TINY_PPO)
    episodes = 2
    max_steps = 8

    def setting(self) -> LearnerSetting:
        return shape_setting((4,))


# -- validate: a small-image family, before anything is paid for ---------------------------------

SMALL_IMAGE_SPEC = textwrap.dedent(
    """\
    name: small-images
    family: {name: shapes, params: {shape: [10, 10, 4]}}
    tasks: {count: 3, train: 2, test: 1, seed: 0}
    demonstrations:
      source: ppo_expert
      params:
        frames: 1000
        ppo: {network: EXPERT}
    methods:
      - {name: conv, method: offline_options, params: {features: frames}}
    evaluation:
      learner: tf_agents
      params:
        ppo: {network: LEARNER}
      episodes: 10
      seeds: 1
    """
)


CONFIGURED = "{conv_filters: [16, 32, 64], conv_kernels: [8, 4, 3], conv_strides: [4, 2, 1]}"


@pytest.fixture()
def with_shapes(monkeypatch):
    real = registry.load

    def load(group, name):
        return (
            ShapeCorridor if (group, name) == (registry.FAMILIES, "shapes") else real(group, name)
        )

    monkeypatch.setattr(registry, "load", load)


def test_validate_names_the_layer_that_does_not_fit_a_small_image(with_shapes, tmp_path, capsys):
    path = tmp_path / "spec.yaml"
    path.write_text(
        SMALL_IMAGE_SPEC.replace("EXPERT", CONFIGURED).replace("LEARNER", "{fc_units: [5000]}")
    )
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    text = path.read_text()
    assert (
        f"{path}:{where(text, '[8, 4, 3]')}: demonstrations.params.ppo.network.conv_kernels: "
        "layer 1 (8x8 stride 4) shrinks a 10x10 input to 1x1, layer 2 (4x4 stride 2) to nothing"
    ) in err
    assert (
        f"{path}:{where(text, '[5000]', '5000')}: evaluation.params.ppo.network.fc_units[0]: out "
        "of range (expected >= 1 and <= 4096, got 5000)"
    ) in err


def test_the_default_networks_validate_on_a_small_image(with_shapes, tmp_path):
    from opt_suite.spec import load_spec

    path = tmp_path / "spec.yaml"
    path.write_text(SMALL_IMAGE_SPEC.replace("EXPERT", "{}").replace("LEARNER", "{}"))
    spec = load_spec(path)
    assert spec.evaluation.params.ppo.network == NetworkParams()


def test_the_work_estimate_counts_the_agents_networks(with_shapes, tmp_path, capsys):
    from opt_suite.runner.estimate import _size

    path = tmp_path / "spec.yaml"
    path.write_text(
        SMALL_IMAGE_SPEC.replace("EXPERT", "{}").replace("LEARNER", "{fc_units: [4096, 4096]}")
    )
    assert main(["validate", str(path)]) == 0
    learner = PPOParams(network=NetworkParams(fc_units=(4096, 4096)))
    expected = ppo_memory(learner, (10, 10, 4), 2)  # 2 x 21.5 M weights x 3 x 4 B + the batch
    assert expected > ppo_memory(PPOParams(), (10, 10, 4), 2)  # the expert's is smaller
    assert (
        f"largest array {_size(expected)} (evaluation: the PPO agent: networks with Adam's "
        "moments and one update's batch)"
    ) in capsys.readouterr().out
