"""The learner contract as plain checks: :func:`check_learner` returns a list of problems.

See :mod:`opt_suite.testing.learner` for what is checked (its pytest class wraps these checks) and
:mod:`opt_suite.testing.checks` for how problems are reported. No pytest needed.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from opt_suite import registry
from opt_suite.families.base import Task, TaskFamily
from opt_suite.learners.base import EpisodeLog, Learner, LearnerContext, LearnerRun
from opt_suite.options import OptionSet, TabularOptionSet
from opt_suite.testing.checks import Checks, raises

__all__ = ["LearnerChecks", "LearnerSetting", "check_learner", "tiny_learner_setting"]


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


class LearnerChecks(Checks):
    """The checks of one learner class with one params value on one setting.

    Args:
      learner_class: the Learner subclass under test.
      params: its Params (small budgets: the checks run the learner a few times).
      setting: the family, test tasks and option sets, or a function making them (called once,
        when a check first needs them); default :func:`tiny_learner_setting`.
      episodes, max_steps: the evaluation budget each run gets.
    """

    def __init__(
        self,
        learner_class: type[Learner],
        params: Any = None,
        setting: LearnerSetting | Callable[[], LearnerSetting] | None = None,
        episodes: int = 5,
        max_steps: int = 100,
    ) -> None:
        self.learner_class = learner_class
        self.params = learner_class.Params() if params is None else params
        self._setting = tiny_learner_setting if setting is None else setting
        self.episodes, self.max_steps = episodes, max_steps

    @functools.cached_property
    def contract_setting(self) -> LearnerSetting:
        """The setting the checks run on (made once)."""
        return self._setting() if callable(self._setting) else self._setting

    @functools.cached_property
    def logs(self) -> list[EpisodeLog]:
        """Two seeds of every task, learned in one batch (run once)."""
        return self._run(self.contract_setting, self._runs(self.contract_setting, [0, 1]))

    def _run(self, setting: LearnerSetting, runs: list[LearnerRun], options=None) -> list:
        learner = self.learner_class(self.params)
        options = setting.options if options is None else options
        return learner.run(
            LearnerContext(setting.family, runs, options, self.episodes, self.max_steps)
        )

    @staticmethod
    def _runs(setting: LearnerSetting, seeds: list[int]) -> list[LearnerRun]:
        return [
            LearnerRun(task, np.random.SeedSequence([seed, task.index]))
            for seed in seeds
            for task in setting.tasks
        ]

    def check_class_attributes(self) -> None:
        cls = self.learner_class
        assert issubclass(cls, Learner)
        for attribute in ("name", "description", "Params"):
            assert getattr(cls, attribute, None), f"{cls.__name__}.{attribute} is not set"
        assert dataclasses.is_dataclass(cls.Params())
        assert registry.load(registry.LEARNERS, cls.name) is cls

    def check_one_well_formed_log_per_run(self) -> None:
        assert len(self.logs) == 2 * len(self.contract_setting.tasks)
        for log in self.logs:
            returns, steps = np.asarray(log.returns), np.asarray(log.steps)
            frames = np.asarray(log.frames)
            assert returns.shape == steps.shape == frames.shape == (self.episodes,)
            assert np.all(np.isfinite(returns))
            assert np.all((steps >= 1) & (steps <= self.max_steps))
            assert np.all(np.diff(frames) > 0) and frames[0] >= steps[0]

    def check_same_seeds_same_numbers(self) -> None:
        np.random.seed(12345)  # the runs' seeds are the only source of randomness
        again = self._run(self.contract_setting, self._runs(self.contract_setting, [0, 1]))
        for a, b in zip(self.logs, again, strict=True):
            np.testing.assert_array_equal(a.returns, b.returns)
            np.testing.assert_array_equal(a.steps, b.steps)

    def check_results_do_not_depend_on_batching(self) -> None:
        runs = self._runs(self.contract_setting, [0, 1])
        alone = [self._run(self.contract_setting, [run])[0] for run in runs]
        reordered = self._run(self.contract_setting, runs[::-1])[::-1]
        for a, b, c in zip(self.logs, alone, reordered, strict=True):
            np.testing.assert_array_equal(a.returns, b.returns)
            np.testing.assert_array_equal(a.returns, c.returns)
            np.testing.assert_array_equal(a.steps, b.steps)

    def check_counted_usage_gives_the_same_episodes(self) -> None:
        # counts_usage: the runner calls run_with_usage instead of run, so it must not change a
        # number; without it, run_with_usage is the base class's refusal.
        learner = self.learner_class(self.params)
        runs = self._runs(self.contract_setting, [0, 1])
        context = LearnerContext(
            self.contract_setting.family,
            runs,
            self.contract_setting.options,
            self.episodes,
            self.max_steps,
        )
        if not self.learner_class.counts_usage:
            raises(
                NotImplementedError,
                lambda: learner.run_with_usage(context),
                "run_with_usage of a learner without counts_usage",
            )
            return
        pairs = learner.run_with_usage(context)
        assert len(pairs) == len(self.logs)
        for (log, usage), expected in zip(pairs, self.logs, strict=True):
            np.testing.assert_array_equal(log.returns, expected.returns)
            np.testing.assert_array_equal(log.steps, expected.steps)
            assert np.asarray(usage.steps).sum(axis=1).tolist() == np.asarray(log.steps).tolist()

    def check_primitives_only_and_empty_batch(self) -> None:
        runs = self._runs(self.contract_setting, [0])
        logs = self._run(self.contract_setting, runs, self.contract_setting.no_options)
        assert len(logs) == len(runs)
        assert all(np.asarray(log.returns).shape == (self.episodes,) for log in logs)
        assert self._run(self.contract_setting, []) == []

    def check_zero_shot_returns_are_seeded(self) -> None:
        # The untrained policy's returns (or None: not measured) depend on the run's seed alone.
        setting = self.contract_setting
        runs = self._runs(setting, [3])[:1]
        learner = self.learner_class(self.params)
        context = LearnerContext(setting.family, runs, setting.options, 2, self.max_steps)
        first = learner.zero_shot(context)
        if first is None:
            return
        assert len(first) == 1, f"zero_shot gave {len(first)} return arrays for 1 run"
        returns = np.asarray(first[0])
        assert returns.shape == (2,) and np.all(np.isfinite(returns)), returns
        again = learner.zero_shot(context)
        assert again is not None, "zero_shot measured once, then returned None"
        np.testing.assert_array_equal(returns, again[0])


def check_learner(
    learner_class: type[Learner],
    params: Any = None,
    setting: LearnerSetting | Callable[[], LearnerSetting] | None = None,
    episodes: int = 5,
    max_steps: int = 100,
) -> list[str]:
    """Every problem :class:`LearnerChecks` finds in ``learner_class`` (empty: it passes).

    ``params`` defaults to the learner's default Params, ``setting`` to
    :func:`tiny_learner_setting`.
    """
    return LearnerChecks(learner_class, params, setting, episodes, max_steps).problems()
