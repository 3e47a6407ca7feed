"""Which tasks a seed trains on and is tested on: the one place a spec's ``tasks`` are drawn.

The train tasks are always shared by every seed (the demonstrations are drawn on them). The test
tasks are shared too by default: ``family.make_tasks`` samples ``train + test`` tasks from
``tasks.seed`` once, and every seed learns on the same test tasks. Then an interval over seeds
says "rerun these tasks with new seeds", and the interval over tasks resamples the same few tasks.

With ``tasks.test_per_seed`` each seed draws its own ``test`` tasks from the family's variation
(``family.sample_test_tasks``: the train distribution, unless the variation holds a region out
for the test tasks, as four rooms' ``held_out_room``), from a stream of its own
(``seeding.task_draw_seed``), so the k-th test task of seed 0 and of seed 1 are two independent
draws. A seed's runs then differ from another seed's by the seed *and* the
tasks, and every interval of the report (over seeds, over task slots, over (seed, task) pairs)
covers the choice of test tasks as well (the issue-25 protocol: "so the task interval means
something"). Every method entry of a seed still learns on the same tasks with the same learner
seed, so paired comparisons stay paired.

Listed tasks (``tasks.list``) may only be train tasks then (spec/rules.py refuses more): a drawn
test task is sampled by definition.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

from opt_suite.families.base import Task
from opt_suite.runner.seeding import task_draw_seed

if TYPE_CHECKING:
    from opt_suite.families.base import TaskFamily
    from opt_suite.spec.schema import TasksSpec

__all__ = ["SpecTasks", "draw_tasks"]


@dataclasses.dataclass(frozen=True)
class SpecTasks:
    """A spec's train tasks and every seed's test tasks.

    Attributes:
      family: the built family (it samples the per-seed draws).
      tasks: the spec's ``tasks`` section.
      train: the shared train tasks.
      shared_test: the test tasks every seed uses unless ``tasks.test_per_seed`` is set.
    """

    family: TaskFamily
    tasks: TasksSpec
    train: tuple[Task, ...]
    shared_test: tuple[Task, ...]

    @property
    def per_seed(self) -> bool:
        """Whether each seed has test tasks of its own."""
        return bool(self.tasks.test_per_seed)

    def test(self, seed: int) -> tuple[Task, ...]:
        """The test tasks of seed index ``seed`` (a pure function of the spec and ``seed``)."""
        if not self.per_seed:
            return self.shared_test
        rng = np.random.default_rng(task_draw_seed(self.tasks.seed, seed))
        drawn = self.family.sample_test_tasks(self.tasks.vary, self.tasks.test, rng)
        prefix = self.family.instance_name
        return tuple(
            Task(f"{prefix}/seed{seed}/test/{i}", "test", i, params)
            for i, params in enumerate(drawn)
        )


def draw_tasks(family: TaskFamily, tasks: TasksSpec) -> SpecTasks:
    """The train tasks and test tasks of a spec's ``tasks`` section, for ``family``."""
    t = tasks
    train, test = family.make_tasks(t.vary, t.list, t.count, t.train, t.test, t.seed)
    return SpecTasks(family, t, tuple(train), tuple(test))
