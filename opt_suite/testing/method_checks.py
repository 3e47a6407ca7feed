"""The method contract as plain checks: :func:`check_method` returns a list of problems.

See :mod:`opt_suite.testing.method` for what is checked (its pytest class wraps these checks) and
:mod:`opt_suite.testing.checks` for how problems are reported. No pytest needed.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

from opt_suite import registry
from opt_suite.families.base import Task, TaskFamily
from opt_suite.methods.base import (
    Discovery,
    DiscoveryContext,
    Method,
    Trajectory,
    discrete_actions,
)
from opt_suite.methods.budget import DiscoveryBudget
from opt_suite.options import OptionSet, TabularOptionSet, load_option_set
from opt_suite.testing.checks import Checks, raises

__all__ = ["MethodChecks", "Setting", "check_method", "context_for", "tiny_setting"]


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


def context_for(
    setting: Setting, seed: int, budget: int, matched_count: int | None = None
) -> DiscoveryContext:
    """A discovery context on ``setting`` with its own seed (and a count to match, if given)."""
    return DiscoveryContext(
        family=setting.family,
        train_tasks=setting.train_tasks,
        demonstrations=setting.demonstrations,
        interaction_budget=budget,
        seed=np.random.SeedSequence(seed),
        matched_count=matched_count,
    )


class MethodChecks(Checks):
    """The checks of one method class with one params value on one setting.

    Args:
      method_class: the Method subclass under test.
      params: its Params (a tiny budget: the checks run ``discover`` three times).
      setting: the family, train tasks and demonstrations, or a function making them (called
        once, when a check first needs them); default :func:`tiny_setting`.
      interaction_budget: env steps given to a method that learns by interacting.
    """

    def __init__(
        self,
        method_class: type[Method],
        params: Any = None,
        setting: Setting | Callable[[], Setting] | None = None,
        interaction_budget: int = 3000,
    ) -> None:
        self.method_class = method_class
        self.params = method_class.Params() if params is None else params
        self._setting = tiny_setting if setting is None else setting
        self.interaction_budget = interaction_budget

    @functools.cached_property
    def contract_setting(self) -> Setting:
        """The setting the checks run on (made once)."""
        return self._setting() if callable(self._setting) else self._setting

    @functools.cached_property
    def discovery(self) -> Discovery:
        """``discover`` on the setting with seed 0 (run once)."""
        method = self.method_class(self.params)
        return method.discover(self._context(0))

    def _context(self, seed: int) -> DiscoveryContext:
        """The setting's context; a method that matches another entry's count gets its bound.

        The runner passes the named entry's count (``Method.count_entry``); alone, the
        method's own declared count stands in for it.
        """
        counted = self.method_class.count_entry(self.params) is not None
        matched = (self.method_class.option_count(self.params) or 1) if counted else None
        return context_for(self.contract_setting, seed, self.interaction_budget, matched)

    def check_class_attributes(self) -> None:
        cls = self.method_class
        assert issubclass(cls, Method)
        for attribute in ("name", "description", "Params"):
            assert getattr(cls, attribute, None), f"{cls.__name__}.{attribute} is not set"

    def check_discovery_budget_is_declared(self) -> None:
        # The plan keys the discovery cell by it: what it reads must be a plain yes or no.
        declared = self.method_class.discovery_budget(self.params)
        assert isinstance(declared, DiscoveryBudget), f"discovery_budget returned {declared!r}"
        assert isinstance(declared.demonstrations, bool), declared
        steps = declared.env_steps
        assert steps is None or (isinstance(steps, int) and steps >= 0), declared

    def check_default_params_construct(self) -> None:
        params = self.method_class.Params()
        assert dataclasses.is_dataclass(params)
        field = dataclasses.fields(params)[0].name if dataclasses.fields(params) else "x"
        raises(
            dataclasses.FrozenInstanceError,
            lambda: setattr(params, field, None),
            f"{self.method_class.__name__}.Params is not frozen",
        )
        assert list(getattr(params, "check", list)()) == []

    def check_entry_point_resolves_to_class(self) -> None:
        assert registry.load(registry.METHODS, self.method_class.name) is self.method_class

    def check_import_does_not_import_tensorflow(self) -> None:
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

    def check_returns_an_option_set_over_the_family_actions(self) -> None:
        assert isinstance(self.discovery, Discovery)
        options = self.discovery.options
        assert isinstance(options, OptionSet)
        m = len(options)
        assert options.num_actions == self.contract_setting.num_actions
        assert len(options.names) == m and len(set(options.names)) == m
        if isinstance(options, TabularOptionSet):
            shape = (m, self.contract_setting.num_states, self.contract_setting.num_actions)
            assert options.mu.shape == shape
            assert options.beta.shape == shape[:2]

    def check_acting_gives_distributions(self) -> None:
        observations = self.contract_setting.observations()
        mu, beta = self.discovery.options.probabilities(observations)
        n, m, A = len(observations), len(self.discovery.options), self.contract_setting.num_actions
        assert mu.shape == (n, m, A) and beta.shape == (n, m)
        assert np.all(np.isfinite(mu)) and np.all(np.isfinite(beta))
        assert np.all(mu >= 0.0)
        np.testing.assert_allclose(mu.sum(axis=-1), 1.0, atol=1e-5)
        assert np.all((beta >= 0.0) & (beta <= 1.0))

    def check_declares_at_least_the_options_it_returns(self) -> None:
        # The work estimate sizes arrays from option_count: an undercount could let a spec that
        # does not fit in memory start (None: unknown, allowed). A count that is no count (a
        # bool, a negative or fractional number, text) contradicts any option set.
        name = self.method_class.__name__
        declared = self.method_class.option_count(self.params)
        if declared is None:
            return
        assert isinstance(declared, int | np.integer) and not isinstance(declared, bool), (
            f"{name}.option_count says {declared!r}, expected a whole number or None"
        )
        assert declared >= 0, f"{name}.option_count says {declared}, a negative count"
        options = self.discovery.options
        returned = {len(options), len(options.names)}
        if isinstance(options, TabularOptionSet):
            returned |= {options.mu.shape[0], options.beta.shape[0]}
        assert max(returned) <= declared, (
            f"{name}.option_count says {declared}, discover returned {max(returned)} options"
        )

    def check_option_set_file_round_trip(self) -> None:
        with tempfile.TemporaryDirectory() as folder:
            self.discovery.options.save(Path(folder) / "options.npz")
            loaded = load_option_set(Path(folder) / "options.npz")
        assert (
            type(loaded) is type(self.discovery.options)
            and loaded.names == self.discovery.options.names
        )
        observations = self.contract_setting.observations()
        for a, b in zip(
            loaded.probabilities(observations),
            self.discovery.options.probabilities(observations),
            strict=True,
        ):
            np.testing.assert_array_equal(a, b)

    def check_curves_are_finite_1d(self) -> None:
        for name, curve in self.discovery.curves.items():
            curve = np.asarray(curve)
            assert curve.ndim == 1, f"curve {name!r} has shape {curve.shape}"
            assert np.all(np.isfinite(curve)), f"curve {name!r} is not finite"

    def check_info_is_json_serialisable(self) -> None:
        json.dumps(dict(self.discovery.info))

    def check_respects_interaction_budget(self) -> None:
        steps = self.discovery.info.get("env_steps", 0)
        assert 0 <= steps <= self.interaction_budget
        if not self.method_class.discovery_budget(self.params).interacts:
            assert steps == 0

    def check_same_seed_same_options(self) -> None:
        # Reseeding numpy's global generator must not matter: the context's seed is the only source.
        np.random.seed(12345)
        again = self.method_class(self.params).discover(self._context(0))
        observations = self.contract_setting.observations()
        for a, b in zip(
            again.options.probabilities(observations),
            self.discovery.options.probabilities(observations),
            strict=True,
        ):
            np.testing.assert_array_equal(a, b)
        assert again.options.names == self.discovery.options.names

    def check_other_seed_runs(self) -> None:
        # A different seed may give different options (it need not), over the same actions.
        other = self.method_class(self.params).discover(self._context(1))
        assert other.options.num_actions == self.discovery.options.num_actions


def check_method(
    method_class: type[Method],
    params: Any = None,
    setting: Setting | Callable[[], Setting] | None = None,
    interaction_budget: int = 3000,
) -> list[str]:
    """Every problem :class:`MethodChecks` finds in ``method_class`` (empty: it passes).

    ``params`` defaults to the method's default Params, ``setting`` to :func:`tiny_setting`.
    """
    return MethodChecks(method_class, params, setting, interaction_budget).problems()
