"""Option sets: one file format with a kind tag, tabular and network-backed sets, batched acting."""

import io

import numpy as np
import pytest

from opt_suite.learners.smdp_q import tabulate
from opt_suite.options import (
    OptionSet,
    OptionSetError,
    TabularOptionSet,
    from_bytes,
    load_option_set,
    option_set_kind,
    to_bytes,
)


def _tabular(m=2, S=5, A=3, seed=0):
    rng = np.random.default_rng(seed)
    mu = rng.dirichlet(np.ones(A), size=(m, S))
    return TabularOptionSet(mu, rng.uniform(size=(m, S)), tuple(f"o{i}" for i in range(m)))


def test_tabular_round_trip_keeps_every_number(tmp_path):
    options = _tabular()
    options.save(tmp_path / "o.npz")
    assert option_set_kind(tmp_path / "o.npz") == "tabular"
    loaded = load_option_set(tmp_path / "o.npz")
    assert isinstance(loaded, TabularOptionSet)
    np.testing.assert_array_equal(loaded.mu, options.mu)
    np.testing.assert_array_equal(loaded.beta, options.beta)
    assert loaded.names == ("o0", "o1") and len(loaded) == 2 and loaded.num_actions == 3
    assert TabularOptionSet.load(tmp_path / "o.npz").names == options.names


def test_files_without_a_kind_tag_are_tabular(tmp_path):
    options = _tabular()
    np.savez_compressed(
        tmp_path / "old.npz", mu=options.mu, beta=options.beta, names=np.array(["a", "b"])
    )
    loaded = load_option_set(tmp_path / "old.npz")
    assert isinstance(loaded, TabularOptionSet) and loaded.names == ("a", "b")


