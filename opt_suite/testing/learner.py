"""The contract every test-time learner's tests inherit.

Subclass :class:`LearnerContract`, set ``learner_class`` and ``params`` (small budgets: the contract
runs the learner a few times), and every contract test runs for it::

    from opt_suite.testing import LearnerContract

    class TestSMDPQLearningContract(LearnerContract):
        learner_class = SMDPQLearning
        params = SMDPQLearning.Params()

The setting comes from the :meth:`LearnerContract.setting` hook: by default two test tasks of a
tiny four-rooms family with two untrained option networks tabulated as a
:class:`~opt_suite.options.TabularOptionSet`; override it (returning a :class:`LearnerSetting`) for
a learner of another kind of family.

What it checks: one log per run, each with ``episodes`` finite returns, positive step counts of at
most ``max_steps``, and cumulative frames; the same seeds give the same numbers (whatever numpy's
global state); a run's numbers do not depend on the batch it is in (alone, or after another run);
an empty option set (primitives only) works; an empty batch gives no logs.

Needs pytest (the ``test`` extra); the checks themselves do not: they are
:class:`~opt_suite.testing.learner_checks.LearnerChecks`, and :func:`check_learner` runs them
from a script.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from opt_suite.learners.base import EpisodeLog, Learner
from opt_suite.testing.learner_checks import (
    LearnerChecks,
    LearnerSetting,
    check_learner,
    tiny_learner_setting,
)

__all__ = ["LearnerContract", "LearnerSetting", "check_learner", "tiny_learner_setting"]


class LearnerContract:
    """Inherit and set ``learner_class`` and ``params``; every ``test_contract_*`` checks it.

    Each test is one check of :class:`~opt_suite.testing.learner_checks.LearnerChecks`.

    Attributes:
      learner_class: the registered Learner subclass under test.
      params: its Params (small budgets).
      episodes, max_steps: the evaluation budget each contract run gets.
    """

    learner_class: ClassVar[type[Learner]]
    params: ClassVar[Any]
    episodes: ClassVar[int] = 5
    max_steps: ClassVar[int] = 100

    def setting(self) -> LearnerSetting:
        """The family, tasks and option sets the contract runs on (override to change)."""
        return tiny_learner_setting()

    @pytest.fixture(scope="class")
    @classmethod
    def checks(cls) -> LearnerChecks:
        return LearnerChecks(
            cls.learner_class, cls.params, cls().setting, cls.episodes, cls.max_steps
        )

    @pytest.fixture(scope="class")
    @classmethod
    def contract_setting(cls, checks: LearnerChecks) -> LearnerSetting:
        return checks.contract_setting

    @pytest.fixture(scope="class")
    @classmethod
    def logs(cls, checks: LearnerChecks) -> list[EpisodeLog]:
        return checks.logs

    def test_contract_class_attributes(self, checks: LearnerChecks) -> None:
        checks.check_class_attributes()

    def test_contract_one_well_formed_log_per_run(self, checks: LearnerChecks) -> None:
        checks.check_one_well_formed_log_per_run()

    def test_contract_same_seeds_same_numbers(self, checks: LearnerChecks) -> None:
        checks.check_same_seeds_same_numbers()

    def test_contract_results_do_not_depend_on_batching(self, checks: LearnerChecks) -> None:
        checks.check_results_do_not_depend_on_batching()

    def test_contract_counted_usage_gives_the_same_episodes(self, checks: LearnerChecks) -> None:
        checks.check_counted_usage_gives_the_same_episodes()

    def test_contract_primitives_only_and_empty_batch(self, checks: LearnerChecks) -> None:
        checks.check_primitives_only_and_empty_batch()

    def test_contract_zero_shot_returns_are_seeded(self, checks: LearnerChecks) -> None:
        checks.check_zero_shot_returns_are_seeded()
