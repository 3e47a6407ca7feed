"""Chains: the small MDPs of the paper's Appendix D, where they check the derived equations.

Appendix D says only "simple chains of 7 states with different transition functions", so the rest
is our choice, made so that every task is episodic and every transition is stochastic:

- states ``0 .. N-1`` in a row; the episode starts at ``start`` (default 0, the left end) and ends
  on reaching ``N-1`` (the right end, the only terminal state);
- actions ``0 = left``, ``1 = right``; in state ``s`` the action moves the intended way with
  probability ``success_left[s]`` / ``success_right[s]``, otherwise the *opposite* way; a move past
  the left end leaves the agent at 0;
- per task, each of those ``2 (N-1)`` probabilities is drawn independently from
  ``Uniform(success_low, success_high)`` (default ``[0.5, 1]``) and rounded to 3 decimals, so a
  task's transition function is written out in full in its ``TaskParams`` (readable in a spec's
  ``tasks.list``);
- rewards as in four rooms: ``step_reward`` (-1) per step, ``goal_reward`` (+10) instead on the
  step that reaches ``N-1``.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeAlias

import gymnasium
import numpy as np

from opt_suite.families.base import TabularModel, TabularModelMixin, Task, TaskFamily
from opt_suite.families.tabular.task import (
    AGENT,
    FREE,
    GOAL,
    TabularEnv,
    checked_task,
    goal_model,
    make_registered_env,
    raise_problems,
)
from opt_suite.params import param

__all__ = ["Chain", "ChainEnv", "Params", "Variation", "TaskParams"]


@dataclasses.dataclass(frozen=True)
class Params:
    """Family-wide settings (spec key ``family.params``)."""

    num_states: int = param(
        7, doc="states in the chain (Appendix D: 7); the last ends it", ge=2, le=100_000
    )
    step_reward: float = param(-1.0, doc="reward of every step that does not reach the end")
    goal_reward: float = param(10.0, doc="reward of the step that reaches the end (instead)")
    max_episode_steps: int = param(
        100,
        doc="episodes are truncated after this many steps (gymnasium's TimeLimit)",
        ge=1,
        le=1_000_000,
    )


@dataclasses.dataclass(frozen=True)
class Variation:
    """How tasks are sampled (spec key ``tasks.vary``)."""

    success_low: float = param(
        0.5, doc="lowest probability that a move goes the intended way", ge=0, le=1
    )
    success_high: float = param(1.0, doc="highest such probability", ge=0, le=1)
    start: int | None = param(0, doc="start state; null: uniform over non-terminal states", ge=0)

    def check(self) -> list[tuple[str, str]]:
        """``success_low <= success_high``."""
        if self.success_low > self.success_high:
            return [("success_high", f"must be >= success_low={self.success_low}")]
        return []


@dataclasses.dataclass(frozen=True)
class TaskParams:
    """One chain task: its transition probabilities (one per non-terminal state) and start."""

    success_left: tuple[float, ...] = param(doc="P(left moves left), states 0..N-2", ge=0, le=1)
    success_right: tuple[float, ...] = param(doc="P(right moves right), states 0..N-2", ge=0, le=1)
    start: int = param(0, doc="start state (not the terminal N-1)", ge=0)


class Chain(TabularModelMixin, TaskFamily):
    """The chain task family; see the module docstring."""

    name = "chain"
    description = "Appendix D chains: N states, left/right moves that succeed w.p. drawn per task"
    env_id = "opt_suite/Chain-v0"
    Params: TypeAlias = Params
    Variation: TypeAlias = Variation
    TaskParams: TypeAlias = TaskParams

    def __init__(self, params: Params | None = None) -> None:
        super().__init__(Params() if params is None else params)

    @property
    def observation_space(self) -> gymnasium.spaces.Discrete:
        """``Discrete(N)``: the agent's state."""
        return gymnasium.spaces.Discrete(self.params.num_states)

    @property
    def action_space(self) -> gymnasium.spaces.Discrete:
        """``Discrete(2)``: left, right."""
        return gymnasium.spaces.Discrete(2)

    @property
    def instance_name(self) -> str:
        """``chain-<N>``, e.g. ``chain-7``."""
        return f"{self.name}-{self.params.num_states}"

    def check_variation(self, variation: Variation) -> list[tuple[str, str]]:
        """Problems with a Variation for this chain length."""
        problems = list(variation.check())
        if variation.start is not None and not 0 <= variation.start < self.params.num_states - 1:
            problems.append(("start", self._start_problem(variation.start)))
        return problems

    def sample_tasks(self, variation: Variation, count: int, rng: np.random.Generator) -> list[Any]:
        """Success probabilities ~ Uniform(low, high), to 3 decimals; start fixed or uniform."""
        raise_problems(self.check_variation(variation), prefix="tasks.vary.")
        low, high, width = variation.success_low, variation.success_high, self.params.num_states - 1
        tasks = []
        for _ in range(count):
            success = np.clip(np.round(rng.uniform(low, high, size=(2, width)), 3), low, high)
            start = variation.start if variation.start is not None else int(rng.integers(width))
            left, right = (tuple(float(p) for p in row) for row in success)
            tasks.append(TaskParams(left, right, start))
        return tasks

    def default_task(self) -> TaskParams:
        """Moves that always succeed, start in state 0."""
        width = self.params.num_states - 1
        return TaskParams((1.0,) * width, (1.0,) * width, 0)

    def check_task(self, task_params: TaskParams) -> list[tuple[str, str]]:
        """One probability in [0, 1] per non-terminal state, and a non-terminal start."""
        width, problems = self.params.num_states - 1, []
        for key in ("success_left", "success_right"):
            values = getattr(task_params, key)
            if len(values) != width:
                message = f"expected {width} probabilities (states 0..{width - 1})"
                problems.append((key, f"{message}, got {len(values)}"))
            elif not all(0 <= v <= 1 for v in values):
                problems.append((key, f"probabilities must lie in [0, 1], got {values}"))
        if not 0 <= task_params.start < width:
            problems.append(("start", self._start_problem(task_params.start)))
        return problems

    def tabular_model(self, task: Task | TaskParams) -> TabularModel:
        """The exact model: outcome 0 is the intended move, outcome 1 the opposite one (K = 2).

        Rewards: ``step_reward`` per step, ``goal_reward`` instead on the step that reaches
        ``N-1``, whose row is absorbing (reward 0). ``cells`` are ``(0, s)``, ``shape`` ``(1, N)``.
        """
        task_params = checked_task(self, task)
        n = self.params.num_states
        states = np.arange(n)
        left, right = np.maximum(states - 1, 0), np.minimum(states + 1, n - 1)
        # [S, A, K]: action 0 (left) -> (left, right); action 1 (right) -> (right, left).
        next_state = np.stack([np.stack([left, right], -1), np.stack([right, left], -1)], axis=1)
        success = np.ones((n, 2))  # the terminal row is replaced by goal_model
        success[:-1, 0], success[:-1, 1] = task_params.success_left, task_params.success_right
        prob = np.stack([success, 1.0 - success], axis=-1)
        p = self.params
        return goal_model(
            next_state,
            prob,
            start=task_params.start,
            goals=[n - 1],
            step_reward=p.step_reward,
            goal_reward=p.goal_reward,
            cells=np.stack([np.zeros(n, dtype=np.int32), states.astype(np.int32)], axis=-1),
            shape=(1, n),
        )

    def make_env(self, task: Task | TaskParams, **kwargs: Any) -> gymnasium.Env:
        """``gymnasium.make`` of :attr:`env_id` for ``task`` (a :class:`ChainEnv` inside).

        ``kwargs`` may hold ``render_mode``. ``max_episode_steps`` becomes gymnasium's
        ``TimeLimit``; ``env.spec`` records every parameter (``gymnasium.make(env.spec)`` rebuilds
        the task).
        """
        return make_registered_env(self, task, **kwargs)

    def _start_problem(self, start: int) -> str:
        n = self.params.num_states
        return f"start must be a non-terminal state in [0, {n - 2}] ({n} states), got {start}"


