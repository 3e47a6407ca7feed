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

Needs pytest (the ``test`` extra); the checks themselves do not: they are
:class:`~opt_suite.testing.method_checks.MethodChecks`, and :func:`check_method` runs them from
a script.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from opt_suite.methods.base import Discovery, Method
from opt_suite.testing.method_checks import (
    MethodChecks,
    Setting,
    check_method,
    context_for,
    tiny_setting,
)

__all__ = ["MethodContract", "Setting", "check_method", "tiny_setting", "context_for"]


class MethodContract:
    """Inherit and set ``method_class`` and ``params``; every ``test_contract_*`` then checks it.

    Each test is one check of :class:`~opt_suite.testing.method_checks.MethodChecks`.

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
    def checks(cls) -> MethodChecks:
        return MethodChecks(cls.method_class, cls.params, cls().setting, cls.interaction_budget)

    @pytest.fixture(scope="class")
    @classmethod
    def contract_setting(cls, checks: MethodChecks) -> Setting:
        return checks.contract_setting

    @pytest.fixture(scope="class")
    @classmethod
    def discovery(cls, checks: MethodChecks) -> Discovery:
        return checks.discovery

    def test_contract_class_attributes(self, checks: MethodChecks) -> None:
        checks.check_class_attributes()

    def test_contract_discovery_budget_is_declared(self, checks: MethodChecks) -> None:
        checks.check_discovery_budget_is_declared()

    def test_contract_default_params_construct(self, checks: MethodChecks) -> None:
        checks.check_default_params_construct()

    def test_contract_entry_point_resolves_to_class(self, checks: MethodChecks) -> None:
        checks.check_entry_point_resolves_to_class()

    def test_contract_import_does_not_import_tensorflow(self, checks: MethodChecks) -> None:
        checks.check_import_does_not_import_tensorflow()

    def test_contract_returns_an_option_set_over_the_family_actions(
        self, checks: MethodChecks
    ) -> None:
        checks.check_returns_an_option_set_over_the_family_actions()

    def test_contract_acting_gives_distributions(self, checks: MethodChecks) -> None:
        checks.check_acting_gives_distributions()

    def test_contract_declares_at_least_the_options_it_returns(self, checks: MethodChecks) -> None:
        checks.check_declares_at_least_the_options_it_returns()

    def test_contract_option_set_file_round_trip(self, checks: MethodChecks) -> None:
        checks.check_option_set_file_round_trip()

    def test_contract_curves_are_finite_1d(self, checks: MethodChecks) -> None:
        checks.check_curves_are_finite_1d()

    def test_contract_info_is_json_serialisable(self, checks: MethodChecks) -> None:
        checks.check_info_is_json_serialisable()

    def test_contract_respects_interaction_budget(self, checks: MethodChecks) -> None:
        checks.check_respects_interaction_budget()

    def test_contract_same_seed_same_options(self, checks: MethodChecks) -> None:
        checks.check_same_seed_same_options()

    def test_contract_other_seed_runs(self, checks: MethodChecks) -> None:
        checks.check_other_seed_runs()
