"""Goal-reaching tabular tasks: the exact model, and a gymnasium env that samples from it.

The env draws every transition from the task's :class:`~opt_suite.families.base.TabularModel`
arrays, so the model that experts, eigenoptions and the vectorised learner use *is* the
environment: one source of truth, no hand-written step logic that could drift from it.

Reward convention (all tabular families): a step that lands on a terminal (goal) state pays
``goal_reward`` *instead of* ``step_reward``; every other step pays ``step_reward``.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces

from opt_suite.families.base import TabularModel, TabularModelMixin, Task, TaskFamily
from opt_suite.families.env_kwargs import params_from_kwargs

__all__ = [
    "goal_model",
    "checked_task",
    "raise_problems",
    "make_registered_env",
    "TabularEnv",
    "WALL",
    "FREE",
    "GOAL",
    "AGENT",
]

# Picture colours (RGB) shared by the tabular families' rgb_array renderings.
WALL, FREE, GOAL, AGENT = (
    np.array(colour, dtype=np.uint8)
    for colour in ((64, 64, 64), (255, 255, 255), (46, 160, 67), (214, 39, 40))
)


def goal_model(
    next_state: np.ndarray,
    prob: np.ndarray,
    *,
    start: int,
    goals: np.ndarray | list[int],
    step_reward: float,
    goal_reward: float,
    cells: np.ndarray | None = None,
    shape: tuple[int, int] | None = None,
) -> TabularModel:
    """One task's model from a shared, reward-independent transition table.

    Goal rows are made absorbing (stay with probability 1, reward 0), so that even code that ignores
    ``terminal`` computes the right values. The shared table is copied, never modified.

    Args:
      next_state: int [S, A, K] reward-independent outcomes (may be read-only and cached).
      prob: float [S, A, K], rows summing to 1.
      start: the start state.
      goals: the terminal states.
      step_reward: reward of an outcome that does not land in a goal.
      goal_reward: reward of an outcome that lands in a goal (instead of ``step_reward``).
      cells: int [S, 2] grid coordinates of the states, for grid families.
      shape: (rows, cols) of the grid, for grid families.
    """
    terminal = np.zeros(len(next_state), dtype=bool)
    terminal[np.asarray(goals, dtype=np.int64)] = True
    next_state = np.array(next_state, dtype=np.int32)
    prob = np.array(prob, dtype=np.float64)
    reward = np.where(terminal[next_state], np.float64(goal_reward), np.float64(step_reward))
    next_state[terminal] = np.flatnonzero(terminal)[:, None, None]
    prob[terminal] = np.eye(prob.shape[-1])[0]
    reward[terminal] = 0.0
    for array in (next_state, prob, reward, terminal):
        array.flags.writeable = False  # models are shared between envs and learners
    declared = np.asarray(goals, dtype=np.int64)
    declared.flags.writeable = False
    return TabularModel(next_state, prob, reward, terminal, int(start), cells, shape, declared)


def raise_problems(problems: list[tuple[str, str]], prefix: str = "") -> None:
    """Raise one ``ValueError`` listing ``(field, message)`` problems, if there are any."""
    if problems:
        raise ValueError("; ".join(f"{prefix}{field}: {message}" for field, message in problems))


def checked_task(family: TaskFamily, task: Task | Any) -> Any:
    """The TaskParams of ``task`` (a Task or TaskParams), after ``family.check_task`` passed."""
    task_params = task.params if isinstance(task, Task) else task
    raise_problems(family.check_task(task_params))
    return task_params


def make_registered_env(family: TaskFamily, task: Task | Any, **kwargs: Any) -> gymnasium.Env:
    """``gymnasium.make(family.env_id, **Params, **TaskParams, **kwargs)`` for ``task``.

    The family's ``max_episode_steps`` becomes gymnasium's ``TimeLimit``; the other fields of
    ``Params`` and ``TaskParams`` are the env's keyword arguments, so ``env.spec`` records the task.
    """
    task_params = task.params if isinstance(task, Task) else task
    flat = dataclasses.asdict(family.params) | dataclasses.asdict(task_params)
    return gymnasium.make(
        family.env_id, max_episode_steps=flat.pop("max_episode_steps"), **flat, **kwargs
    )


class TabularEnv(gymnasium.Env):
    """A gymnasium env that samples transitions from a :class:`TabularModel` (families' base).

    Made from flat keyword arguments (as ``gymnasium.make`` passes them): the fields of the
    family's ``Params`` and ``TaskParams``, validated. Observations are state indices
    (``Discrete(S)``), actions ``Discrete(A)``. An episode starts at ``model.start`` and terminates
    on entering a terminal state. Truncation is gymnasium's ``TimeLimit``
    (``gymnasium.make(..., max_episode_steps=...)``), not the env's. Subclasses set
    ``family_class`` and provide the pictures (:meth:`_cell_colours`, :meth:`_text`) and the
    Gymnasium docstring.

    Attributes:
      family: the family instance built from the keyword arguments.
      task_params: this env's TaskParams.
      model: the exact model every transition is sampled from.
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}
    pixels_per_cell: ClassVar[int] = 8
    family_class: ClassVar[type[TabularModelMixin]]

    def __init__(self, render_mode: str | None = None, **kwargs: Any) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {self.metadata['render_modes']} or None, "
                f"got {render_mode!r}"
            )
        cls = self.family_class
        task_fields = {f.name for f in dataclasses.fields(cls.TaskParams)}
        param_fields = {f.name for f in dataclasses.fields(cls.Params)}
        unknown = sorted(set(kwargs) - task_fields - param_fields)
        if unknown:
            known = sorted(task_fields | param_fields)
            raise TypeError(f"unknown keyword(s) {unknown} (expected some of {known})")
        (params,) = params_from_kwargs(
            {k: v for k, v in kwargs.items() if k in param_fields}, cls.Params
        )
        self.family = cls(params)
        # No task given: the family's documented default task (gymnasium.make("opt_suite/...")).
        task_kwargs = {**dataclasses.asdict(self.family.default_task())}
        task_kwargs.update({k: v for k, v in kwargs.items() if k in task_fields})
        (self.task_params,) = params_from_kwargs(task_kwargs, cls.TaskParams)
        self.model = model = self.family.tabular_model(self.task_params)
        self.render_mode = render_mode
        self.observation_space = spaces.Discrete(model.num_states)
        self.action_space = spaces.Discrete(model.num_actions)
        # Normalised cumulative probabilities: the last entry is exactly 1.0, so a uniform draw
        # u in [0, 1) lands (searchsorted 'right') on an outcome of positive probability only.
        cumulative = np.cumsum(model.prob, axis=-1)
        self._cumulative = cumulative / cumulative[..., -1:]
        self._state: int | None = None
        self._terminated = False

    @property
    def state(self) -> int | None:
        """The current state index (None before the first reset)."""
        return self._state

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[int, dict[str, Any]]:
        """Start an episode at the task's start state; ``seed`` reseeds the transition sampler."""
        super().reset(seed=seed)
        self._state, self._terminated = self.model.start, False
        return self._state, {}

    def step(self, action: int) -> tuple[int, float, bool, bool, dict[str, Any]]:
        """Sample ``(s', r)`` from the model's outcomes for (state, action).

        ``info["prob"]`` is the probability of the sampled outcome.
        """
        if self._state is None or self._terminated:
            raise RuntimeError("step() called before reset() or after the episode terminated")
        if not self.action_space.contains(action):
            raise ValueError(
                f"action must be an int in [0, {self.model.num_actions}), got {action!r}"
            )
        s, a = self._state, int(action)
        k = int(np.searchsorted(self._cumulative[s, a], self.np_random.random(), side="right"))
        self._state = int(self.model.next_state[s, a, k])
        self._terminated = bool(self.model.terminal[self._state])
        reward = float(self.model.reward[s, a, k])
        return (
            self._state,
            reward,
            self._terminated,
            False,
            {"prob": float(self.model.prob[s, a, k])},
        )

    def render(self) -> np.ndarray | str | None:
        """``rgb_array``: uint8 [H, W, 3], ``pixels_per_cell`` a cell; ``ansi``: a text map."""
        if self.render_mode == "ansi":
            return self._text()
        if self.render_mode == "rgb_array":
            image = self._cell_colours()
            scale = self.pixels_per_cell
            return np.repeat(np.repeat(image, scale, axis=0), scale, axis=1)
        return None

    def _cell_colours(self) -> np.ndarray:
        """uint8 [rows, cols, 3], one pixel per cell (subclasses draw walls, goal and agent)."""
        raise NotImplementedError

    def _text(self) -> str:
        """The ``ansi`` rendering (subclasses)."""
        raise NotImplementedError
