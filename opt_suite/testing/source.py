"""The contract every demonstration source's tests inherit.

Subclass :class:`DemonstrationSourceContract`, set ``source_class`` and ``params``, and every
contract test runs for it::

    from opt_suite.testing import DemonstrationSourceContract

    class TestOptimalContract(DemonstrationSourceContract):
        source_class = OptimalExpert
        params = OptimalExpert.Params()

The setting comes from the :meth:`DemonstrationSourceContract.setting` hook: by default 2 train
tasks of a tiny four-rooms family (:func:`tiny_source_setting`); override it for a source of
another family (e.g. :mod:`opt_suite.testing.image_family`), returning a :class:`SourceSetting`.

What it checks: ``trajectories_per_task`` trajectories for every train task, each carrying its
task's id; shapes (T + 1 observations in the family's observation space, T actions in its action
space, T finite rewards, T >= 1); the same seed gives the same trajectories whatever numpy's global
state; and **each demonstration reaches a terminal state**, and only at its end — checked on the
exact model when the family has one (every transition possible, the last state terminal and no
earlier one), else by replaying its actions from its ``reset_seed`` in the task's env (which must
reproduce its observations and terminate exactly at its last step). A source that cannot reach the
goal within ``max_steps`` must say so: with ``max_steps = 1`` it raises ``DemonstrationError``
naming the task, unless every goal is one step away.

Needs pytest (the ``test`` extra); the checks themselves do not: they are
:class:`~opt_suite.testing.source_checks.SourceChecks`, and :func:`check_source` runs them
from a script.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from opt_suite.demonstrations.base import DemonstrationSource
from opt_suite.testing.source_checks import (
    SourceChecks,
    SourceSetting,
    check_source,
    tiny_source_setting,
)
from opt_suite.trajectory import Trajectory

__all__ = ["DemonstrationSourceContract", "SourceSetting", "check_source", "tiny_source_setting"]


class DemonstrationSourceContract:
    """Inherit and set ``source_class`` and ``params``; every ``test_contract_*`` checks it.

    Each test is one check of :class:`~opt_suite.testing.source_checks.SourceChecks`.

    Attributes:
      source_class: the DemonstrationSource subclass under test.
      params: its Params.
      trajectories_per_task, max_steps: what each contract collection asks for.
      registered: whether the class must be the one registered under its name (set False only
        for a source that is deliberately not an entry point, like the testing image family's).
    """

    source_class: ClassVar[type[DemonstrationSource]]
    params: ClassVar[Any]
    trajectories_per_task: ClassVar[int] = 2
    max_steps: ClassVar[int] = 500
    registered: ClassVar[bool] = True

    def setting(self) -> SourceSetting:
        """The family and train tasks the contract runs on (override to change)."""
        return tiny_source_setting()

    @pytest.fixture(scope="class")
    @classmethod
    def checks(cls) -> SourceChecks:
        return SourceChecks(
            cls.source_class,
            cls.params,
            cls().setting,
            cls.trajectories_per_task,
            cls.max_steps,
            cls.registered,
        )

    @pytest.fixture(scope="class")
    @classmethod
    def contract_setting(cls, checks: SourceChecks) -> SourceSetting:
        return checks.contract_setting

    @pytest.fixture(scope="class")
    @classmethod
    def demonstrations(cls, checks: SourceChecks) -> list[Trajectory]:
        return checks.demonstrations

    def test_contract_class_attributes(self, checks: SourceChecks) -> None:
        checks.check_class_attributes()

    def test_contract_every_train_task_gets_its_trajectories(self, checks: SourceChecks) -> None:
        checks.check_every_train_task_gets_its_trajectories()

    def test_contract_shapes_and_spaces(self, checks: SourceChecks) -> None:
        checks.check_shapes_and_spaces()

    def test_contract_same_seed_same_trajectories(self, checks: SourceChecks) -> None:
        checks.check_same_seed_same_trajectories()

    def test_contract_each_demonstration_reaches_a_terminal_state_at_its_end(
        self, checks: SourceChecks
    ) -> None:
        checks.check_each_demonstration_reaches_a_terminal_state_at_its_end()

    def test_contract_a_goal_out_of_reach_is_an_error_naming_the_task(
        self, checks: SourceChecks
    ) -> None:
        checks.check_a_goal_out_of_reach_is_an_error_naming_the_task()
