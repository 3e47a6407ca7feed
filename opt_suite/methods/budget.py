"""Interaction budgets the runner enforces: envs that count what a method spends and stop it.

A method that learns by interacting asks its :class:`~opt_suite.methods.base.DiscoveryContext` for
envs (``context.make_env(task)``); every env of one discovery shares one :class:`Budget`. Each step
counts one env step and the emulator frames it used (``info["frames"]`` when the env reports them,
as frame-skipping Atari envs do, else one). The step that spends the last allowed env step comes
back truncated with ``info["budget_exhausted"] = True``; any step after it raises
:class:`BudgetExhausted`. The runner stores what was counted with the cell (``info``:
``counted_env_steps``, ``counted_env_frames``), whatever the method reports itself.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import gymnasium

__all__ = ["Budget", "BudgetExhausted", "CountingEnv", "DiscoveryBudget", "DiscoverySteps"]


@dataclasses.dataclass(frozen=True)
class DiscoveryBudget:
    """What a method declares its discovery spends (``Method.discovery_budget``).

    The one statement of what a discovery reads, for given params: the plan makes its cell depend
    on the demonstrations cell only when it reads them and hashes the interaction budget into its
    id only when it may step envs; the work estimate, ``validate`` and the runner read the same.
    Discovery cost goes on the same axis as learning cost: the leaderboard shows the env frames
    each discovery stepped beside the frames its options' learner took, and the runner stops a
    discovery at its declared env steps.

    Attributes:
      demonstrations: whether it reads the demonstrations (their steps are its cost too).
      env_steps: env steps it may take through ``context.make_env``: a number it declares (e.g.
        a random walk's length), or None for "up to ``evaluation.interaction_budget``".
      key: the params key that sets ``env_steps`` (``walk_frames``), where ``validate`` reports a
        declared budget above ``evaluation.interaction_budget``; None when no key does.
    """

    demonstrations: bool
    env_steps: int | None
    key: str | None = None

    @property
    def interacts(self) -> bool:
        """Whether it may step envs (``env_steps`` is not 0): it gets an interaction budget."""
        return self.env_steps != 0


@dataclasses.dataclass(frozen=True)
class DiscoverySteps:
    """The optimisation steps a discovery takes at most (``Method.discovery_steps``).

    Compute, not interaction: ``validate`` compares the spec's methods by it and warns about an
    entry whose discovery takes far more steps than the others' (a default such as LOVE's 20,000
    full-batch steps, set for the authors' larger tasks). A step count, not seconds: one step of
    one method may cost more than one of another; the warning is for the orders of magnitude.

    Attributes:
      steps: gradient steps (full-batch or minibatch) of the whole discovery, at most.
      key: the params key that sets most of them, which the warning names.
    """

    steps: int
    key: str


class BudgetExhausted(RuntimeError):
    """A method stepped an env after its interaction budget was spent."""


@dataclasses.dataclass
class Budget:
    """Env steps allowed and spent (summed over every env of one discovery), frames spent."""

    limit: int
    steps: int = 0
    frames: int = 0

    @property
    def left(self) -> int:
        """Env steps still allowed."""
        return max(self.limit - self.steps, 0)


class CountingEnv(gymnasium.Wrapper):
    """Counts every step into a shared :class:`Budget` and stops at its limit."""

    def __init__(self, env: gymnasium.Env, budget: Budget) -> None:
        super().__init__(env)
        self.budget = budget

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        """Step, count, and truncate the step that spends the last allowed env step."""
        if self.budget.left == 0:
            raise BudgetExhausted(
                f"the interaction budget of {self.budget.limit} env steps is spent "
                "(evaluation.interaction_budget, or the method's declared discovery budget): "
                "the method stepped past it"
            )
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.budget.steps += 1
        self.budget.frames += int(info.get("frames", 1)) if isinstance(info, dict) else 1
        if self.budget.left == 0:
            truncated = True
            info = {**info, "budget_exhausted": True}
        return obs, reward, terminated, truncated, info
