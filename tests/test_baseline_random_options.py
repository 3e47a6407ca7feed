"""Random options: offline_options' untrained options, with the same seed and networks."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from baselines.random_options import RandomOptions, RandomOptionsParams
from opt_suite.methods.offline_options import initial_options
from opt_suite.methods.offline_options.params import Params as OfflineOptionsParams
from opt_suite.spec import SpecError, parse_spec
from opt_suite.testing import MethodContract, context_for, tiny_setting

SMALL = OfflineOptionsParams(hidden_sizes=(8,))


class TestRandomOptionsContract(MethodContract):
    method_class = RandomOptions
    params = RandomOptionsParams(count=2, offline_options=SMALL)


@pytest.fixture(scope="module")
def found():
    params = RandomOptionsParams(count=3, offline_options=SMALL)
    return RandomOptions(params).discover(context_for(tiny_setting(), 7, 0))


def test_options_are_offline_options_initial_options_for_the_same_seed(found):
    setting = tiny_setting()
    model = setting.family.tabular_model(setting.train_tasks[0])
    expected = initial_options(setting.family, model, SMALL, 3, np.random.SeedSequence(7))
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
    assert params == RandomOptionsParams(3, OfflineOptionsParams(hidden_sizes=(16, 16)))
    with pytest.raises(SpecError, match="offline_options"):
        parse_spec(SPEC.format(params="{offline_options: {hidden: [16]}}"))
