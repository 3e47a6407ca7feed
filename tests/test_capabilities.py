"""Families offer capabilities, components require them; validate rejects what cannot run."""

import textwrap

import numpy as np
import pytest
from image_toys import PixelCorridor, RandomOverOptions
from spec_fakes import where

from opt_suite import registry
from opt_suite.cli import main
from opt_suite.families.capabilities import (
    DISCRETE_ACTIONS,
    EXACT_MODEL,
    IMAGE_OBSERVATIONS,
    INDEX_OBSERVATIONS,
    REFERENCE_OPTIONS,
    offered,
    unmet,
)
from opt_suite.families.tabular.chain import Chain
from opt_suite.families.tabular.fourrooms import FourRooms

REAL_LOAD = registry.load


@pytest.fixture()
def with_pixels(monkeypatch):
    """The registry also knows the pixel family and the learner that acts through option sets."""

    def load(group, name):
        extra = {
            (registry.FAMILIES, "pixels"): PixelCorridor,
            (registry.LEARNERS, "random_over_options"): RandomOverOptions,
        }
        return extra.get((group, name)) or REAL_LOAD(group, name)

    monkeypatch.setattr(registry, "load", load)


SPEC = textwrap.dedent(
    """\
    name: pixels-test
    family:
      name: pixels
      params: {length: 5}
    tasks: {count: 4, train: 2, test: 2, seed: 0}
    methods:
      - {name: primitives, method: primitives}
      - {name: random-options, method: random_options, params: {count: 2}}
      - {name: eigen, method: eigenoptions, params: {adjacency: observed}}
    evaluation:
      learner: LEARNER
      episodes: 10
      max_steps: 20
      seeds: 1
    report: {baseline: primitives}
    """
)


def test_what_families_offer():
    assert offered(FourRooms()) == {
        EXACT_MODEL,
        DISCRETE_ACTIONS,
        INDEX_OBSERVATIONS,
        REFERENCE_OPTIONS,
    }
    assert offered(Chain()) == {EXACT_MODEL, DISCRETE_ACTIONS, INDEX_OBSERVATIONS}
    assert PixelCorridor().capabilities == {DISCRETE_ACTIONS, IMAGE_OBSERVATIONS}
    assert unmet("primitives", {DISCRETE_ACTIONS}, PixelCorridor()) is None
    assert (
        unmet("eigenoptions", {EXACT_MODEL}, PixelCorridor())
        == "eigenoptions needs a family with an exact model; pixels has no exact model"
    )


def test_validate_rejects_each_incompatible_component_at_its_key(with_pixels, tmp_path, capsys):
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC.replace("LEARNER", "smdp_q_learning"))
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith(str(path))]
    text = path.read_text()
    eigen, learner = where(text, "eigenoptions"), where(text, "smdp_q_learning")
    assert lines == [
        # eigenoptions on observed transitions reads the demonstrations; the default source
        # plans on the model
        f"{path}:1:1: demonstrations.source: optimal (the default) needs a family with an exact "
        "model and index observations; pixels has no exact model and image observations; "
        "sources that can: minari, ppo_expert",
        f"{path}:{eigen}: methods[2].method: eigenoptions needs a family with an exact model and "
        "index observations; pixels has no exact model and image observations; methods that "
        "can: bc_option, bc_ppo, laplacian_options, offline_options, primitives, random_options",
        f"{path}:{learner}: evaluation.learner: smdp_q_learning needs a family with index "
        "observations; pixels has image observations; learners that can: tf_agents",
    ]


def test_primitives_and_random_options_need_only_discrete_actions(with_pixels, tmp_path):
    from opt_suite.spec import load_spec

    path = tmp_path / "spec.yaml"
    path.write_text(
        SPEC.replace("LEARNER", "random_over_options").replace(
            "  - {name: eigen, method: eigenoptions, params: {adjacency: observed}}\n", ""
        )
    )
    assert load_spec(path).family.name == "pixels"


