"""Tabular experts: demonstrations from optimal policies computed or learned on the exact model.

The paper (Section 4.1) demonstrates each train task with "sample trajectories from optimal
policies, learned using Q-learning". Two sources produce such policies, observations being state
indices; ``optimal`` needs the family's exact model, ``q_learning`` uses it when there is one (and
otherwise learns on the env: :mod:`.qlearning_env`); both sample the demonstrations in the real
(slippery) task:

- ``optimal`` (the default): value iteration on the exact model (S&B eq. 4.10) and its greedy
  policy — optimal by construction, whatever the reward scale, and fast.
- ``q_learning``: epsilon-greedy tabular Q-learning (Watkins, 1989: Q(s, a) <- Q(s, a) + alpha
  [r + gamma max_a' Q(s', a') - Q(s, a)]), as the paper trains its experts. Every ``check_every``
  episodes its greedy policy pi is evaluated *exactly* on the model and compared with value
  iteration; training stops once V*(s_0) - V^pi(s_0) <= tolerance x scale, and fails with a clear
  error after ``max_episodes``. The tolerance is relative to the task's return scale,
  ``scale = max(|V*(s_0)|, max |r|)``, so that a family with rewards in [0, 1] gets optimal
  demonstrations too (an absolute 0.5 would accept a policy that never reaches its goal there).
  Why a value tolerance rather than "the greedy action is optimal in every reachable state": with
  slip every state is reachable, and with a constant step size Q-learning keeps flipping between
  near-tied actions (and never settles rarely visited states), so the exact test is never met; the
  value at the start weighs every state by how often the expert reaches it.

A demonstration that does not reach the goal within ``demonstrations.max_steps`` is an error naming
the task.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np

from opt_suite.demonstrations.base import (
    DemonstrationError,
    DemonstrationSource,
    SourceContext,
    child_seed,
)
from opt_suite.families.base import TabularModel, Task, TaskFamily, exact_model
from opt_suite.families.capabilities import DISCRETE_ACTIONS, EXACT_MODEL, INDEX_OBSERVATIONS
from opt_suite.limits import MAX_EPISODES
from opt_suite.params import param
from opt_suite.trajectory import Trajectory

__all__ = [
    "ExpertError",
    "Expert",
    "OptimalParams",
    "OptimalExpert",
    "QLearningParams",
    "QLearningExpert",
    "train_expert",
    "sample_trajectory",
]

_TABULAR = frozenset({EXACT_MODEL, DISCRETE_ACTIONS, INDEX_OBSERVATIONS})


@dataclasses.dataclass(frozen=True)
class OptimalParams:
    """Value iteration on the exact model."""

    gamma: float = param(0.99, doc="discount the expert is optimal for", gt=0, le=1)


@dataclasses.dataclass(frozen=True)
class QLearningParams:
    """Tabular Q-learning expert, trained until its greedy policy is optimal."""

    alpha: float = param(0.5, doc="Q-learning step size", gt=0, le=1)
    gamma: float = param(0.99, doc="discount", gt=0, le=1)
    epsilon: float = param(0.2, doc="epsilon-greedy exploration", ge=0, le=1)
    max_episodes: int = param(
        20000, doc="give up (error) after this many episodes", ge=1, le=MAX_EPISODES * 100
    )
    check_every: int = param(
        100, doc="episodes between optimality checks", ge=1, le=MAX_EPISODES * 100
    )
    tolerance: float = param(
        0.01,
        doc="optimal means V*(start) - V_greedy(start) <= tolerance * max(|V*(start)|, max |r|), "
        "relative to the return scale (per-state greedy optimality is never reached with slip: "
        "rarely visited near-ties keep flipping)",
        ge=0,
        lt=1,
    )


class ExpertError(DemonstrationError):
    """An expert could not be trained (no model, or not optimal within ``max_episodes``)."""


@dataclasses.dataclass(frozen=True, eq=False)
class Expert:
    """A trained expert.

    Attributes:
      q: float [S, A] its learned action values.
      policy: int [S] its greedy policy.
      episodes: Q-learning episodes it took.
      value_gap: V*(s_0) - V^pi(s_0) at the last check.
    """

    q: np.ndarray
    policy: np.ndarray
    episodes: int
    value_gap: float


def train_expert(
    model: TabularModel,
    spec: QLearningParams,
    rng: np.random.Generator,
    max_steps: int,
    tolerance: float | None = None,
    name: str = "task",
) -> Expert:
    """Epsilon-greedy Q-learning from the start state until the greedy policy is optimal.

    Args:
      model: the task's exact model (used for learning by sampling, and for the check).
      spec: step size, discount, exploration, episode limit and check period.
      rng: the only source of randomness.
      max_steps: cap on one training episode's length (a cut episode bootstraps, it is not an end).
      tolerance: largest V*(s_0) - V^pi(s_0) accepted as optimal (absolute); None:
        ``spec.tolerance`` times the return scale, max(|V*(s_0)|, max |r|).
      name: the task's id, for error messages.

    Raises:
      ExpertError: still not optimal after ``spec.max_episodes`` episodes.
    """
    # numba and scipy are imported where they are used: `opt-suite validate` loads this module
    # for its Params and must not pay for them.
    from opt_suite.demonstrations.qlearning import q_learning_episodes
    from opt_suite.tabular import greedy_policy, value_iteration

    v_star, _ = value_iteration(model, spec.gamma)
    if tolerance is None:
        scale = max(abs(float(v_star[model.start])), float(np.abs(model.reward).max(initial=0.0)))
        tolerance = spec.tolerance * scale
    q = np.zeros((model.num_states, model.num_actions))
    episodes, gap = 0, np.inf
    while episodes < spec.max_episodes:
        batch = min(spec.check_every, spec.max_episodes - episodes)
        q_learning_episodes(model, q, spec.alpha, spec.gamma, spec.epsilon, max_steps, batch, rng)
        episodes += batch
        policy = greedy_policy(q)
        gap = _value_gap(model, policy, v_star, spec.gamma)
        if gap <= tolerance:
            return Expert(q.copy(), policy, episodes, gap)
    raise ExpertError(
        f"expert for {name}: greedy policy still {gap:.3g} below the optimal value at the start "
        f"(tolerance {tolerance}) after demonstrations.params.max_episodes={spec.max_episodes} "
        f"episodes; raise max_episodes, or lower demonstrations.params.alpha={spec.alpha}"
    )


def _value_gap(model: TabularModel, policy: np.ndarray, v_star: np.ndarray, gamma: float) -> float:
    """V*(s_0) - V^pi(s_0); infinite when pi cannot reach the goal and gamma = 1."""
    from opt_suite.tabular import policy_evaluation

    try:
        v_pi = policy_evaluation(model, policy, gamma)
    except ValueError:
        return float("inf")
    return float(v_star[model.start] - v_pi[model.start])


def sample_trajectory(
    model: TabularModel, policy: np.ndarray, rng: np.random.Generator, max_steps: int, task_id: str
) -> Trajectory:
    """Follow a deterministic ``policy`` from the start in the model until a terminal state.

    Raises:
      ExpertError: the episode reaches ``max_steps`` steps before ending.
    """
    states = [model.start]
    actions: list[int] = []
    rewards: list[float] = []
    s = model.start
    while not model.terminal[s]:
        if len(actions) == max_steps:
            raise ExpertError(
                f"demonstration on {task_id} did not reach the goal in demonstrations.max_steps="
                f"{max_steps} steps; raise it"
            )
        a = int(policy[s])
        k = int(rng.choice(model.prob.shape[2], p=model.prob[s, a]))
        actions.append(a)
        rewards.append(float(model.reward[s, a, k]))
        s = int(model.next_state[s, a, k])
        states.append(s)
    return Trajectory(
        task_id,
        np.array(states, dtype=np.int64),
        np.array(actions, dtype=np.int64),
        np.array(rewards),
    )


def _models(family: TaskFamily, train_tasks: Sequence[Task], source: str) -> list[TabularModel]:
    models = []
    for task in train_tasks:
        model = exact_model(family, task)
        if model is None:
            raise ExpertError(
                f"family {family.name!r} has no tabular model for {task.task_id}: the {source!r} "
                "demonstration source needs one"
            )
        models.append(model)
    return models


def _demonstrate(
    family: TaskFamily,
    train_tasks: Sequence[Task],
    source: str,
    policy_for: Callable[[int, Task, TabularModel], np.ndarray],
    trajectories_per_task: int,
    max_steps: int,
    seed: np.random.SeedSequence,
) -> list[Trajectory]:
    """``trajectories_per_task`` trajectories of ``policy_for(i, task, model)`` on each train task.

    Train task i samples with child (i, 1) of ``seed`` (child (i, 0) is left to the policy's own
    training), so every source's trajectories of one task depend on that task only.
    """
    demos: list[Trajectory] = []
    for i, (task, model) in enumerate(
        zip(train_tasks, _models(family, train_tasks, source), strict=True)
    ):
        policy = policy_for(i, task, model)
        rng = np.random.default_rng(child_seed(seed, i, 1))
        demos += [
            sample_trajectory(model, policy, rng, max_steps, task.task_id)
            for _ in range(trajectories_per_task)
        ]
    return demos


class OptimalExpert(DemonstrationSource):
    """The optimal policy of each train task, by value iteration on its exact model."""

    name: ClassVar[str] = "optimal"
    description: ClassVar[str] = "optimal policy by value iteration on the exact model (default)"
    Params: ClassVar[type] = OptimalParams
    requires: ClassVar[frozenset[str]] = _TABULAR
    #: Shown by ``opt-suite describe``.
    model_needed_because: ClassVar[str] = "value iteration plans on the exact model"

    def collect(self, context: SourceContext) -> list[Trajectory]:
        """Greedy (first best action) optimal policy; train task i samples with child (i, 1)."""
        family, train_tasks = context.family, context.train_tasks
        trajectories_per_task = context.trajectories_per_task
        max_steps, seed = context.max_steps, context.seed

        from opt_suite.tabular import greedy_policy, value_iteration

        def optimal(i: int, task: Task, model: TabularModel) -> np.ndarray:
            return greedy_policy(value_iteration(model, self.params.gamma)[1])

        return _demonstrate(
            family, train_tasks, self.name, optimal, trajectories_per_task, max_steps, seed
        )


class QLearningExpert(DemonstrationSource):
    """Tabular Q-learning on each train task until its greedy policy is optimal at the start."""

    name: ClassVar[str] = "q_learning"
    description: ClassVar[str] = (
        "tabular Q-learning expert (the paper's), trained until optimal at the start; without a "
        "model, on the env until its greedy return plateaus"
    )
    Params: ClassVar[type] = QLearningParams
    # No model needed: without one it steps the env and stops on a plateau (qlearning_env.py).
    requires: ClassVar[frozenset[str]] = frozenset({DISCRETE_ACTIONS, INDEX_OBSERVATIONS})

    def collect(self, context: SourceContext) -> list[Trajectory]:
        """Train task i trains with child (i, 0) of ``seed`` and samples with child (i, 1).

        Without an exact model, each expert learns on its task's env (:mod:`.qlearning_env`).
        """
        family, train_tasks = context.family, context.train_tasks
        trajectories_per_task = context.trajectories_per_task
        max_steps, seed = context.max_steps, context.seed
        if train_tasks and exact_model(family, train_tasks[0]) is None:
            return self._without_model(family, train_tasks, trajectories_per_task, max_steps, seed)

        def trained(i: int, task: Task, model: TabularModel) -> np.ndarray:
            rng = np.random.default_rng(child_seed(seed, i, 0))
            return train_expert(model, self.params, rng, max_steps, None, task.task_id).policy

        return _demonstrate(
            family, train_tasks, self.name, trained, trajectories_per_task, max_steps, seed
        )

    def _without_model(
        self,
        family: TaskFamily,
        train_tasks: Sequence[Task],
        trajectories_per_task: int,
        max_steps: int,
        seed: np.random.SeedSequence,
    ) -> list[Trajectory]:
        """Q-learning on each train task's env, then its greedy policy's episodes.

        Raises:
          ExpertError: observations that are not indices, no plateau within max_episodes, or a
            demonstration that did not end within ``max_steps`` (naming its task).
        """
        from opt_suite.demonstrations.qlearning_env import train_on_env

        space = family.observation_space
        if getattr(space, "shape", None) != () or not hasattr(space, "n"):
            raise ExpertError(f"{self.name}: needs index (Discrete) observations; got {space}")
        demos: list[Trajectory] = []
        for i, task in enumerate(train_tasks):
            env = family.make_env(task)
            try:
                rng = np.random.default_rng(child_seed(seed, i, 0))
                try:
                    expert = train_on_env(
                        env, int(space.n), self.params, rng, max_steps, task.task_id
                    )
                except ValueError as exc:
                    raise ExpertError(str(exc)) from None
                sampler = np.random.default_rng(child_seed(seed, i, 1))
                demos += _greedy_demonstrations(
                    env, expert, sampler, trajectories_per_task, max_steps, task.task_id
                )
            finally:
                env.close()
        return demos


def _greedy_demonstrations(
    env: Any, expert: Any, rng: np.random.Generator, count: int, max_steps: int, task_id: str
) -> list[Trajectory]:
    """``count`` greedy episodes of a model-free expert that reach its best return.

    The others (ended short of it, or cut) are dropped with a warning line; see
    :mod:`.qlearning_env`.

    Raises:
      ExpertError: fewer than ``count`` within ``TRIES_PER_DEMONSTRATION * count`` episodes.
    """
    import sys

    from opt_suite.demonstrations.qlearning_env import TRIES_PER_DEMONSTRATION, greedy_rollout

    demos: list[Trajectory] = []
    tries = 0
    while len(demos) < count and tries < TRIES_PER_DEMONSTRATION * count:
        tries += 1
        reset_seed = int(rng.integers(2**31 - 1))
        states, actions, rewards, ended = greedy_rollout(env, expert.policy, reset_seed, max_steps)
        if not ended or sum(rewards) < expert.best_return:
            why = f"return {sum(rewards):.4g}" if ended else f"cut after {len(actions)} steps"
            print(
                f"warning: demonstrations: dropped a greedy episode on {task_id} ({why}; the "
                f"expert's best return is {expert.best_return:.4g})",
                file=sys.stderr,
            )
            continue
        demos.append(
            Trajectory(
                task_id,
                np.array(states, dtype=np.int64),
                np.array(actions, dtype=np.int64),
                np.array(rewards),
                reset_seed=reset_seed,
            )
        )
    if len(demos) < count:
        raise ExpertError(
            f"only {len(demos)} of {tries} greedy episodes on {task_id} reached the expert's best "
            f"return {expert.best_return:.4g} within demonstrations.max_steps={max_steps} "
            f"steps; {count} were asked for"
        )
    return demos
