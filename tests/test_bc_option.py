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


# --- issue 35: the control's fit, budget, length and initial weights ----------------------------


def test_it_reports_its_fit_in_sample_and_on_held_out_demonstrations():
    setting = dataclasses.replace(tiny_setting(), demonstrations=tiny_setting().demonstrations * 2)
    found = BCOption(BCOptionParams("never", SMALL, held_out=0.5)).discover(
        context_for(setting, 3, 0)
    )
    info = found.info
    assert 0.0 <= info["held_out_accuracy"] <= 1.0 and 0.0 <= info["fit_accuracy"] <= 1.0
    assert info["held_out_log_likelihood"] < 0 and info["held_out_demonstrations"] == 2
    # In-sample: the pooled mean log mu(a|s) of the option it returns, from its mu table.
    states = np.concatenate([np.asarray(h.observations)[:-1] for h in setting.demonstrations])
    actions = np.concatenate([np.asarray(h.actions) for h in setting.demonstrations])
    mu = found.options.mu[0]
    np.testing.assert_allclose(
        info["fit_log_likelihood"], np.mean(np.log(mu[states, actions])), rtol=1e-5
    )
    assert info["fit_accuracy"] == np.mean(np.argmax(mu[states], axis=1) == actions)


def test_the_held_out_split_is_seeded_and_leaves_the_option_alone(cloned):
    from opt_suite.methods.offline_options.control import held_out_indices

    seed = np.random.SeedSequence(3)
    assert held_out_indices(8, 0.25, seed) == held_out_indices(8, 0.25, np.random.SeedSequence(3))
    assert len(held_out_indices(8, 0.25, seed)) == 2
    assert held_out_indices(1, 0.5, seed) == frozenset() == held_out_indices(8, 0.0, seed)
    setting = tiny_setting()
    without = BCOption(BCOptionParams("never", SMALL, held_out=0.0)).discover(
        context_for(setting, 3, 0)
    )
    np.testing.assert_array_equal(without.options.mu, cloned["never"].options.mu)
    assert "held_out_accuracy" not in without.info
    assert without.info["held_out_note"] == "no held-out fit (held_out: 0)"


def test_cloned_pairs_sets_the_number_of_adam_steps():
    setting = tiny_setting()
    steps = int(sum(len(h.actions) for h in setting.demonstrations))  # 14 demonstrated pairs
    # 10 passes over the pairs: 10 full-batch steps, one curve point per 5 (steps_per_epoch).
    found = BCOption(BCOptionParams("never", SMALL, cloned_pairs=10 * steps)).discover(
        context_for(setting, 3, 0)
    )
    assert len(found.curves["likelihood"]) == 1 + 2
    # ceil: one pair more is one step more, recorded as a last point.
    found = BCOption(BCOptionParams("never", SMALL, cloned_pairs=10 * steps + 1)).discover(
        context_for(setting, 3, 0)
    )
    assert len(found.curves["likelihood"]) == 1 + 3


def test_a_termination_probability_between_never_and_every_step(cloned):
    found = BCOption(BCOptionParams("never", SMALL, termination_probability=0.25)).discover(
        context_for(tiny_setting(), 3, 0)
    )
    np.testing.assert_array_equal(found.options.mu, cloned["never"].options.mu)
    assert np.all(found.options.beta == 0.25) and found.options.names == ("bc-beta-0.25-0",)


def test_the_conv_option_takes_the_swept_termination_probability():
    from opt_suite.methods.offline_options.control import beta_logit

    assert beta_logit(0.0) == -100.0 and beta_logit(1.0) == 100.0 and beta_logit(0.5) == 0.0
    setting = image_method_setting()
    frames = np.stack([np.asarray(h.observations)[0] for h in setting.demonstrations])
    params = BCOptionParams("never", FRAMES, termination_probability=0.2, held_out=0.0)
    found = BCOption(params).discover(context_for(setting, 0, 0))
    _, beta = found.options.probabilities(frames)
    np.testing.assert_allclose(beta, 0.2, rtol=1e-5)


