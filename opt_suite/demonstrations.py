"""Experts and their demonstrations: the data every demonstration-based method learns from.

As in the paper (Section 4.1: "six sample trajectories from optimal policies, learned using
Q-learning"), each train task gets an expert trained by epsilon-greedy tabular Q-learning (Watkins,
1989: Q(s, a) <- Q(s, a) + alpha [r + gamma max_a' Q(s', a') - Q(s, a)]). Every ``check_every``
episodes its greedy policy pi is evaluated *exactly* on the family's model and compared with value
iteration; training stops once it is optimal from the start state,

    V*(s_0) - V^pi(s_0) <= tolerance,

and fails with a clear error after ``max_episodes``. Why a value tolerance rather than "the greedy
action is optimal in every reachable state": with slip every state is reachable, and with a constant
step size Q-learning keeps flipping between near-tied actions (and never settles rarely visited
states), so the exact test is never met; the value at the start weighs every state by how often the
expert actually reaches it.

Demonstrations are then sampled from the greedy expert in the real (slippery) task: observations are
state indices.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from opt_suite.families.base import TabularModel, Task, TaskFamily
from opt_suite.learners.smdp_scalar import ScalarOptions, ScalarRun, ScalarTables
from opt_suite.learners.smdp_tables import Hyper, OptionTables, TaskTables
from opt_suite.methods.base import Trajectory
from opt_suite.options import TabularOptionSet
from opt_suite.spec.schema import DemonstrationsSpec, ExpertSpec
from opt_suite.tabular import greedy_policy, policy_evaluation, value_iteration

__all__ = [
    "ExpertError",
    "Expert",
    "train_expert",
    "sample_trajectory",
    "collect_demonstrations",
    "save_demonstrations",
    "load_demonstrations",
]


class ExpertError(RuntimeError):
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


def _child(seed: np.random.SeedSequence, *key: int) -> np.random.SeedSequence:
    """A child of ``seed`` named by ``key`` (unlike ``spawn``, it does not mutate ``seed``)."""
    return np.random.SeedSequence(seed.entropy, spawn_key=(*seed.spawn_key, *key))


def train_expert(
    model: TabularModel,
    spec: ExpertSpec,
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
      tolerance: largest V*(s_0) - V^pi(s_0) accepted as optimal; None: ``spec.tolerance``.
      name: the task's id, for error messages.

    Raises:
      ExpertError: still not optimal after ``spec.max_episodes`` episodes.
    """
    S, A = model.num_states, model.num_actions
    tolerance = spec.tolerance if tolerance is None else tolerance
    v_star, _ = value_iteration(model, spec.gamma)
    tables = ScalarTables.build(
        TaskTables.stack([model]),
        0,
        ScalarOptions.build(OptionTables.build(TabularOptionSet.empty(S, A), S, A)),
    )
    hyper = Hyper(spec.alpha, spec.gamma, spec.epsilon, 0.0, 0.0, max_steps)
    learner = ScalarRun(tables, hyper, rng)  # no options: plain Q-learning
    episodes, gap = 0, np.inf
    while episodes < spec.max_episodes:
        batch = min(spec.check_every, spec.max_episodes - episodes)
        learner.run_episodes(batch)
        episodes += batch
        q = learner.q_array()
        policy = greedy_policy(q)
        gap = _value_gap(model, policy, v_star, spec.gamma)
        if gap <= tolerance:
            return Expert(q, policy, episodes, gap)
    raise ExpertError(
        f"expert for {name}: greedy policy still {gap:.3g} below the optimal value at the start "
        f"(tolerance {tolerance}) after demonstrations.expert.max_episodes={spec.max_episodes} "
        f"episodes; raise max_episodes, or lower demonstrations.expert.alpha={spec.alpha}"
    )


def _value_gap(model: TabularModel, policy: np.ndarray, v_star: np.ndarray, gamma: float) -> float:
    """V*(s_0) - V^pi(s_0); infinite when pi cannot reach the goal and gamma = 1."""
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
    states, actions, rewards = [model.start], [], []
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


def collect_demonstrations(
    family: TaskFamily,
    train_tasks: Sequence[Task],
    spec: DemonstrationsSpec,
    seed: np.random.SeedSequence,
    tolerance: float | None = None,
) -> list[Trajectory]:
    """``spec.trajectories_per_task`` trajectories from an optimal expert on each train task.

    ``tolerance`` overrides ``spec.expert.tolerance`` (see :func:`train_expert`).

    Deterministic in ``seed``: train task i uses the children (i, 0) (expert training) and (i, 1)
    (sampling) of ``seed``, whatever the other tasks are.

    Raises:
      ExpertError: the family has no tabular model, or an expert fails (see :func:`train_expert`).
    """
    demos: list[Trajectory] = []
    for i, task in enumerate(train_tasks):
        model = family.tabular_model(task)
        if model is None:
            raise ExpertError(
                f"family {family.name!r} has no tabular model for {task.task_id}: tabular "
                f"Q-learning experts cannot be trained on it"
            )
        expert = train_expert(
            model,
            spec.expert,
            np.random.default_rng(_child(seed, i, 0)),
            spec.max_steps,
            tolerance,
            task.task_id,
        )
        rng = np.random.default_rng(_child(seed, i, 1))
        demos += [
            sample_trajectory(model, expert.policy, rng, spec.max_steps, task.task_id)
            for _ in range(spec.trajectories_per_task)
        ]
    return demos


def save_demonstrations(path: str | Path, trajectories: Sequence[Trajectory]) -> None:
    """Write trajectories to one ``.npz`` (concatenated arrays plus lengths and task ids)."""
    if not trajectories:
        raise ValueError(f"save_demonstrations({str(path)!r}): no trajectories to save")
    lengths = np.array([len(t) for t in trajectories], dtype=np.int64)
    np.savez_compressed(
        path,
        task_ids=np.array([t.task_id for t in trajectories], dtype=str),
        lengths=lengths,
        observations=np.concatenate([t.observations for t in trajectories]),
        actions=np.concatenate([t.actions for t in trajectories]),
        rewards=np.concatenate([t.rewards for t in trajectories]),
    )


def load_demonstrations(path: str | Path) -> list[Trajectory]:
    """Read what :func:`save_demonstrations` wrote."""
    with np.load(path) as data:
        lengths = data["lengths"]
        obs_ends = np.cumsum(lengths + 1)
        act_ends = np.cumsum(lengths)
        observations = np.split(data["observations"], obs_ends[:-1])
        actions = np.split(data["actions"], act_ends[:-1])
        rewards = np.split(data["rewards"], act_ends[:-1])
        task_ids = [str(t) for t in data["task_ids"]]
    return [
        Trajectory(*fields) for fields in zip(task_ids, observations, actions, rewards, strict=True)
    ]