def test_a_family_with_images_and_no_model_runs_end_to_end(with_pixels, tmp_path):
    """Primitives + random_options on pixels: network option-set files, acting by calls."""
    from opt_suite.options import load_option_set
    from opt_suite.options.network import NetworkOptionSet
    from opt_suite.runner.protocol import run_protocol
    from opt_suite.spec import load_spec
    from opt_suite.store import ResultsStore

    path = tmp_path / "spec.yaml"
    path.write_text(
        SPEC.replace("LEARNER", "random_over_options").replace(
            "  - {name: eigen, method: eigenoptions, params: {adjacency: observed}}\n", ""
        )
    )
    result = run_protocol(load_spec(path), tmp_path / "run", workers=0, quiet=True)
    assert result.summary.ok, result.summary.failed
    store = ResultsStore(tmp_path / "run")
    options = store.option_set("random-options", 0)
    assert isinstance(options, NetworkOptionSet) and len(options) == 2
    assert len(store.option_set("primitives", 0)) == 0
    files = sorted((tmp_path / "run" / "cells").glob("*/options.npz"))
    assert len(files) == 2 and all(load_option_set(f).kind == "network" for f in files)
    frame = np.zeros((1, 1, 5, 1), np.uint8)
    mu, beta = options.probabilities(frame)
    assert mu.shape == (1, 2, 2) and beta.shape == (1, 2)
    store.close()


def test_validate_rejects_tabular_components_on_atari(tmp_path, capsys):
    path = tmp_path / "atari.yaml"
    path.write_text(
        textwrap.dedent(
            """\
            name: atari-check
            family: {name: atari, params: {game: breakout}}
            tasks: {count: 4, train: 2, test: 2, seed: 0}
            methods:
              - {name: primitives, method: primitives}
              - {name: eigen, method: eigenoptions}
              - {name: conv, method: offline_options, params: {features: frames}}
              - {name: tabular, method: offline_options, params: {features: onehot}}
            evaluation: {learner: smdp_q_learning, episodes: 10, seeds: 1}
            report: {baseline: primitives}
            """
        )
    )
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    text = path.read_text()
    assert (
        f"{path}:{where(text, 'eigenoptions')}: methods[1].method: eigenoptions needs a family "
        "with an exact model and index observations; atari-breakout has no exact model and "
        "image observations; methods that can: "
    ) in err
    assert "evaluation.learner: smdp_q_learning needs a family with index observations" in err
    assert "primitives" not in err.split("methods[1]")[0]  # primitives fits atari
    # what offline_options needs depends on its params: conv options on frames fit atari
    assert "methods[2]" not in err
    # ... a weight row per state does not: reported at the key that decides it, with what fits
    assert (
        f"{path}:{where(text, 'features: onehot', 'onehot')}: methods[3].params.features: "
        "'onehot' needs index observations; atari has images: use 'frames' or 'coords' (both "
        "mean convolutional options on the pixels)"
    ) in err
    assert "methods[3].method" not in err


def test_the_offline_options_default_fits_images_vectors_and_indices(tmp_path, capsys):
    """No features given: the default reads every observation kind; none needs a model."""
    from opt_suite.families.gymnasium.family import Gymnasium, Params
    from opt_suite.methods.offline_options import OfflineOptions
    from opt_suite.methods.offline_options.params import Params as OfflineParams
    from opt_suite.option_networks.inputs import network_input

    default = OfflineParams()
    assert network_input(default.features, FourRooms()) == ("model", None)
    assert network_input(default.features, PixelCorridor()) == ("frames", None)
    lake, pole = Gymnasium(Params(id="FrozenLake-v1")), Gymnasium(Params(id="CartPole-v1"))
    assert network_input(default.features, lake) == ("index", None)
    assert network_input(default.features, pole) == ("vector", None)
    assert EXACT_MODEL not in OfflineOptions.requirements(default)
    for family in (FourRooms(), PixelCorridor(), lake, pole):
        assert OfflineOptions.check_family(default, family) == []
    onehot = OfflineParams(features="onehot")
    assert OfflineOptions.check_family(onehot, lake) == []
    [(key, message)] = OfflineOptions.check_family(onehot, pole)
    assert key == "features" and "has vectors: use 'coords'" in message


def test_an_observation_kind_no_option_network_reads_is_a_located_error(tmp_path, capsys):
    path = tmp_path / "blackjack.yaml"
    path.write_text(
        textwrap.dedent(
            """            name: tuple-observations
            family: {name: gymnasium, params: {id: Blackjack-v1}}
            tasks: {count: 3, train: 2, test: 1, seed: 0}
            demonstrations: {source: ppo_expert}
            methods:
              - {name: learned, method: offline_options, params: {lambda2: 5.0}}
            evaluation: {learner: tf_agents, episodes: 10, seeds: 1}
            """
        )
    )
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert (
        f"{path}:{where(path.read_text(), '{lambda2')}: methods[0].params.features: gymnasium's "
        "observations Tuple("
    ) in err
    assert "are neither indices (Discrete), vectors (a rank-1 Box) nor images" in err


