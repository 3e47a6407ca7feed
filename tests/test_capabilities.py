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
    offered,
    unmet,
)
from opt_suite.families.chain import Chain
from opt_suite.families.fourrooms import FourRooms

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
      - {name: eigen, method: eigenoptions}
    evaluation:
      learner: LEARNER
      episodes: 10
      max_steps: 20
      seeds: 1
    report: {baseline: primitives}
    """
)


def test_what_families_offer():
    assert offered(FourRooms()) == {EXACT_MODEL, DISCRETE_ACTIONS, INDEX_OBSERVATIONS}
    assert offered(Chain()) == {EXACT_MODEL, DISCRETE_ACTIONS, INDEX_OBSERVATIONS}
    assert PixelCorridor().capabilities == {DISCRETE_ACTIONS, IMAGE_OBSERVATIONS}
    assert unmet("primitives", {DISCRETE_ACTIONS}, PixelCorridor()) is None
    assert (
        unmet("eigenoptions", {EXACT_MODEL}, PixelCorridor())
        == "eigenoptions needs a family with an exact model; pixels has none"
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
        # eigenoptions learns from demonstrations, and the default source plans on the model
        f"{path}:1:1: demonstrations.source: optimal needs a family with an exact model and "
        "index observations; pixels has none",
        f"{path}:{eigen}: methods[2].method: eigenoptions needs a family with an exact model and "
        "index observations; pixels has none",
        f"{path}:{learner}: evaluation.learner: smdp_q_learning needs a family with an exact model "
        "and index observations; pixels has none",
    ]


def test_primitives_and_random_options_need_only_discrete_actions(with_pixels, tmp_path):
    from opt_suite.spec import load_spec

    path = tmp_path / "spec.yaml"
    path.write_text(
        SPEC.replace("LEARNER", "random_over_options").replace(
            "  - {name: eigen, method: eigenoptions}\n", ""
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
            "  - {name: eigen, method: eigenoptions}\n", ""
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
              - {name: tabular, method: offline_options, params: {features: coords}}
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
        "with an exact model and index observations; atari has none"
    ) in err
    assert "evaluation.learner: smdp_q_learning needs a family with an exact model" in err
    assert "primitives" not in err.split("methods[1]")[0]  # primitives fits atari
    # what offline_options needs depends on its params: conv options on frames fit atari
    assert "methods[2]" not in err
    assert "methods[3].method: offline_options needs a family with an exact model" in err
