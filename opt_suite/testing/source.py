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

Needs pytest (the ``test`` extra).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, ClassVar

import numpy as np
import pytest

from opt_suite import registry
from opt_suite.demonstrations.base import DemonstrationError, DemonstrationSource, SourceContext
from opt_suite.families.base import TabularModelMixin, Task, TaskFamily
from opt_suite.trajectory import Trajectory

__all__ = ["DemonstrationSourceContract", "SourceSetting", "tiny_source_setting"]


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


class DemonstrationSourceContract:
    """Inherit and set ``source_class`` and ``params``; every ``test_contract_*`` checks it.

    Attributes:
      source_class: the DemonstrationSource subclass under test.
      params: its Params (a small budget: the contract collects three times).
      trajectories_per_task, max_steps: what the contract asks for.
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

    @pytest.fixture(scope="class")
    @classmethod
    def contract_setting(cls) -> SourceSetting:
        return cls().setting()

    @pytest.fixture(scope="class")
    @classmethod
    def demonstrations(cls, contract_setting: SourceSetting) -> list[Trajectory]:
        return cls()._collect(contract_setting, 0)

    def test_contract_class_attributes(self) -> None:
        cls = self.source_class
        assert issubclass(cls, DemonstrationSource)
        for attribute in ("name", "description", "Params"):
            assert getattr(cls, attribute, None), f"{cls.__name__}.{attribute} is not set"
        assert dataclasses.is_dataclass(cls.Params())
        assert isinstance(cls.requires, frozenset)
        if self.registered:
            assert registry.load(registry.DEMONSTRATION_SOURCES, cls.name) is cls

    def test_contract_every_train_task_gets_its_trajectories(
        self, demonstrations: list[Trajectory], contract_setting: SourceSetting
    ) -> None:
        counts = {task.task_id: 0 for task in contract_setting.train_tasks}
        for trajectory in demonstrations:
            assert isinstance(trajectory, Trajectory)
            assert trajectory.task_id in counts, f"{trajectory.task_id!r} is not a train task"
            counts[trajectory.task_id] += 1
        assert counts == dict.fromkeys(counts, self.trajectories_per_task)

    def test_contract_shapes_and_spaces(
        self, demonstrations: list[Trajectory], contract_setting: SourceSetting
    ) -> None:
        family = contract_setting.family
        for h in demonstrations:
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

    def test_contract_same_seed_same_trajectories(
        self, demonstrations: list[Trajectory], contract_setting: SourceSetting
    ) -> None:
        np.random.seed(12345)  # the seed passed in must be the only source of randomness
        again = self._collect(contract_setting, 0)
        assert len(again) == len(demonstrations)
        for a, b in zip(demonstrations, again, strict=True):
            assert a.task_id == b.task_id and a.reset_seed == b.reset_seed
            np.testing.assert_array_equal(a.observations, b.observations)
            np.testing.assert_array_equal(a.actions, b.actions)
            np.testing.assert_array_equal(a.rewards, b.rewards)

    def test_contract_each_demonstration_reaches_a_terminal_state_at_its_end(
        self, demonstrations: list[Trajectory], contract_setting: SourceSetting
    ) -> None:
        family = contract_setting.family
        tasks = {task.task_id: task for task in contract_setting.train_tasks}
        for h in demonstrations:
            if isinstance(family, TabularModelMixin):
                _check_on_the_model(family, tasks[h.task_id], h)
            else:
                _check_by_replay(family, tasks[h.task_id], h)

    def test_contract_a_goal_out_of_reach_is_an_error_naming_the_task(
        self, contract_setting: SourceSetting
    ) -> None:
        try:
            short = self._collect(contract_setting, 0, max_steps=1)
        except DemonstrationError as exc:
            ids = [task.task_id for task in contract_setting.train_tasks]
            assert any(task_id in str(exc) for task_id in ids), f"no task named in: {exc}"
            return
        # No error: then every demonstration did reach its goal in one step.
        assert all(len(h) == 1 for h in short)
        self.test_contract_each_demonstration_reaches_a_terminal_state_at_its_end(
            short, contract_setting
        )


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
