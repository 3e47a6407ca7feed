"""The demonstration-source contract as plain checks: :func:`check_source` returns problems.

See :mod:`opt_suite.testing.source` for what is checked (its pytest class wraps these checks) and
:mod:`opt_suite.testing.checks` for how problems are reported. No pytest needed.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from opt_suite import registry
from opt_suite.demonstrations.base import DemonstrationError, DemonstrationSource, SourceContext
from opt_suite.families.base import TabularModelMixin, Task, TaskFamily
from opt_suite.testing.checks import Checks
from opt_suite.trajectory import Trajectory

__all__ = ["SourceChecks", "SourceSetting", "check_source", "tiny_source_setting"]


@dataclasses.dataclass(frozen=True, eq=False)
class SourceSetting:
    """A family and the train tasks a source demonstrates."""

    family: TaskFamily
    train_tasks: tuple[Task, ...]


@functools.cache
def tiny_source_setting() -> SourceSetting:
    """Four rooms on the 10x15 layout: 2 train tasks (sampled starts and goals)."""
    family_cls = registry.load(registry.FAMILIES, "fourrooms")
    family = family_cls(family_cls.Params(layout="10x15"))
    train, _ = family.make_tasks(family_cls.Variation(), (), count=3, train=2, test=1, seed=0)
    return SourceSetting(family, tuple(train))


class SourceChecks(Checks):
    """The checks of one demonstration source class with one params value on one setting.

    Args:
      source_class: the DemonstrationSource subclass under test.
      params: its Params.
      setting: the family and train tasks, or a function making them (called once, when a check
        first needs them); default :func:`tiny_source_setting`.
      trajectories_per_task, max_steps: what each collection asks for.
      registered: whether the class must be the one registered under its name.
    """

    def __init__(
        self,
        source_class: type[DemonstrationSource],
        params: Any = None,
        setting: SourceSetting | Callable[[], SourceSetting] | None = None,
        trajectories_per_task: int = 2,
        max_steps: int = 500,
        registered: bool = True,
    ) -> None:
        self.source_class = source_class
        self.params = source_class.Params() if params is None else params
        self._setting = tiny_source_setting if setting is None else setting
        self.trajectories_per_task, self.max_steps = trajectories_per_task, max_steps
        self.registered = registered

    @functools.cached_property
    def contract_setting(self) -> SourceSetting:
        """The setting the checks run on (made once)."""
        return self._setting() if callable(self._setting) else self._setting

    @functools.cached_property
    def demonstrations(self) -> list[Trajectory]:
        """One collection with seed 0 (run once)."""
        return self._collect(self.contract_setting, 0)

    def _collect(self, setting: SourceSetting, seed: int, max_steps: int | None = None) -> list:
        source = self.source_class(self.params)
        steps = self.max_steps if max_steps is None else max_steps
        context = SourceContext(
            setting.family,
            setting.train_tasks,
            self.trajectories_per_task,
            steps,
            np.random.SeedSequence(seed),
        )
        return list(source.collect(context))

    def check_class_attributes(self) -> None:
        cls = self.source_class
        assert issubclass(cls, DemonstrationSource)
        for attribute in ("name", "description", "Params"):
            assert getattr(cls, attribute, None), f"{cls.__name__}.{attribute} is not set"
        assert dataclasses.is_dataclass(cls.Params())
        assert isinstance(cls.requires, frozenset)
        if self.registered:
            assert registry.load(registry.DEMONSTRATION_SOURCES, cls.name) is cls

    def check_every_train_task_gets_its_trajectories(self) -> None:
        counts = {task.task_id: 0 for task in self.contract_setting.train_tasks}
        for trajectory in self.demonstrations:
            assert isinstance(trajectory, Trajectory)
            assert trajectory.task_id in counts, f"{trajectory.task_id!r} is not a train task"
            counts[trajectory.task_id] += 1
        assert counts == dict.fromkeys(counts, self.trajectories_per_task)

    def check_shapes_and_spaces(self) -> None:
        family = self.contract_setting.family
        for h in self.demonstrations:
            T = len(h)
            assert 1 <= T <= self.max_steps, f"{h.task_id}: {T} steps"
            assert len(h.observations) == T + 1 and h.rewards.shape == (T,)
            assert h.actions.shape == (T,) and np.issubdtype(h.actions.dtype, np.integer)
            assert np.all(np.isfinite(h.rewards))
            for obs in h.observations:
                assert family.observation_space.contains(
                    np.asarray(obs).astype(family.observation_space.dtype)
                ), f"{h.task_id}: observation outside {family.observation_space}"
            assert all(family.action_space.contains(int(a)) for a in h.actions)

    def check_same_seed_same_trajectories(self) -> None:
        np.random.seed(12345)  # the seed passed in must be the only source of randomness
        again = self._collect(self.contract_setting, 0)
        assert len(again) == len(self.demonstrations)
        for a, b in zip(self.demonstrations, again, strict=True):
            assert a.task_id == b.task_id and a.reset_seed == b.reset_seed
            np.testing.assert_array_equal(a.observations, b.observations)
            np.testing.assert_array_equal(a.actions, b.actions)
            np.testing.assert_array_equal(a.rewards, b.rewards)

    def check_each_demonstration_reaches_a_terminal_state_at_its_end(self) -> None:
        self._reach_terminal_states(self.demonstrations)

    def _reach_terminal_states(self, demonstrations: list[Trajectory]) -> None:
        family = self.contract_setting.family
        tasks = {task.task_id: task for task in self.contract_setting.train_tasks}
        for h in demonstrations:
            if isinstance(family, TabularModelMixin):
                _check_on_the_model(family, tasks[h.task_id], h)
            else:
                _check_by_replay(family, tasks[h.task_id], h)

    def check_a_goal_out_of_reach_is_an_error_naming_the_task(self) -> None:
        try:
            short = self._collect(self.contract_setting, 0, max_steps=1)
        except DemonstrationError as exc:
            ids = [task.task_id for task in self.contract_setting.train_tasks]
            assert any(task_id in str(exc) for task_id in ids), f"no task named in: {exc}"
            return
        # No error: then every demonstration did reach its goal in one step.
        assert all(len(h) == 1 for h in short)
        self._reach_terminal_states(short)


def _check_on_the_model(family: Any, task: Task, h: Trajectory) -> None:
    model = family.tabular_model(task)
    states = np.asarray(h.observations).astype(int)
    assert states[0] == model.start, f"{h.task_id}: starts at {states[0]}, not {model.start}"
    for t, (s, a, s_next) in enumerate(zip(states[:-1], h.actions, states[1:], strict=True)):
        assert not model.terminal[s], f"{h.task_id}: step {t} leaves terminal state {s}"
        possible = model.prob[s, a][model.next_state[s, a] == s_next].sum()
        assert possible > 0, f"{h.task_id}: step {t} ({s} -{a}-> {s_next}) is impossible"
    assert model.terminal[states[-1]], f"{h.task_id}: ends in non-terminal state {states[-1]}"


def _check_by_replay(family: TaskFamily, task: Task, h: Trajectory) -> None:
    assert h.reset_seed is not None, (
        f"{h.task_id}: no reset_seed, and {family.name} has no model: nothing can show that the "
        "demonstration reaches a terminal state"
    )
    env = family.make_env(task)
    try:
        obs, _ = env.reset(seed=h.reset_seed)
        np.testing.assert_array_equal(obs, h.observations[0])
        for t, action in enumerate(h.actions):
            obs, _, terminated, truncated, _ = env.step(int(action))
            np.testing.assert_array_equal(obs, h.observations[t + 1])
            last = t == len(h) - 1
            assert terminated == last, f"{h.task_id}: terminated={terminated} at step {t}"
            assert not truncated or last, f"{h.task_id}: truncated at step {t}"
    finally:
        env.close()


def check_source(
    source_class: type[DemonstrationSource],
    params: Any = None,
    setting: SourceSetting | Callable[[], SourceSetting] | None = None,
    trajectories_per_task: int = 2,
    max_steps: int = 500,
    registered: bool = True,
) -> list[str]:
    """Every problem :class:`SourceChecks` finds in ``source_class`` (empty: it passes).

    ``params`` defaults to the source's default Params, ``setting`` to
    :func:`tiny_source_setting`.
    """
    checks = SourceChecks(
        source_class, params, setting, trajectories_per_task, max_steps, registered
    )
    return checks.problems()
