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

Needs pytest (the ``test`` extra).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, ClassVar

import numpy as np
import pytest

from opt_suite import registry
from opt_suite.families.base import Task, TaskFamily
from opt_suite.learners.base import EpisodeLog, Learner, LearnerRun
from opt_suite.options import OptionSet, TabularOptionSet

__all__ = ["LearnerContract", "LearnerSetting", "tiny_learner_setting"]


@dataclasses.dataclass(frozen=True, eq=False)
class LearnerSetting:
    """A family, test tasks, an option set over its actions and an empty one."""

    family: TaskFamily
    tasks: tuple[Task, ...]
    options: OptionSet
    no_options: OptionSet


@functools.cache
def tiny_learner_setting() -> LearnerSetting:
    """Four rooms on the 10x15 layout: 2 test tasks and 2 random tabular options."""
    family_cls = registry.load(registry.FAMILIES, "fourrooms")
    family = family_cls(family_cls.Params(layout="10x15"))
    _, test = family.make_tasks(family_cls.Variation(), (), count=3, train=1, test=2, seed=0)
    S, A = int(family.observation_space.n), int(family.action_space.n)
    rng = np.random.default_rng(0)
    options = TabularOptionSet(rng.dirichlet(np.ones(A), size=(2, S)), rng.uniform(size=(2, S)))
    return LearnerSetting(family, tuple(test), options, TabularOptionSet.empty(S, A))


class LearnerContract:
    """Inherit and set ``learner_class`` and ``params``; every ``test_contract_*`` checks it.

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

    def _run(self, setting: LearnerSetting, runs: list[LearnerRun], options=None) -> list:
        learner = self.learner_class(self.params)
        options = setting.options if options is None else options
        return learner.run(setting.family, runs, options, self.episodes, self.max_steps)

    @staticmethod
    def _runs(setting: LearnerSetting, seeds: list[int]) -> list[LearnerRun]:
        return [
            LearnerRun(task, np.random.SeedSequence([seed, task.index]))
            for seed in seeds
            for task in setting.tasks
        ]

    @pytest.fixture(scope="class")
    @classmethod
    def contract_setting(cls) -> LearnerSetting:
        return cls().setting()

    @pytest.fixture(scope="class")
    @classmethod
    def logs(cls, contract_setting: LearnerSetting) -> list[EpisodeLog]:
        return cls()._run(contract_setting, cls._runs(contract_setting, [0, 1]))

    def test_contract_class_attributes(self) -> None:
        cls = self.learner_class
        assert issubclass(cls, Learner)
        for attribute in ("name", "description", "Params"):
            assert getattr(cls, attribute, None), f"{cls.__name__}.{attribute} is not set"
        assert dataclasses.is_dataclass(cls.Params())
        assert registry.load(registry.LEARNERS, cls.name) is cls

    def test_contract_one_well_formed_log_per_run(
        self, logs: list[EpisodeLog], contract_setting: LearnerSetting
    ) -> None:
        assert len(logs) == 2 * len(contract_setting.tasks)
        for log in logs:
            returns, steps = np.asarray(log.returns), np.asarray(log.steps)
            frames = np.asarray(log.frames)
            assert returns.shape == steps.shape == frames.shape == (self.episodes,)
            assert np.all(np.isfinite(returns))
            assert np.all((steps >= 1) & (steps <= self.max_steps))
            assert np.all(np.diff(frames) > 0) and frames[0] >= steps[0]

    def test_contract_same_seeds_same_numbers(
        self, logs: list[EpisodeLog], contract_setting: LearnerSetting
    ) -> None:
        np.random.seed(12345)  # the runs' seeds are the only source of randomness
        again = self._run(contract_setting, self._runs(contract_setting, [0, 1]))
        for a, b in zip(logs, again, strict=True):
            np.testing.assert_array_equal(a.returns, b.returns)
            np.testing.assert_array_equal(a.steps, b.steps)

    def test_contract_results_do_not_depend_on_batching(
        self, logs: list[EpisodeLog], contract_setting: LearnerSetting
    ) -> None:
        runs = self._runs(contract_setting, [0, 1])
        alone = [self._run(contract_setting, [run])[0] for run in runs]
        reordered = self._run(contract_setting, runs[::-1])[::-1]
        for a, b, c in zip(logs, alone, reordered, strict=True):
            np.testing.assert_array_equal(a.returns, b.returns)
            np.testing.assert_array_equal(a.returns, c.returns)
            np.testing.assert_array_equal(a.steps, b.steps)

    def test_contract_counted_usage_gives_the_same_episodes(
        self, logs: list[EpisodeLog], contract_setting: LearnerSetting
    ) -> None:
        # counts_usage: the runner calls run_with_usage instead of run, so it must not change a
        # number; without it, run_with_usage is the base class's refusal.
        learner = self.learner_class(self.params)
        runs = self._runs(contract_setting, [0, 1])
        args = (contract_setting.family, runs, contract_setting.options, self.episodes)
        if not self.learner_class.counts_usage:
            with pytest.raises(NotImplementedError):
                learner.run_with_usage(*args, self.max_steps)
            return
        pairs = learner.run_with_usage(*args, self.max_steps)
        assert len(pairs) == len(logs)
        for (log, usage), expected in zip(pairs, logs, strict=True):
            np.testing.assert_array_equal(log.returns, expected.returns)
            np.testing.assert_array_equal(log.steps, expected.steps)
            assert np.asarray(usage.steps).sum(axis=1).tolist() == np.asarray(log.steps).tolist()

    def test_contract_primitives_only_and_empty_batch(
        self, contract_setting: LearnerSetting
    ) -> None:
        runs = self._runs(contract_setting, [0])
        logs = self._run(contract_setting, runs, contract_setting.no_options)
        assert len(logs) == len(runs)
        assert all(np.asarray(log.returns).shape == (self.episodes,) for log in logs)
        assert self._run(contract_setting, []) == []

    def test_contract_zero_shot_returns_are_seeded(self, contract_setting: LearnerSetting) -> None:
        # The untrained policy's returns (or None: not measured) depend on the run's seed alone.
        (run,) = self._runs(contract_setting, [3])[:1]
        learner = self.learner_class(self.params)
        args = (contract_setting.family, run, contract_setting.options, 2, self.max_steps)
        first = learner.zero_shot(*args)
        if first is None:
            return
        assert np.asarray(first).shape == (2,) and np.all(np.isfinite(first))
        np.testing.assert_array_equal(first, learner.zero_shot(*args))
