"""bc_option: one behaviour-cloned option, never or always terminating (issue 25's control)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from opt_suite.methods.offline_options import Params
from opt_suite.methods.offline_options.control import BCOption, BCOptionParams
from opt_suite.testing import MethodContract, context_for, image_method_setting, tiny_setting

# A tiny training budget: 4 epochs of 5 full-batch Adam steps.
SMALL = Params(epochs=4, max_epochs=4, steps_per_epoch=5, learning_rate=0.03, hidden_sizes=(16,))
FRAMES = dataclasses.replace(SMALL, features="frames", epochs=2, max_epochs=2, steps_per_epoch=2)


class TestBCOptionContract(MethodContract):
    method_class = BCOption
    params = BCOptionParams("never", SMALL)


class TestBCOptionOnImages(MethodContract):
    method_class = BCOption
    params = BCOptionParams("every_step", FRAMES)

    def setting(self):
        return image_method_setting()


@pytest.fixture(scope="module")
def cloned():
    setting = tiny_setting()
    return {
        t: BCOption(BCOptionParams(t, SMALL)).discover(context_for(setting, 3, 0))
        for t in ("never", "every_step")
    }


def test_cloning_raises_the_demonstrations_likelihood(cloned):
    found = cloned["never"]
    curve = found.curves["likelihood"]
    assert len(curve) == SMALL.epochs + 1
    assert found.info["likelihood"] > found.info["likelihood_initial"] + 0.1, curve
    # The option now prefers the demonstrated action on the demonstrated states.
    setting = tiny_setting()
    states = np.concatenate([np.asarray(h.observations)[:-1] for h in setting.demonstrations])
    actions = np.concatenate([np.asarray(h.actions) for h in setting.demonstrations])
    mu = found.options.mu[0]
    assert np.mean(mu[states, actions]) > 0.5
    assert np.mean(np.argmax(mu[states], axis=1) == actions) > 0.5  # 4 actions: chance 0.25


def test_the_two_variants_share_mu_and_differ_in_beta_alone(cloned):
    never, every = cloned["never"].options, cloned["every_step"].options
    assert len(never) == len(every) == 1
    np.testing.assert_array_equal(never.mu, every.mu)
    assert np.all(never.beta == 0.0) and np.all(every.beta == 1.0)
    assert never.names == ("bc-never-0",) and every.names == ("bc-every-step-0",)


def test_its_network_is_offline_options_first_option_before_training():
    # Zero steps: the cloned option is exactly the option Algorithm 1 introduces first.
    from opt_suite.methods.offline_options import initial_options

    setting = tiny_setting()
    untrained = dataclasses.replace(SMALL, epochs=1, max_epochs=1, learning_rate=1e-30)
    found = BCOption(BCOptionParams("never", untrained)).discover(context_for(setting, 5, 0))
    model = setting.family.tabular_model(setting.train_tasks[0])
    first = initial_options(setting.family, model, untrained, 1, np.random.SeedSequence(5))
    np.testing.assert_allclose(found.options.mu, first.mu, atol=1e-6)


def test_conv_option_terminates_as_declared():
    setting = image_method_setting()
    frames = np.stack([np.asarray(h.observations)[0] for h in setting.demonstrations])
    for termination, value in (("never", 0.0), ("every_step", 1.0)):
        found = BCOption(BCOptionParams(termination, FRAMES)).discover(context_for(setting, 0, 0))
        mu, beta = found.options.probabilities(frames)
        assert mu.shape == (len(frames), 1, 4)
        np.testing.assert_allclose(beta, value, atol=1e-30)


def test_a_control_where_the_family_gives_no_demonstrations_is_a_located_error(tmp_path, capsys):
    from opt_suite.cli import main

    path = tmp_path / "spec.yaml"
    path.write_text(
        "name: no-demos\n"
        "family: {name: atari, params: {game: breakout}}\n"
        "tasks: {count: 4, train: 2, test: 2, seed: 0}\n"
        "methods:\n"
        "  - {name: bc, method: bc_option, params: {offline_options: {features: frames}}}\n"
        "evaluation: {learner: tf_agents, episodes: 2, seeds: 1}\n"
    )
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:5:" in err  # the control's own line
    assert (
        "methods[0].method: bc_option learns from demonstrations, and family atari-breakout "
        "gives none" in err
    )
    assert "demonstrations.source: optimal (the default) needs a family with an exact model" in err
    assert "expected a source that fits the family (sources that can: minari, ppo_expert)" in err