def test_initial_weights_of_starts_from_offline_options_first_option(monkeypatch):
    # Both discoveries record the weights they start from; with the seed the runner gives each,
    # the control's initial tensors are the method's first option's, before any training.
    from opt_suite.methods.offline_options import OfflineOptions, algorithm, cloning
    from opt_suite.runner.protocol import _seed_entry
    from opt_suite.runner.seeding import discovery_seed

    started: dict[str, dict] = {}
    real_new, real_clone = algorithm.new_option, cloning.clone_option

    class Drawn(Exception):
        """Algorithm 1 drew its first option: the rest of its training is not needed here."""

    def first_option(*args):
        started["offline-options"] = real_new(*args)
        raise Drawn

    def clone(option, *args):
        started.setdefault("bc", {k: v.copy() for k, v in option.items()})
        return real_clone(option, *args)

    monkeypatch.setattr(algorithm, "new_option", first_option)
    monkeypatch.setattr(cloning, "clone_option", clone)
    setting = tiny_setting()
    method_params = dataclasses.replace(SMALL, max_options=1, epochs=1, max_epochs=1)

    def seeded(method, params, name):
        entry = type("Entry", (), {"params": params})()
        cell = type("Cell", (), {"method": name})()
        context = context_for(setting, 0, 0)
        seed = discovery_seed(0, 0, _seed_entry(method, entry, cell))
        return dataclasses.replace(context, seed=seed)

    with pytest.raises(Drawn):
        OfflineOptions(method_params).discover(
            seeded(OfflineOptions, method_params, "offline-options")
        )
    for borrowed, equal in (("offline-options", True), (None, False)):
        started.pop("bc", None)
        params = BCOptionParams("never", method_params, initial_weights_of=borrowed)
        BCOption(params).discover(seeded(BCOption, params, "bc-option-never"))
        ours, theirs = started["bc"], started["offline-options"]
        assert set(ours) == set(theirs)
        same = all(np.array_equal(ours[k], theirs[k]) for k in ours)
        assert same == equal


def test_batch_size_clones_on_seeded_minibatches_of_pairs():
    setting = tiny_setting()
    pairs = int(sum(len(h.actions) for h in setting.demonstrations))  # 14 demonstrated pairs
    params = BCOptionParams("never", SMALL, cloned_pairs=40, batch_size=4, held_out=0.0)
    control = BCOption(params)
    assert control.cloning_steps(pairs) == 10  # ceil(40 / 4) steps of 4 pairs
    assert BCOption(dataclasses.replace(params, batch_size=100)).cloning_steps(pairs) == 3
    found = control.discover(context_for(setting, 3, 0))
    again = control.discover(context_for(setting, 3, 0))
    np.testing.assert_array_equal(found.options.mu, again.options.mu)  # drawn from the seed
    assert len(found.curves["likelihood"]) == 1 + 2  # a point every 5 steps (steps_per_epoch)
    curve = found.curves["likelihood"]
    assert curve[-1] > curve[0]  # the minibatch steps raise the demonstrations' likelihood
    full = BCOption(dataclasses.replace(params, batch_size=None)).discover(
        context_for(setting, 3, 0)
    )
    assert not np.array_equal(full.options.mu, found.options.mu)
    assert 0 <= found.info["fit_accuracy"] <= 1 and found.info["fit_log_likelihood"] <= 0


def test_the_minibatch_clone_of_a_conv_option_and_its_held_out_fit():
    params = BCOptionParams("never", FRAMES, cloned_pairs=8, batch_size=4, held_out=0.25)
    found = BCOption(params).discover(context_for(image_method_setting(), 0, 0))
    assert 0 <= found.info["held_out_accuracy"] <= 1
    assert found.info["held_out_log_likelihood"] <= 0


def test_the_variant_with_bc_ppos_budget_is_bc_ppos_schedule():
    from pathlib import Path

    from baselines.bc_ppo import BCPPOParams
    from opt_suite.spec import load_spec

    spec = load_spec(Path(__file__).parent / "fixtures" / "bc_option_ppo_budget.yaml")
    entries = {m.name: m for m in spec.methods}
    variant, never = entries["bc-option-ppo-budget"].params, entries["bc-option-never"].params
    ppo = BCPPOParams()
    assert (variant.cloned_pairs, variant.batch_size) == (ppo.steps * ppo.batch_size, 64)
    assert variant.offline_options.learning_rate == ppo.learning_rate
    assert BCOption(variant).cloning_steps(2000) == ppo.steps  # whatever the pair count
    assert BCOption(variant).cloning_steps(40) == ppo.steps * 64 // 40  # fewer than a batch
    assert never.batch_size is None and never.cloned_pairs is None  # the control as before
