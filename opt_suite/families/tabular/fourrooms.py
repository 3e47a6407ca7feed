"""Four rooms (Sutton, Precup & Singh 1999): navigate from a start cell to a goal cell.

The paper's setting (Garcia, Nota & Thomas 2020, Sec. 5.1) is the default: the ``paper-40x40`` map,
the intended move with probability 0.9 and each other direction with probability 0.1 / 3, reward -1
per step and +10 on reaching the goal, random start and goal per task. The option-critic setting
(Bacon et al. 2017) is ``layout: sutton-13x13, dynamics: random-neighbour, step_reward: 0,
goal_reward: 1`` with the goal in the east hallway (``goal_region: east-hallway``), later moved to a
random cell of the south-east room (``goal_region: south-east``). A held-out goal room
(``held_out_room: south-east``): train goals in the three other rooms, test goals in that one,
every start outside it, so the test tasks need a policy the demonstrations never show.

States are the free cells in row-major order (:meth:`FourRooms.state_of`,
:meth:`FourRooms.cell_of`, ``model.cells``); cells are ``(row, col)`` with row 0 at the top.
Layouts: :mod:`.layouts`; the exact transition tables: :mod:`.grid_dynamics`.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Literal, TypeAlias

import gymnasium
import numpy as np

from opt_suite.families.base import (
    TabularModel,
    TabularModelMixin,
    Task,
    TaskFamily,
)
from opt_suite.families.tabular import (  # its parent registers the ids
    grid_dynamics,
    layouts,
    task_cells,
)
from opt_suite.families.tabular.hallway_options import hallway_options
from opt_suite.families.tabular.task import (
    AGENT,
    FREE,
    GOAL,
    WALL,
    TabularEnv,
    checked_task,
    goal_model,
    make_registered_env,
    raise_problems,
)
from opt_suite.options import TabularOptionSet
from opt_suite.params import param

__all__ = ["FourRooms", "FourRoomsEnv", "Params", "Variation", "TaskParams"]

LayoutName = Literal["paper-40x40", "paper-40x40-wide", "sutton-13x13", "10x15"]
Room = Literal["north-west", "north-east", "south-west", "south-east"]  # layouts.ROOMS
Region = Literal[
    "anywhere",
    "north-west",
    "north-east",
    "south-west",
    "south-east",
    "north-hallway",
    "east-hallway",
    "south-hallway",
    "west-hallway",
]
Cell = tuple[int, int]


@dataclasses.dataclass(frozen=True)
class Params:
    """Family-wide settings (spec key ``family.params``)."""

    layout: LayoutName = param("paper-40x40", doc="map (see opt_suite.families.tabular.layouts)")
    dynamics: Literal["slip", "random-neighbour"] = param(
        "slip",
        doc="'slip': the paper's (intended move w.p. 1-slip, else another direction uniformly); "
        "'random-neighbour': option-critic's (w.p. fail_prob the move fails and the agent lands "
        "on a random free neighbour)",
    )
    slip: float = param(0.1, doc="probability of moving in another direction ('slip')", ge=0, lt=1)
    fail_prob: float = param(
        1 / 3, doc="probability of a random displacement ('random-neighbour')", ge=0, lt=1
    )
    step_reward: float = param(-1.0, doc="reward of every step that does not reach the goal")
    goal_reward: float = param(10.0, doc="reward of the step that reaches the goal (instead)")
    max_episode_steps: int = param(
        1000,
        doc="episodes are truncated after this many steps (gymnasium's TimeLimit)",
        ge=1,
        le=1_000_000,
    )


@dataclasses.dataclass(frozen=True)
class Variation:
    """How tasks are sampled (spec key ``tasks.vary``): start and goal, each fixed or from a region.

    A region is ``anywhere``, a room (``north-west``, ...) or a hallway (``east-hallway``, ...). The
    goal is drawn first, then the start among the region's other cells (start != goal).

    ``held_out_room`` splits the distribution: train goals uniformly from the three other rooms,
    test goals from the held-out room, starts (train and test) from ``start_region`` outside it.
    The demonstrators' policy then never leads into the test goals' room, so a method that only
    imitates it has nothing to transfer, while options that reach every room (the hallway options)
    can help: a family where imitation is not predicted to win (issue 35).
    """

    start: Cell | None = param(None, doc="fixed start cell (row, col); null: from start_region")
    start_region: Region = param("anywhere", doc="where random starts are drawn (uniformly)")
    goal: Cell | None = param(None, doc="fixed goal cell (row, col); null: from goal_region")
    goal_region: Region = param("anywhere", doc="where random goals are drawn (uniformly)")
    held_out_room: Room | None = param(
        None,
        doc="a room whose goals only test tasks get: train goals from the three other rooms, "
        "test goals from this one, every start outside it; null: one distribution for both",
        added_later=True,
    )

    def check(self) -> list[tuple[str, str]]:
        """Cross-field rules: a fixed cell excludes a region; fixed start and goal must differ.

        A held-out room decides the goals itself, and starts must be able to lie outside it.
        """
        problems = []
        for key in ("start", "goal"):
            if getattr(self, key) is not None and getattr(self, f"{key}_region") != "anywhere":
                problems.append((f"{key}_region", f"give either {key} or {key}_region, not both"))
        if self.start is not None and self.start == self.goal:
            problems.append(("goal", f"start and goal are the same cell {self.goal}"))
        if self.held_out_room is not None:
            problems += task_cells.held_out_problems(
                self.held_out_room, self.goal, self.goal_region, self.start_region
            )
        return problems


@dataclasses.dataclass(frozen=True)
class TaskParams:
    """One task (spec key ``tasks.list`` items): its start and goal cells, ``(row, col)``."""

    start: Cell = param(doc="start cell (row, col)")
    goal: Cell = param(doc="goal cell (row, col); the only terminal state")


@functools.cache
def _states(layout: str) -> tuple[np.ndarray, np.ndarray]:
    cells, index = grid_dynamics.states_of(layouts.get(layout).walls)
    cells.flags.writeable = index.flags.writeable = False
    return cells, index


@functools.lru_cache(maxsize=32)
def _dynamics(layout: str, dynamics: str, p: float) -> tuple[np.ndarray, np.ndarray]:
    """The reward-independent transition table, built once per (layout, dynamics, probability)."""
    walls = layouts.get(layout).walls
    table = grid_dynamics.slip_table if dynamics == "slip" else grid_dynamics.random_neighbour_table
    next_state, prob = table(walls, p)
    next_state.flags.writeable = prob.flags.writeable = False
    return next_state, prob


@functools.cache
def _hallway_options(layout: str) -> TabularOptionSet:
    options = hallway_options(layouts.get(layout).walls)
    for table in (options.mu, options.beta, options.initiation_table):
        if table is not None:
            table.flags.writeable = False  # shared by every caller (cached)
    return options


class FourRooms(TabularModelMixin, TaskFamily):
    """The four-rooms task family; see the module docstring."""

    name = "fourrooms"
    description = "four-rooms grid navigation (paper 40x40, Sutton 13x13, 10x15), random start/goal"
    env_id = "opt_suite/FourRooms-v0"
    Params: TypeAlias = Params
    Variation: TypeAlias = Variation
    TaskParams: TypeAlias = TaskParams

    def __init__(self, params: Params | None = None) -> None:
        params = Params() if params is None else params
        super().__init__(params)
        self.layout = layouts.get(params.layout)
        self.cells, self._index = _states(params.layout)

    @property
    def observation_space(self) -> gymnasium.spaces.Discrete:
        """``Discrete(S)``: the index of the agent's free cell (row-major)."""
        return gymnasium.spaces.Discrete(len(self.cells))

    @property
    def action_space(self) -> gymnasium.spaces.Discrete:
        """``Discrete(4)``: up, down, left, right."""
        return gymnasium.spaces.Discrete(len(grid_dynamics.MOVES))

    @property
    def instance_name(self) -> str:
        """``fourrooms-<rows>x<cols>``, e.g. ``fourrooms-40x40``."""
        return f"{self.name}-{self.layout.tag}"

    def state_of(self, cell: Cell) -> int:
        """The state index of a free cell; ``ValueError`` for walls and cells off the map."""
        problem = self._cell_problem(cell)
        if problem:
            raise ValueError(problem)
        return int(self._index[tuple(cell)])

    def cell_of(self, state: int) -> Cell:
        """The ``(row, col)`` of a state index."""
        row, col = self.cells[state]
        return int(row), int(col)

    def check_variation(self, variation: Variation) -> list[tuple[str, str]]:
        """Problems with a Variation on this layout (fixed cells in walls or off the map)."""
        problems = list(variation.check())
        for key in ("start", "goal"):
            cell = getattr(variation, key)
            if cell is not None and self._cell_problem(cell):
                problems.append((key, self._cell_problem(cell)))
        held_out = variation.held_out_room
        if held_out is not None and variation.start is not None and not problems:
            if task_cells.in_room(self.layout, np.array([variation.start]), held_out)[0]:
                problems.append(
                    (
                        "start",
                        f"cell {tuple(variation.start)} is in the held-out room {held_out!r} "
                        "(expected a start outside it)",
                    )
                )
        return problems

    def sample_tasks(self, variation: Variation, count: int, rng: np.random.Generator) -> list[Any]:
        """Goal uniformly from its region (or fixed), then start uniformly among the other cells.

        With a held-out room: the goal from the three other rooms, the start outside the room.
        """
        return self._sample(variation, count, rng, test=False)

    def sample_test_tasks(
        self, variation: Variation, count: int, rng: np.random.Generator
    ) -> list[Any]:
        """Test tasks: with a held-out room, goals from it and starts outside it; else as train."""
        return self._sample(variation, count, rng, test=True)

    def holds_test_tasks_out(self, variation: Any) -> bool:
        """With a held-out room, test tasks are drawn apart (:meth:`TaskFamily.make_tasks`)."""
        return getattr(variation, "held_out_room", None) is not None

    def _sample(
        self, variation: Variation, count: int, rng: np.random.Generator, test: bool
    ) -> list[TaskParams]:
        raise_problems(self.check_variation(variation), prefix="tasks.vary.")
        v, held_out = variation, variation.held_out_room
        goals = task_cells.goal_cells(self.layout, v.goal, v.goal_region, held_out, test)
        starts = task_cells.start_cells(self.layout, v.start, v.start_region, held_out)
        return [TaskParams(*pair) for pair in task_cells.draw(goals, starts, count, rng)]

    def default_task(self) -> TaskParams:
        """Start in the first free cell (top-left), goal in the last one (bottom-right)."""
        first, last = self.cells[0], self.cells[-1]
        return TaskParams((int(first[0]), int(first[1])), (int(last[0]), int(last[1])))

    def check_task(self, task_params: TaskParams) -> list[tuple[str, str]]:
        """Start and goal must be distinct free cells of the map."""
        problems = [
            (key, self._cell_problem(getattr(task_params, key)))
            for key in ("start", "goal")
            if self._cell_problem(getattr(task_params, key))
        ]
        if not problems and tuple(task_params.start) == tuple(task_params.goal):
            problems.append(("goal", f"start and goal are the same cell {task_params.goal}"))
        return problems

    def tabular_model(self, task: Task | TaskParams) -> TabularModel:
        """The exact model of ``task`` (a Task or its TaskParams).

        Rewards: ``step_reward`` on every step that does not enter the goal, ``goal_reward``
        *instead* on the step that does; the goal's own row is absorbing (reward 0). The
        reward-independent table is built once per (layout, dynamics, probability) and cached, so
        a model costs one copy and one ``np.where`` (well under a millisecond on 40x40).
        """
        task_params = checked_task(self, task)
        p = self.params
        slip_or_fail = p.slip if p.dynamics == "slip" else p.fail_prob
        next_state, prob = _dynamics(p.layout, p.dynamics, slip_or_fail)
        return goal_model(
            next_state,
            prob,
            start=self.state_of(task_params.start),
            goals=[self.state_of(task_params.goal)],
            step_reward=p.step_reward,
            goal_reward=p.goal_reward,
            cells=self.cells,
            shape=self.layout.shape,
        )

    def reference_options(self, task: Task | TaskParams) -> TabularOptionSet:
        """Sutton, Precup & Singh (1999)'s hallway options (8: two per room), initiation sets too.

        Derived from the map's walls (:mod:`.hallway_options`), so every layout has them; the same
        for every task of the family (they ignore start and goal), built once per layout.
        """
        return _hallway_options(self.params.layout)

    def make_env(self, task: Task | TaskParams, **kwargs: Any) -> gymnasium.Env:
        """``gymnasium.make`` of :attr:`env_id` for ``task`` (a :class:`FourRoomsEnv` inside).

        ``kwargs`` may hold ``render_mode``. ``max_episode_steps`` becomes gymnasium's
        ``TimeLimit``; ``env.spec`` records every parameter (``gymnasium.make(env.spec)`` rebuilds
        the task).
        """
        return make_registered_env(self, task, **kwargs)

    def _cell_problem(self, cell: Any) -> str:
        rows, cols = self.layout.shape
        if not (isinstance(cell, tuple | list) and len(cell) == 2):
            return f"expected a cell (row, col), got {cell!r}"
        row, col = cell
        if not (0 <= row < rows and 0 <= col < cols):
            return f"cell {tuple(cell)} is off the {rows}x{cols} map {self.layout.name!r}"
        if self.layout.walls[row, col]:
            return f"cell {tuple(cell)} is a wall in layout {self.layout.name!r}"
        return ""


