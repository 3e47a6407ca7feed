"""Random options: offline_options' untrained options, with the same seed and networks."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from baselines.random_options import OfflineOptionsSettings, RandomOptions, RandomOptionsParams
from opt_suite.methods.offline_options import initial_options
from opt_suite.methods.offline_options.params import Params as OfflineOptionsParams
from opt_suite.spec import SpecError, parse_spec, to_plain
from opt_suite.testing import MethodContract, context_for, tiny_setting

SMALL = OfflineOptionsSettings(hidden_sizes=(8,))


class TestRandomOptionsContract(MethodContract):
    method_class = RandomOptions
    params = RandomOptionsParams(count=2, offline_options=SMALL)


class TestKMatchedRandomOptionsContract(MethodContract):
    # Alone (validate --deep), its declared count stands in for the entry's it matches.
    method_class = RandomOptions
    params = RandomOptionsParams(count=2, offline_options=SMALL, count_of="offline-options")


@pytest.fixture(scope="module")
def found():
    params = RandomOptionsParams(count=3, offline_options=SMALL)
    return RandomOptions(params).discover(context_for(tiny_setting(), 7, 0))


def test_options_are_offline_options_initial_options_for_the_same_seed(found):
    setting = tiny_setting()
    model = setting.family.tabular_model(setting.train_tasks[0])
    theirs = OfflineOptionsParams(hidden_sizes=SMALL.hidden_sizes)
    expected = initial_options(setting.family, model, theirs, 3, np.random.SeedSequence(7))
    np.testing.assert_array_equal(found.options.mu, expected.mu)
    np.testing.assert_array_equal(found.options.beta, expected.beta)
    assert found.options.names == ("random-0", "random-1", "random-2")


def test_options_are_random_not_uniform_and_differ(found):
    mu, beta = found.options.mu, found.options.beta
    assert np.abs(mu - 1.0 / mu.shape[-1]).max() > 1e-3
    assert not np.allclose(mu[0], mu[1]) and not np.allclose(beta[0], beta[1])


def test_network_params_are_the_ones_used(found):
    wider = dataclasses.replace(SMALL, hidden_sizes=(16,))
    other = RandomOptions(RandomOptionsParams(count=3, offline_options=wider)).discover(
        context_for(tiny_setting(), 7, 0)
    )
    assert not np.allclose(other.options.mu, found.options.mu)


SPEC = """
name: random-options-params
family: {{name: fourrooms, params: {{layout: 10x15}}}}
tasks: {{count: 2, train: 1, test: 1}}
methods:
  - name: random
    method: random_options
    params: {params}
"""


def test_spec_nests_the_offline_options_params():
    spec = parse_spec(SPEC.format(params="{count: 3, offline_options: {hidden_sizes: [16, 16]}}"))
    params = spec.methods[0].params
    assert params == RandomOptionsParams(3, OfflineOptionsSettings(hidden_sizes=(16, 16)))
    with pytest.raises(SpecError, match="offline_options"):
        parse_spec(SPEC.format(params="{offline_options: {hidden: [16]}}"))


def test_its_offline_options_section_takes_offline_options_keys_defaults_and_bounds():
    # One YAML anchor serves both entries, and spec hashes hold every key: the section must accept
    # exactly offline_options' keys, with the same defaults, types and bounds.
    ours = {f.name: f for f in dataclasses.fields(OfflineOptionsSettings)}
    theirs = {f.name: f for f in dataclasses.fields(OfflineOptionsParams)}
    assert ours.keys() == theirs.keys()
    for name, field in theirs.items():
        assert ours[name].default == field.default, name
        assert ours[name].type == field.type, name
        bounds = ("ge", "gt", "le", "lt", "added_later", "replaces")
        assert [ours[name].metadata[k] for k in bounds] == [field.metadata[k] for k in bounds]
    assert to_plain(OfflineOptionsSettings()) == to_plain(OfflineOptionsParams())
    bad = {"max_epochs": 3, "epochs": 5, "hidden_sizes": ()}
    assert OfflineOptionsSettings(**bad).check() == OfflineOptionsParams(**bad).check()


def test_count_of_takes_the_matched_count_and_refuses_none(found):
    params = RandomOptionsParams(count=4, offline_options=SMALL, count_of="ours")
    context = dataclasses.replace(context_for(tiny_setting(), 7, 0), matched_count=2)
    matched = RandomOptions(params).discover(context).options
    # The first 2 of the 3 options the fixture drew with count 3: the same streams.
    np.testing.assert_array_equal(matched.mu, found.options.mu[:2])
    assert RandomOptions.count_entry(params) == ("count_of", "ours")
    with pytest.raises(ValueError, match="count_of 'ours': expected that entry's option count"):
        RandomOptions(params).discover(context_for(tiny_setting(), 7, 0))
