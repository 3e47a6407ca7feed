"""A cell of the plan and the plan: what the planner (``runner/plan.py``) makes, every stage reads.

On their own, below both the planner and the stage objects (``runner/stage_kinds.py``), so that the
planner can call the stages and the stages can name the cells they hash without an import circle.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from opt_suite.families.base import Task
from opt_suite.stages import Stage

__all__ = ["Cell", "Plan"]


@dataclasses.dataclass(frozen=True, eq=False)
class Cell:
    """One unit of work.

    Attributes:
      cell_id: content hash of ``inputs``.
      stage: what the cell computes.
      seed: seed index.
      method: the method entry name (None for demonstrations and references).
      position: the entry's position in ``spec.methods`` (-1 for demonstrations and references).
      deps: ids of the cells whose outputs this one reads.
      inputs: the plain (JSON-able) data hashed into ``cell_id``.
      task: the test task's position among the seed's (evaluation and references cells), else None.
    """

    cell_id: str
    stage: Stage
    seed: int
    method: str | None
    position: int
    deps: tuple[str, ...]
    inputs: dict[str, Any]
    task: int | None = None

    @property
    def kind(self) -> str:
        """The stage's name, as the store's ``kind`` column holds it."""
        return self.stage.value

    @property
    def label(self) -> str:
        """Name used in every message, e.g. ``evaluation of 'ours', seed 2, test task 3``."""
        who = f" of {self.method!r}" if self.method is not None else ""
        where = f", test task {self.task}" if self.task is not None else ""
        return f"{self.kind}{who}, seed {self.seed}{where}"


@dataclasses.dataclass(frozen=True, eq=False)
class Plan:
    """Every cell of a run, in a dependency-respecting order, plus the tasks they use.

    Attributes:
      cells: the cells.
      train_tasks: the train tasks (shared by every seed).
      test_tasks: each planned seed's test tasks (the same tuple for every seed unless
        ``tasks.test_per_seed``: runner/task_draws.py).
    """

    cells: tuple[Cell, ...]
    train_tasks: tuple[Task, ...]
    test_tasks: Mapping[int, tuple[Task, ...]]

    def by_id(self) -> dict[str, Cell]:
        """Cells keyed by id."""
        return {c.cell_id: c for c in self.cells}

    def test_task(self, cell: Cell) -> Task:
        """The test task evaluation ``cell`` learns on."""
        assert cell.task is not None, cell.label
        return self.test_tasks[cell.seed][cell.task]
