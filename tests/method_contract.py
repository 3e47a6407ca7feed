"""The contract every option-discovery method's tests inherit (like dm_env's EnvironmentTestMixin).

Subclass :class:`MethodContract` in ``tests/test_<method>.py``, set ``method_class`` and ``params``
(a tiny budget: the contract runs ``discover`` three times), and every contract test runs for it::

    class TestPrimitivesContract(MethodContract):
        method_class = Primitives
        params = Primitives.Params()

The setting is a tiny four-rooms family (the 10x15 layout, 2 train tasks with one expert
demonstration each), built once per session and shared by every method's contract.

Convention checked here: a method that interacts reports the env steps it spent as
``Discovery.info["env_steps"]``.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import subprocess
import sys
from typing import Any, ClassVar

import numpy as np
import pytest

from opt_suite import registry
from opt_suite.families.base import Task, TaskFamily
from opt_suite.methods.base import Discovery, DiscoveryContext, Method, TabularOptionSet, Trajectory

__all__ = ["MethodContract", "Setting", "tiny_setting", "context_for"]


@dataclasses.dataclass(frozen=True, eq=False)
class Setting:
    """A family, its train tasks and their demonstrations."""

    family: TaskFamily
    train_tasks: tuple[Task, ...]
    demonstrations: tuple[Trajectory, ...]

    @property
    def num_states(self) -> int:
        return self.family.tabular_model(self.train_tasks[0]).num_states

    @property
    def num_actions(self) -> int:
        return self.family.tabular_model(self.train_tasks[0]).num_actions


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

    @pytest.fixture(scope="class")
    @classmethod
    def setting(cls) -> Setting:
        return tiny_setting()

    @pytest.fixture(scope="class")
    @classmethod
    def discovery(cls, setting: Setting) -> Discovery:
        method = cls.method_class(cls.params)
        return method.discover(context_for(setting, 0, cls.interaction_budget))

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

    def test_contract_returns_tabular_option_set_of_family_shape(
        self, discovery: Discovery, setting: Setting
    ) -> None:
        assert isinstance(discovery, Discovery)
        options = discovery.options
        assert isinstance(options, TabularOptionSet)
        m = len(options)
        assert options.mu.shape == (m, setting.num_states, setting.num_actions)
        assert options.beta.shape == (m, setting.num_states)
        assert len(options.names) == m and len(set(options.names)) == m

    def test_contract_option_tables_are_distributions(self, discovery: Discovery) -> None:
        mu, beta = discovery.options.mu, discovery.options.beta
        assert np.all(np.isfinite(mu)) and np.all(np.isfinite(beta))
        assert np.all(mu >= 0.0)
        np.testing.assert_allclose(mu.sum(axis=-1), 1.0, atol=1e-6)
        assert np.all((beta >= 0.0) & (beta <= 1.0))

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

    def test_contract_same_seed_same_options(self, discovery: Discovery, setting: Setting) -> None:
        # Reseeding numpy's global generator must not matter: the context's seed is the only source.
        np.random.seed(12345)
        again = self.method_class(self.params).discover(
            context_for(setting, 0, self.interaction_budget)
        )
        np.testing.assert_array_equal(again.options.mu, discovery.options.mu)
        np.testing.assert_array_equal(again.options.beta, discovery.options.beta)
        assert again.options.names == discovery.options.names

    def test_contract_other_seed_runs(self, discovery: Discovery, setting: Setting) -> None:
        # A different seed may give different options (it need not), but the same shapes.
        other = self.method_class(self.params).discover(
            context_for(setting, 1, self.interaction_budget)
        )
        assert other.options.mu.shape[1:] == discovery.options.mu.shape[1:]
        assert other.options.beta.shape[1:] == discovery.options.beta.shape[1:]
