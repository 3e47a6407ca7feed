"""offline_options: the method contract, Algorithm 1's loop and the pieces it is built from."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from opt_suite.families.base import TabularModel
from opt_suite.methods.offline_options import OfflineOptions, Params, initial_options
from opt_suite.methods.offline_options.algorithm import improved_enough, policy_features
from opt_suite.methods.offline_options.demos import demo_batch
from opt_suite.methods.offline_options.training import NonFiniteObjective
from opt_suite.option_networks.features import grid_coordinates, state_features
from opt_suite.testing import MethodContract, context_for, tiny_setting
from opt_suite.trajectory import Trajectory

# A small budget shared by the tests: one trace of the training graph serves every test here.
# Rounds of exactly ``epochs`` epochs (max_epochs = epochs) unless a test is about convergence.
FAST = Params(epochs=4, max_epochs=4, steps_per_epoch=3, max_options=2, learning_rate=0.03)


def fixed(epochs: int, **changes) -> Params:
    """FAST with rounds of exactly ``epochs`` epochs."""
    return dataclasses.replace(FAST, epochs=epochs, max_epochs=epochs, **changes)


class TestOfflineOptionsContract(MethodContract):
    method_class = OfflineOptions
    params = FAST


def discover(params: Params, seed: int = 0):
    return OfflineOptions(params).discover(context_for(tiny_setting(), seed, 0))


@pytest.fixture(scope="module")
def trained():
    """One option trained for 15 epochs (Ĵ has room to rise)."""
    return discover(fixed(15, max_options=1))


# -- Algorithm 1 -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def trained_per_state():
    """The same with a per-state π (``policy_features: onehot``)."""
    return discover(fixed(15, max_options=1, policy_features="onehot"))


def test_jhat_increases_over_training(trained):
    jhat = trained.curves["jhat"]
    first_round = trained.info["rounds"][0]
    assert jhat[-1] > first_round["jhat_initial"] + 1.0
    assert jhat[-1] > jhat[0]
    # Both halves of Figure 1a move the right way: more likely demonstrations, fewer decisions.
    assert trained.curves["log_prob"][-1] > trained.curves["log_prob"][0]
    assert trained.curves["terminations"][-1] < trained.curves["terminations"][0]


def test_a_per_state_pi_reaches_more_jhat_than_one_on_coordinates(trained, trained_per_state):
    # π on two coordinates cannot fit every demonstrated state; a row per state can.
    assert trained_per_state.info["rounds"][0]["jhat"] > trained.info["rounds"][0]["jhat"]


def test_curves_have_one_point_per_epoch_of_every_round():
    found = discover(dataclasses.replace(FAST, max_options=2, delta=0.0))
    rounds = found.info["rounds_tried"]
    for name in ("jhat", "prob", "log_prob", "terminations", "kl", "option_round"):
        assert found.curves[name].shape == (FAST.epochs * rounds,), name
    np.testing.assert_array_equal(
        found.curves["option_round"], np.repeat(np.arange(rounds), FAST.epochs)
    )
    assert np.all((found.curves["prob"] >= 0) & (found.curves["prob"] <= 1))
    # The KL term needs two learned options: zero in the first round.
    assert np.all(found.curves["kl"][: FAST.epochs] == 0.0)


def test_relative_delta_rule():
    assert improved_enough(-5.0, -math.inf, 0.1)  # line 4: Ĵ_prev = −∞ accepts the first option
    assert improved_enough(-0.875, -1.0, 0.125)  # gained 0.125 = 12.5% of |−1|
    assert not improved_enough(-0.9375, -1.0, 0.125)
    assert improved_enough(12.0, 8.0, 0.5) and not improved_enough(11.0, 8.0, 0.5)
    assert not improved_enough(float("nan"), -1.0, 0.1)


def test_stops_on_delta_and_drops_the_rejected_option():
    # No second option can improve Ĵ by 1000% of |Ĵ|: round 2 is tried, then rejected.
    found = discover(dataclasses.replace(FAST, delta=10.0, max_options=3))
    assert found.info["stop_reason"] == "delta"
    assert found.info["rounds_tried"] == 2
    assert len(found.options) == found.info["options_kept"] == 1
    assert [r["kept"] for r in found.info["rounds"]] == [True, False]


def test_stops_at_max_options():
    found = discover(dataclasses.replace(FAST, max_options=1))
    assert found.info["stop_reason"] == "max_options"
    assert found.info["rounds_tried"] == 1 and len(found.options) == 1


def test_earlier_options_stay_frozen():
    one = discover(dataclasses.replace(FAST, max_options=1))
    two = discover(dataclasses.replace(FAST, max_options=2, delta=0.0))
    assert two.info["rounds_tried"] == 2
    # Round 1 is the same computation in both runs; round 2 must not touch its option.
    np.testing.assert_array_equal(two.options.mu[0], one.options.mu[0])
    np.testing.assert_array_equal(two.options.beta[0], one.options.beta[0])


def test_same_seed_same_curves_other_seed_other_options(trained):
    again = discover(fixed(15, max_options=1))
    for name, curve in trained.curves.items():
        np.testing.assert_array_equal(again.curves[name], curve, err_msg=name)
    other = discover(fixed(15, max_options=1), seed=1)
    assert not np.allclose(other.options.mu, trained.options.mu)


def test_training_starts_from_initial_options():
    # With a vanishing step size the trained option is its initialisation (Algorithm 1 line 6).
    params = fixed(1, learning_rate=1e-12, max_options=1)
    found = discover(params, seed=3)
    setting = tiny_setting()
    model = setting.family.tabular_model(setting.train_tasks[0])
    start = initial_options(setting.family, model, params, 1, np.random.SeedSequence(3))
    np.testing.assert_allclose(found.options.mu, start.mu, atol=1e-6)
    np.testing.assert_allclose(found.options.beta, start.beta, atol=1e-6)


def test_initial_options_count_and_determinism():
    setting = tiny_setting()
    model = setting.family.tabular_model(setting.train_tasks[0])
    seed = np.random.SeedSequence(5)
    three = initial_options(setting.family, model, FAST, 3, seed)
    assert three.mu.shape == (3, model.num_states, model.num_actions)
    two = initial_options(setting.family, model, FAST, 2, np.random.SeedSequence(5))
    np.testing.assert_array_equal(three.mu[:2], two.mu)  # option i never depends on the count
    assert len(initial_options(setting.family, model, FAST, 0, seed)) == 0


@pytest.mark.parametrize("features", ["onehot", "coords"])
def test_every_feature_kind_trains(features):
    found = discover(fixed(6, features=features, max_options=1))
    assert found.curves["jhat"][-1] > found.info["rounds"][0]["jhat_initial"]


def test_prob_likelihood_trains():
    found = discover(fixed(6, likelihood="prob", max_options=1))
    assert np.all(np.isfinite(found.curves["jhat"]))
    assert found.curves["jhat"][-1] > found.info["rounds"][0]["jhat_initial"]


def test_non_finite_jhat_fails_loudly_instead_of_keeping_no_options():
    # A step size of 1e30 throws the weights to ±1e30 at the first Adam step: logits overflow and
    # Ĵ is NaN. Algorithm 1 must raise (a failed cell), never return "0 options kept".
    with pytest.raises(NonFiniteObjective, match=r"round 1 .*epoch 1"):
        discover(fixed(3, learning_rate=1e30, max_options=1))


def test_a_round_stops_at_its_plateau_and_at_its_cap():
    # Any gain is a plateau with a tolerance of 1000%: the round ends after its minimum N epochs.
    early = discover(dataclasses.replace(FAST, epochs=3, max_epochs=50, plateau_tolerance=10.0))
    assert [r["epochs"] for r in early.info["rounds"]] == [3] * early.info["rounds_tried"]
    assert all(r["converged"] for r in early.info["rounds"])
    # No gain is small enough with a tolerance of 0 while Ĵ still rises: the cap ends the round.
    capped = discover(
        dataclasses.replace(FAST, epochs=2, max_epochs=6, plateau_tolerance=0.0, max_options=1)
    )
    assert capped.info["rounds"][0]["epochs"] == 6 and not capped.info["rounds"][0]["converged"]
    assert len(capped.curves["jhat"]) == 6


def test_warm_start_begins_the_next_round_where_the_last_ended():
    warm = discover(fixed(8, max_options=2, delta=0.0))
    cold = discover(fixed(8, max_options=2, delta=0.0, warm_start=False))
    first, second = warm.info["rounds"]
    # π carries over with a zero-weight column for o': the start of round 2 is round 1's end,
    # up to the probability the new column takes (at most 1/(n+1) of π at initialisation).
    assert abs(second["jhat_initial"] - first["jhat"]) < 0.25 * abs(first["jhat"])
    assert second["jhat"] >= first["jhat"] - 0.01 * abs(first["jhat"])
    # A fresh π starts round 2 from scratch, far below where round 1 ended.
    assert cold.info["rounds"][1]["jhat_initial"] < first["jhat"] - 0.5 * abs(first["jhat"])


# -- bad input -------------------------------------------------------------------------------------


def test_no_demonstrations_is_a_clear_error():
    setting = tiny_setting()
    context = dataclasses.replace(context_for(setting, 0, 0), demonstrations=())
    with pytest.raises(ValueError, match="at least one demonstration"):
        OfflineOptions(FAST).discover(context)


def test_non_tabular_family_is_a_clear_error():
    setting = tiny_setting()

    class NoModel(type(setting.family)):
        def tabular_model(self, task):
            return None

    context = dataclasses.replace(context_for(setting, 0, 0), family=NoModel(setting.family.params))
    with pytest.raises(ValueError, match="no tabular model"):
        OfflineOptions(FAST).discover(context)


# -- demonstrations and features -------------------------------------------------------------------


def _trajectory(states, actions) -> Trajectory:
    return Trajectory("t", np.array(states), np.array(actions), np.zeros(len(actions)))


def test_demo_batch_pads_and_indexes_distinct_states():
    batch = demo_batch([_trajectory([4, 7, 4], [1, 0]), _trajectory([9, 7], [3])], 10, 4)
    np.testing.assert_array_equal(batch.states, [4, 7, 9])
    np.testing.assert_array_equal(batch.lengths, [2, 1])
    np.testing.assert_array_equal(batch.observations, [[4, 7, 4], [9, 7, 4]])  # pad: states[0]
    np.testing.assert_array_equal(batch.actions, [[1, 0], [3, 0]])


@pytest.mark.parametrize(
    ("states", "actions", "message"),
    [
        ([0.5, 1.0], [0], "integer state indices"),
        ([0, 1], [0, 1], "T\\+1 observations"),
        ([0, 12], [0], "state index out of range"),
        ([0, 1], [4], "action out of range"),
    ],
)
def test_demo_batch_rejects_bad_trajectories(states, actions, message):
    with pytest.raises(ValueError, match=message):
        demo_batch([_trajectory(states, actions)], 10, 4)


def _grid_model(cells) -> TabularModel:
    cells = np.asarray(cells, dtype=np.int32)
    n = len(cells)
    zeros = np.zeros((n, 4, 1))
    return TabularModel(
        np.zeros((n, 4, 1), np.int32), zeros + 1, zeros, np.zeros(n, bool), 0, cells, (3, 5)
    )


def test_features_per_kind():
    model = _grid_model([(0, 0), (2, 4), (1, 2)])
    np.testing.assert_allclose(grid_coordinates(model), [[-1, -1], [1, 1], [0, 0]])
    onehot, coords, both = (state_features(model, k) for k in ("onehot", "coords", "both"))
    assert onehot.use_index and onehot.coords is None
    assert not coords.use_index and coords.coord_dim == 2
    assert both.use_index and both.coord_dim == 2
    with pytest.raises(ValueError, match="features"):
        state_features(model, "pixels")


def test_coordinates_off_grids_are_the_scaled_index():
    model = dataclasses.replace(_grid_model([(0, 0)] * 5), cells=None, shape=None)
    np.testing.assert_allclose(grid_coordinates(model)[:, 0], [-1, -0.5, 0, 0.5, 1])


def test_same_seed_same_options_in_a_fresh_process(trained):
    # Nothing hidden in the process (TF's global seed, numpy's, traces) may change the numbers.
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "import sys, dataclasses, numpy as np\n"
        f"sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "from opt_suite.testing import context_for, tiny_setting\n"
        "from opt_suite.methods.offline_options import OfflineOptions, Params\n"
        "p = Params(epochs=15, max_epochs=15, steps_per_epoch=3, max_options=1,\n"
        "           learning_rate=0.03)\n"
        "d = OfflineOptions(p).discover(context_for(tiny_setting(), 0, 0))\n"
        "sys.stdout.write(d.options.mu.tobytes().hex() + ' ' + d.options.beta.tobytes().hex())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    ).stdout.split()
    assert out == [trained.options.mu.tobytes().hex(), trained.options.beta.tobytes().hex()]


def test_automatic_lambda2_balances_the_two_gradients_and_is_kept_for_every_round():
    import tensorflow as tf

    from opt_suite.methods.offline_options.training import (
        FrozenOptions,
        _network_input,
        _parts,
        batch_tensors,
    )
    from opt_suite.objective import JhatConfig
    from opt_suite.option_networks.initial import new_option, policy_seed
    from opt_suite.option_networks.networks import init_policy

    params = fixed(3, max_options=2, delta=0.0, lambda2_auto=True)
    auto = discover(params)
    used = [r["lambda2"] for r in auto.info["rounds"]]
    assert len(used) == 2 and used[0] == used[1] and 1e-3 < used[0] < 1e6
    # Params.lambda2 is ignored: the weight comes from the demonstrations and the networks.
    again = discover(dataclasses.replace(params, lambda2=7.0))
    assert [r["lambda2"] for r in again.info["rounds"]] == used

    # Independently: at the start of round 1, λ2 · ‖∇ likelihood‖ = ‖∇ terminations‖.
    setting = tiny_setting()
    context = context_for(setting, 0, 0)
    model = setting.family.tabular_model(setting.train_tasks[0])
    demos = demo_batch(context.demonstrations, model.num_states, model.num_actions)
    features = state_features(model, params.features)
    option = new_option(features, model.num_actions, params.hidden_sizes, context.seed, 0)
    policy = init_policy(
        policy_features(features, params),
        params.hidden_sizes,
        model.num_actions + 1,
        policy_seed(context.seed, 0),
    )
    coords = None if features.coords is None else features.coords[demos.states]
    frozen = FrozenOptions.none(len(demos.states), model.num_actions)
    weights = {**{("o", k): tf.constant(v) for k, v in option.items()}}
    weights.update({("p", k): tf.constant(v) for k, v in policy.items()})
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(list(weights.values()))
        parts = _parts(
            {k: v for (net, k), v in weights.items() if net == "o"},
            {k: v for (net, k), v in weights.items() if net == "p"},
            tf.constant(frozen.log_mu),
            tf.constant(frozen.beta),
            batch_tensors(demos),
            tf.constant(demos.states),
            _network_input(coords, len(demos.states)),
            JhatConfig(likelihood=params.likelihood, jit_compile=False),
        )
    norms = [
        np.sqrt(sum(float(tf.reduce_sum(tf.square(tf.convert_to_tensor(g)))) for g in grads))
        for grads in (
            tape.gradient(parts.prob_term, list(weights.values())),
            tape.gradient(parts.termination_term, list(weights.values())),
        )
    ]
    np.testing.assert_allclose(used[0] * norms[0], norms[1], rtol=1e-4)


# -- the compiled path: a round of Adam steps on Ĵ is one graph ---------------------------------


def _round(demonstrations, kept: int, params: Params, seed: int = 0):
    """Train one round with ``kept`` frozen options, as Algorithm 1 would (round ``kept + 1``)."""
    from opt_suite.families.base import exact_model
    from opt_suite.methods.offline_options.training import FrozenOptions, train_round
    from opt_suite.option_networks.initial import new_option, policy_seed, tabulate
    from opt_suite.option_networks.networks import init_policy

    setting = tiny_setting()
    model = exact_model(setting.family, setting.train_tasks[0])
    features = state_features(model, params.features)
    actions, root = model.num_actions, np.random.SeedSequence(seed)
    demos = demo_batch(demonstrations, model.num_states, actions)
    coords = None if features.coords is None else features.coords[demos.states]
    frozen = FrozenOptions.none(len(demos.states), actions)
    for i in range(kept):
        weights = new_option(features, actions, params.hidden_sizes, root, i)
        mu, beta = tabulate(weights, features, demos.states)
        frozen = frozen.append(np.log(mu), beta)
    option = new_option(features, actions, params.hidden_sizes, root, kept)
    policy = init_policy(features, params.hidden_sizes, actions + kept + 1, policy_seed(root, kept))
    inputs = (demos, coords, frozen, option, policy)
    return inputs, train_round(*inputs, params)


def test_a_round_is_traced_once_across_batch_shapes_and_option_counts():
    from opt_suite.methods.offline_options import training

    def traces() -> dict:
        return {key: f.experimental_get_tracing_count() for key, f in training._COMPILED.items()}

    params = fixed(1)
    demonstrations = tiny_setting().demonstrations
    before = traces()
    # Other batch sizes, lengths, demonstrated states and numbers of frozen options: one trace
    # (none if an earlier test in this process traced this structure already).
    for used, kept in ((demonstrations[:1], 0), (demonstrations, 2), (demonstrations[1:], 1)):
        _round(used, kept, params)
    after = traces()
    assert sum(count - before.get(key, 0) for key, count in after.items()) <= 1
    assert len(after) - len(before) <= 1  # one weight structure (features and depth)


@pytest.mark.parametrize("likelihood", ["log_prob_per_step", "prob"])
def test_the_compiled_round_computes_the_objectives_jhat(likelihood):
    # Row 0 of a round's curves is Ĵ before any update, computed inside the compiled round; it
    # must be the objective library's Ĵ (opt_suite.objective.jhat) of the same networks.
    import tensorflow as tf

    from opt_suite.methods.offline_options.training import _network_input, _parts, batch_tensors
    from opt_suite.objective import JhatConfig

    params = fixed(1, likelihood=likelihood, lambda1=0.01)
    inputs, result = _round(tiny_setting().demonstrations, 1, params)
    demos, coords, frozen, option, policy = inputs
    config = JhatConfig(params.lambda1, params.lambda2, likelihood, jit_compile=False)
    eager = _parts(
        {k: tf.constant(v, tf.float32) for k, v in option.items()},
        {k: tf.constant(v, tf.float32) for k, v in policy.items()},
        tf.constant(frozen.log_mu),
        tf.constant(frozen.beta),
        batch_tensors(demos),
        tf.constant(demos.states),
        _network_input(coords, len(demos.states)),
        config,
    )
    assert result.initial["jhat"] == pytest.approx(float(eager.total), rel=1e-5)
    assert result.initial["terminations"] == pytest.approx(float(eager.termination_term), rel=1e-5)
    assert result.initial["kl"] == pytest.approx(float(eager.kl_term), rel=1e-5)
    assert result.final_jhat != result.initial["jhat"]  # and the round did update the networks
