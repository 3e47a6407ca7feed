"""The contract every option-discovery method's tests inherit (like dm_env's EnvironmentTestMixin).

Subclass :class:`MethodContract`, set ``method_class`` and ``params`` (a tiny budget: the contract
runs ``discover`` three times), and every contract test runs for it::

    from opt_suite.testing import MethodContract

    class TestPrimitivesContract(MethodContract):
        method_class = Primitives
        params = Primitives.Params()

The setting comes from the :meth:`MethodContract.setting` hook: by default a tiny four-rooms family
(the 10x15 layout, 2 train tasks with one optimal demonstration each, :func:`tiny_setting`);
override it to test a method on another family (e.g. one with image observations), returning a
:class:`Setting`.

What it checks, for any kind of option set: the returned set is an
:class:`~opt_suite.options.OptionSet` over the family's actions with unique names; acting on the
demonstrations' observations gives probability distributions (mu [n, m, A] rows sum to 1, beta in
[0, 1]); its file round trip (``save`` -> ``load_option_set``) acts identically; curves are finite
and 1-D, info is JSON; the same seed gives the same options (whatever numpy's global state); a
method that interacts reports its env steps as ``Discovery.info["env_steps"]`` within the budget.
For tabular sets, the tables have the family's shape.

Needs pytest (the ``test`` extra).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import subprocess
import sys
from typing import Any, ClassVar

import gymnasium
import numpy as np
import pytest

from opt_suite import registry
from opt_suite.families.base import Task, TaskFamily
from opt_suite.methods.base import (
    Discovery,
    DiscoveryContext,
    Method,
    Trajectory,
    discrete_actions,
)
from opt_suite.options import OptionSet, TabularOptionSet, load_option_set

__all__ = ["MethodContract", "Setting", "tiny_setting", "context_for"]


@dataclasses.dataclass(frozen=True, eq=False)
class Setting:
    """A family, its train tasks and their demonstrations."""

    family: TaskFamily
    train_tasks: tuple[Task, ...]
    demonstrations: tuple[Trajectory, ...]

    @property
    def num_states(self) -> int:
        """S of a tabular family's observation space (``Discrete(S)``)."""
        space = self.family.observation_space
        if not isinstance(space, gymnasium.spaces.Discrete):
            raise TypeError(f"{self.family.name}: observations are {space}, not state indices")
        return int(space.n)

    @property
    def num_actions(self) -> int:
        """A, the family's number of primitive actions."""
        return discrete_actions(self.family, "MethodContract")

    def observations(self) -> np.ndarray:
        """Every observation of the demonstrations, stacked [n, ...]."""
        return np.concatenate([np.asarray(t.observations) for t in self.demonstrations])


@functools.cache
def tiny_setting() -> Setting:
    """Four rooms on the 10x15 layout: 2 train tasks (sampled starts and goals), 1 demo each."""
    from opt_suite.demonstrations import collect_demonstrations
    from opt_suite.spec.schema import DemonstrationsSpec

    family_cls = registry.load(registry.FAMILIES, "fourrooms")
    family = family_cls(family_cls.Params(layout="10x15"))
    train, _ = family.make_tasks(family_cls.Variation(), (), count=3, train=2, test=1, seed=0)
    demos = collect_demonstrations(family, train, DemonstrationsSpec(), np.random.SeedSequence(0))
    return Setting(family, tuple(train), tuple(demos))


def context_for(setting: Setting, seed: int, budget: int) -> DiscoveryContext:
    """A discovery context on ``setting`` with its own seed."""
    return DiscoveryContext(
        family=setting.family,
        train_tasks=setting.train_tasks,
        demonstrations=setting.demonstrations,
        interaction_budget=budget,
        seed=np.random.SeedSequence(seed),
    )