def test_validate_rejects_conv_options_on_a_family_without_images(tmp_path, capsys):
    path = tmp_path / "grid.yaml"
    path.write_text(
        textwrap.dedent(
            """\
            name: grid-frames
            family: {name: fourrooms, params: {layout: sutton-13x13}}
            tasks: {count: 3, train: 2, test: 1, seed: 0}
            methods:
              - {name: conv, method: offline_options, params: {features: frames}}
            evaluation: {learner: smdp_q_learning, episodes: 10, seeds: 1}
            """
        )
    )
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    at = where(path.read_text(), "features: frames", "frames")
    assert (
        f"{path}:{at}: methods[0].params.features: "
        "'frames' (convolutional options) needs a family with image observations; fourrooms "
        "has none: use 'coords' or 'onehot' or 'both'"
    ) in err


ATARI_AGENTS = textwrap.dedent(
    """\
    name: atari-networks
    family: {name: atari, params: {game: breakout}}
    tasks: {count: 3, train: 2, test: 1, seed: 0}
    demonstrations:
      source: ppo_expert
      params:
        frames: 1000
        ppo:
          network: {conv_filters: [8, 8], conv_kernels: [EXPERT], conv_strides: [4, 2]}
    methods:
      - {name: conv, method: offline_options, params: {features: frames}}
    evaluation:
      learner: tf_agents
      params:
        ppo:
          network: {conv_filters: [8], conv_kernels: [LEARNER], conv_strides: [4]}
      episodes: 10
      seeds: 1
    """
)


def test_validate_rejects_agent_convolutions_that_do_not_fit_the_frames(tmp_path, capsys):
    """84 -> (84 - 8) // 4 + 1 = 20 -> (20 - 30) // 2 + 1 < 1: tf-agents would fail to build it."""
    path = tmp_path / "atari.yaml"
    path.write_text(ATARI_AGENTS.replace("EXPERT", "8, 30").replace("LEARNER", "85"))
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    text = path.read_text()
    assert (
        f"{path}:{where(text, '[8, 30]')}: demonstrations.params.ppo.network.conv_kernels: layer 1 "
        "(8x8 stride 4) shrinks a 84x84 input to 20x20, layer 2 (30x30 stride 2) to nothing "
        "('valid' padding, on the family's 84x84x2 observations)"
    ) in err
    assert (
        f"{path}:{where(text, '[85]')}: evaluation.params.ppo.network.conv_kernels: layer 1 "
        "(85x85 stride 4) shrinks a 84x84 input to nothing"
    ) in err


def test_agent_convolutions_that_fit_the_frames_validate(tmp_path):
    from opt_suite.spec import load_spec

    path = tmp_path / "atari.yaml"
    path.write_text(ATARI_AGENTS.replace("EXPERT", "8, 4").replace("LEARNER", "84"))
    assert load_spec(path).evaluation.learner == "tf_agents"


def test_network_fit_problems_only_for_images():
    from opt_suite.agents.params import NetworkParams

    network = NetworkParams(conv_filters=(8,), conv_kernels=(9,), conv_strides=(1,))
    assert network.fit_problems((8, 8, 2)) and network.fit_problems((9, 8, 1))
    assert network.fit_problems((8, 8)) and network.fit_problems((9, 9)) == []  # [H, W] images
    assert network.fit_problems((9, 9, 1)) == []
    assert network.fit_problems((4,)) == []  # vector observations use no convolutions


def test_the_default_source_and_learner_on_cartpole_name_what_the_task_has_and_what_can(
    tmp_path, capsys
):
    """Issue 39: said of the task's observations (not the family's name), with what would run."""
    path = tmp_path / "cartpole.yaml"
    path.write_text(
        textwrap.dedent(
            """\
            name: cartpole-defaults
            family: {name: gymnasium, params: {id: CartPole-v1}}
            tasks: {count: 3, train: 2, test: 1}
            methods: [{name: learned, method: offline_options}]
            evaluation: {episodes: 10}
            """
        )
    )
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert (
        "demonstrations.source: optimal (the default) needs a family with an exact model and "
        "index observations; gymnasium-cartpole-v1 has no exact model and vector observations; "
        "sources that can: minari, ppo_expert\n"
    ) in err
    assert (
        "evaluation.learner: smdp_q_learning (the default) needs a family with index "
        "observations; gymnasium-cartpole-v1 has vector observations; learners that can: "
        "tf_agents\n"
    ) in err
    # FrozenLake through the same family has index observations: both fit there.
    path.write_text(path.read_text().replace("CartPole-v1", "FrozenLake-v1"))
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert "evaluation.learner" not in err
    assert (
        "gymnasium-frozenlake-v1 has no exact model; sources that can: minari, ppo_expert, " in err
    )
    assert "q_learning\n" in err