def test_bad_files_are_clear_errors(tmp_path):
    with pytest.raises(OptionSetError, match="not found"):
        load_option_set(tmp_path / "missing.npz")
    options = _tabular()
    data = to_bytes(options)
    (tmp_path / "cut.npz").write_bytes(data[: len(data) // 2])
    with pytest.raises(OptionSetError, match="cut.npz: not a readable option-set file"):
        load_option_set(tmp_path / "cut.npz")
    np.savez(tmp_path / "alien.npz", kind=np.array("hologram"))
    with pytest.raises(OptionSetError, match="unknown option-set kind 'hologram'"):
        load_option_set(tmp_path / "alien.npz")
    np.savez(tmp_path / "half.npz", kind=np.array("tabular"), mu=options.mu)
    with pytest.raises(OptionSetError, match="bad contents"):
        load_option_set(tmp_path / "half.npz")


def test_tabular_acting_is_a_batched_look_up():
    options = _tabular(m=3, S=6, A=4)
    states = np.array([0, 5, 2, 2])
    mu, beta = options.probabilities(states)
    assert mu.shape == (4, 3, 4) and beta.shape == (4, 3)
    np.testing.assert_array_equal(mu[1, 2], options.mu[2, 5])
    np.testing.assert_array_equal(beta[3, 0], options.beta[0, 2])
    with pytest.raises(ValueError, match="state indices in"):
        options.probabilities([6])


def test_non_finite_names_the_table():
    options = _tabular()
    assert options.non_finite() is None
    beta = options.beta.copy()
    beta[1, 2] = np.nan
    assert TabularOptionSet(options.mu, beta).non_finite() == "beta"


def test_mismatched_shapes_and_names_are_refused():
    with pytest.raises(ValueError, match="expected mu"):
        TabularOptionSet(np.zeros((2, 3, 4)), np.zeros((3, 3)))
    with pytest.raises(ValueError, match="2 options but 1 names"):
        TabularOptionSet(np.zeros((2, 3, 4)), np.zeros((2, 3)), ("x",))


def test_the_protocol_is_an_abstract_base():
    assert isinstance(_tabular(), OptionSet)
    with pytest.raises(TypeError):
        OptionSet()  # type: ignore[abstract]


class TestNetworkOptionSet:
    @pytest.fixture()
    def options(self):
        from opt_suite.options.network import NetworkOptionSet, option_network

        nets = [option_network((4, 4, 2), 5, seed=s, hidden_sizes=(8,)) for s in (1, 2)]
        return NetworkOptionSet(nets, 5, (4, 4, 2), ("left", "right"))

    def test_acting_gives_probabilities_for_every_env_and_option(self, options):
        obs = np.random.default_rng(0).uniform(size=(7, 4, 4, 2))
        mu, beta = options.probabilities(obs)
        assert mu.shape == (7, 2, 5) and beta.shape == (7, 2)
        np.testing.assert_allclose(mu.sum(-1), 1.0, rtol=1e-5)
        assert np.all((beta > 0) & (beta < 1))
        # Batched over envs = one env at a time.
        one = np.concatenate([options.probabilities(obs[i : i + 1])[0] for i in range(7)])
        np.testing.assert_allclose(one, mu, rtol=1e-6, atol=1e-7)
        with pytest.raises(ValueError, match=r"expected observations \[n, \*\(4, 4, 2\)\]"):
            options.probabilities(obs[:, :3])

    def test_file_round_trip_acts_identically(self, options, tmp_path):
        from opt_suite.options.network import NetworkOptionSet

        options.save(tmp_path / "net.npz")
        assert option_set_kind(tmp_path / "net.npz") == "network"
        loaded = load_option_set(tmp_path / "net.npz")
        assert isinstance(loaded, NetworkOptionSet)
        assert loaded.names == ("left", "right") and loaded.num_actions == 5
        obs = np.random.default_rng(1).uniform(size=(3, 4, 4, 2))
        for a, b in zip(loaded.probabilities(obs), options.probabilities(obs), strict=True):
            np.testing.assert_array_equal(a, b)
        again = from_bytes(to_bytes(options))
        np.testing.assert_array_equal(again.probabilities(obs)[1], options.probabilities(obs)[1])
        with pytest.raises(OptionSetError, match="holds a 'network' option set"):
            TabularOptionSet.load(tmp_path / "net.npz")

    def test_same_seed_same_network(self):
        from opt_suite.options.network import option_network

        a, b = (option_network((3,), 2, seed=7) for _ in range(2))
        for wa, wb in zip(a.get_weights(), b.get_weights(), strict=True):
            np.testing.assert_array_equal(wa, wb)

    def test_non_finite_weights_are_named(self, options):
        from opt_suite.options.network import NetworkOptionSet, option_network

        net = option_network((3,), 2, seed=0)
        weights = net.get_weights()
        weights[0][0, 0] = np.inf
        net.set_weights(weights)
        assert options.non_finite() is None
        assert NetworkOptionSet([net], 2, (3,)).non_finite() == "weights of option-0"

    def test_empty_set_and_tabulation_on_index_observations(self):
        from opt_suite.options.network import NetworkOptionSet, option_network

        empty = NetworkOptionSet.empty(4, (2,))
        mu, beta = empty.probabilities(np.zeros((3, 2)))
        assert len(empty) == 0 and mu.shape == (3, 0, 4) and beta.shape == (3, 0)
        # A network over state indices, looked up as tables by the tabular learner.
        net = NetworkOptionSet([option_network((), 3, seed=0)], 3, ())
        table = tabulate(net, 6)
        assert table.mu.shape == (1, 6, 3) and table.beta.shape == (1, 6)
        np.testing.assert_allclose(
            table.mu[0, 4], net.probabilities(np.array([4.0]))[0][0, 0], rtol=1e-6
        )


def test_bytes_are_the_file(tmp_path):
    options = _tabular()
    options.save(tmp_path / "o.npz")
    loaded = from_bytes((tmp_path / "o.npz").read_bytes())
    np.testing.assert_array_equal(loaded.mu, options.mu)
    buffer = io.BytesIO(to_bytes(options))
    assert load_option_set(buffer).names == options.names