class MethodContract:
    """Inherit and set ``method_class`` and ``params``; every ``test_contract_*`` then checks it.

    Attributes:
      method_class: the registered Method subclass under test.
      params: its Params with a tiny budget (each discover call should take well under a second or
        two).
      interaction_budget: env steps given to methods that learn by interacting.
    """

    method_class: ClassVar[type[Method]]
    params: ClassVar[Any]
    interaction_budget: ClassVar[int] = 3000

    def setting(self) -> Setting:
        """The family, train tasks and demonstrations the contract runs on (override to change)."""
        return tiny_setting()

    @pytest.fixture(scope="class")
    @classmethod
    def contract_setting(cls) -> Setting:
        return cls().setting()

    @pytest.fixture(scope="class")
    @classmethod
    def discovery(cls, contract_setting: Setting) -> Discovery:
        method = cls.method_class(cls.params)
        return method.discover(context_for(contract_setting, 0, cls.interaction_budget))

    def test_contract_class_attributes(self) -> None:
        cls = self.method_class
        assert issubclass(cls, Method)
        for attribute in ("name", "description", "Params"):
            assert getattr(cls, attribute, None), f"{cls.__name__}.{attribute} is not set"
        assert isinstance(cls.uses_demonstrations, bool)
        assert isinstance(cls.uses_interaction, bool)

    def test_contract_default_params_construct(self) -> None:
        params = self.method_class.Params()
        assert dataclasses.is_dataclass(params)
        with pytest.raises(dataclasses.FrozenInstanceError):
            field = dataclasses.fields(params)[0].name if dataclasses.fields(params) else "x"
            setattr(params, field, None)
        assert list(getattr(params, "check", list)()) == []

    def test_contract_entry_point_resolves_to_class(self) -> None:
        assert registry.load(registry.METHODS, self.method_class.name) is self.method_class

    def test_contract_import_does_not_import_tensorflow(self) -> None:
        module = self.method_class.__module__
        code = (
            f"import sys, {module}\n"
            "heavy = [m for m in ('tensorflow', 'tf_agents', 'tf_keras') if m in sys.modules]\n"
            "print(','.join(heavy))"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
        )
        assert out.stdout.strip() == "", f"importing {module} imported {out.stdout.strip()}"

    def test_contract_returns_an_option_set_over_the_family_actions(
        self, discovery: Discovery, contract_setting: Setting
    ) -> None:
        assert isinstance(discovery, Discovery)
        options = discovery.options
        assert isinstance(options, OptionSet)
        m = len(options)
        assert options.num_actions == contract_setting.num_actions
        assert len(options.names) == m and len(set(options.names)) == m
        if isinstance(options, TabularOptionSet):
            shape = (m, contract_setting.num_states, contract_setting.num_actions)
            assert options.mu.shape == shape
            assert options.beta.shape == shape[:2]

    def test_contract_acting_gives_distributions(
        self, discovery: Discovery, contract_setting: Setting
    ) -> None:
        observations = contract_setting.observations()
        mu, beta = discovery.options.probabilities(observations)
        n, m, A = len(observations), len(discovery.options), contract_setting.num_actions
        assert mu.shape == (n, m, A) and beta.shape == (n, m)
        assert np.all(np.isfinite(mu)) and np.all(np.isfinite(beta))
        assert np.all(mu >= 0.0)
        np.testing.assert_allclose(mu.sum(axis=-1), 1.0, atol=1e-5)
        assert np.all((beta >= 0.0) & (beta <= 1.0))

    def test_contract_declares_at_least_the_options_it_returns(self, discovery: Discovery) -> None:
        # The work estimate sizes arrays from option_count: an undercount could let a spec that
        # does not fit in memory start (None: unknown, allowed).
        declared = self.method_class.option_count(self.params)
        assert declared is None or len(discovery.options) <= declared, (
            f"{self.method_class.__name__}.option_count says {declared}, discover returned "
            f"{len(discovery.options)} options"
        )

    def test_contract_option_set_file_round_trip(
        self, discovery: Discovery, contract_setting: Setting, tmp_path
    ) -> None:
        discovery.options.save(tmp_path / "options.npz")
        loaded = load_option_set(tmp_path / "options.npz")
        assert type(loaded) is type(discovery.options) and loaded.names == discovery.options.names
        observations = contract_setting.observations()
        for a, b in zip(
            loaded.probabilities(observations),
            discovery.options.probabilities(observations),
            strict=True,
        ):
            np.testing.assert_array_equal(a, b)

    def test_contract_curves_are_finite_1d(self, discovery: Discovery) -> None:
        for name, curve in discovery.curves.items():
            curve = np.asarray(curve)
            assert curve.ndim == 1, f"curve {name!r} has shape {curve.shape}"
            assert np.all(np.isfinite(curve)), f"curve {name!r} is not finite"

    def test_contract_info_is_json_serialisable(self, discovery: Discovery) -> None:
        json.dumps(dict(discovery.info))

    def test_contract_respects_interaction_budget(self, discovery: Discovery) -> None:
        steps = discovery.info.get("env_steps", 0)
        assert 0 <= steps <= self.interaction_budget
        if not self.method_class.uses_interaction:
            assert steps == 0

    def test_contract_same_seed_same_options(
        self, discovery: Discovery, contract_setting: Setting
    ) -> None:
        # Reseeding numpy's global generator must not matter: the context's seed is the only source.
        np.random.seed(12345)
        again = self.method_class(self.params).discover(
            context_for(contract_setting, 0, self.interaction_budget)
        )
        observations = contract_setting.observations()
        for a, b in zip(
            again.options.probabilities(observations),
            discovery.options.probabilities(observations),
            strict=True,
        ):
            np.testing.assert_array_equal(a, b)
        assert again.options.names == discovery.options.names

    def test_contract_other_seed_runs(
        self, discovery: Discovery, contract_setting: Setting
    ) -> None:
        # A different seed may give different options (it need not), over the same actions.
        other = self.method_class(self.params).discover(
            context_for(contract_setting, 1, self.interaction_budget)
        )
        assert other.options.num_actions == discovery.options.num_actions