class ChainEnv(TabularEnv):
    """Chain: walk right along a row of N states whose moves succeed with per-task probabilities.

    ## Description
    States ``0 .. N-1`` in a row (Garcia et al. 2020, Appendix D: N = 7). From ``start`` the agent
    must reach ``N-1``. In state ``s`` the chosen move goes the intended way with probability
    ``success_left[s]`` / ``success_right[s]`` and the opposite way otherwise; moving left from 0
    stays at 0. Transitions are sampled from the exact model ``env.model``
    (``Chain.tabular_model``).

    ## Action Space
    ``Discrete(2)``: 0 left, 1 right.

    ## Observation Space
    ``Discrete(N)``: the state index.

    ## Reward
    ``step_reward`` (default -1) per step; the step that reaches ``N-1`` gets ``goal_reward``
    (default +10) instead.

    ## Episode End
    Terminated on reaching ``N-1``. Truncated after ``max_episode_steps`` (default 100) steps by
    gymnasium's ``TimeLimit``, which ``gymnasium.make`` and ``Chain.make_env`` add.

    ## Version History
    - v0: initial version.

    Args:
      render_mode: ``"rgb_array"`` (8 pixels a cell) or ``"ansi"``.
      **kwargs: the fields of :class:`Params` (but ``max_episode_steps``, which ``gymnasium.make``
        takes) and of :class:`TaskParams`.
    """

    family_class = Chain

    def _cell_colours(self) -> np.ndarray:
        image = np.broadcast_to(FREE, (1, self.model.num_states, 3)).copy()
        image[0, -1] = GOAL
        if self.state is not None:
            image[0, self.state] = AGENT
        return image

    def _text(self) -> str:
        chars = ["."] * (self.model.num_states - 1) + ["G"]
        if self.state is not None:
            chars[self.state] = "A"
        return "".join(chars) + "\n"