class FourRoomsEnv(TabularEnv):
    """Four rooms: reach the goal cell of a gridworld made of four rooms joined by hallways.

    ## Description
    The agent moves on a grid of four rooms (layouts ``paper-40x40``, ``sutton-13x13``, ``10x15``)
    from a start cell to a goal cell. Dynamics ``slip`` (Garcia et al. 2020): the intended move with
    probability ``1 - slip``, each other direction with ``slip / 3``. Dynamics ``random-neighbour``
    (Bacon et al. 2017): with probability ``fail_prob`` the move fails and the agent lands on a
    uniformly random free neighbour of its cell, else the intended move. Moves into walls or off
    the map leave the agent in place.
    Transitions are sampled from the exact model ``env.model`` (``FourRooms.tabular_model``).

    ## Action Space
    ``Discrete(4)``: 0 up (row - 1), 1 down (row + 1), 2 left (col - 1), 3 right (col + 1).

    ## Observation Space
    ``Discrete(S)``: the index of the agent's free cell in row-major order (``env.model.cells``).

    ## Reward
    ``step_reward`` (default -1) per step; the step that enters the goal gets ``goal_reward``
    (default +10) instead, not in addition.

    ## Episode End
    Terminated on entering the goal. Truncated after ``max_episode_steps`` (default 1000) steps by
    gymnasium's ``TimeLimit``, which ``gymnasium.make`` and ``FourRooms.make_env`` add.

    ## Version History
    - v0: initial version.

    Args:
      render_mode: ``"rgb_array"`` (8 pixels a cell) or ``"ansi"``.
      **kwargs: the fields of :class:`Params` (but ``max_episode_steps``, which ``gymnasium.make``
        takes) and of :class:`TaskParams` (``start`` and ``goal``). Without ``start`` and ``goal``
        the default task: start in the layout's first free cell (top-left), goal in its last one
        (bottom-right), e.g. ``gymnasium.make("opt_suite/FourRooms-v0")`` on ``paper-40x40``.
    """

    family_class = FourRooms
    family: FourRooms

    def _cell_colours(self) -> np.ndarray:
        walls = self.family.layout.walls
        image = np.where(walls[..., None], WALL, FREE).astype(np.uint8)
        image[self.task_params.goal] = GOAL
        if self.state is not None:
            image[self.family.cell_of(self.state)] = AGENT
        return image

    def _text(self) -> str:
        chars = np.where(self.family.layout.walls, "#", ".")
        chars[self.task_params.goal] = "G"
        if self.state is not None:
            chars[self.family.cell_of(self.state)] = "A"
        return "\n".join("".join(row) for row in chars) + "\n"
