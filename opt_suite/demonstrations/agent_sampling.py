"""Demonstrations sampled from trained PPO experts: the paper's Atari demonstration protocol.

The paper (Sec. 4.2) first learned "a good performing policy with A3C for each game", then "sampled
12 trajectories for training" from three train tasks, "each trajectory lasted until a life was
lost, not for the entire duration of the episode". The experts and their checkpoints are
:mod:`opt_suite.agents.expert`'s; here:

- :func:`sample_demonstration`: one trajectory sampled from the expert's softmax policy (as from
  A3C's), from a reset until the first life is lost, the game ends, or the episode is cut; seeded.
- :func:`collect_agent_demonstrations`: ``trajectories_per_task`` demonstrations on each train task
  (3 x 4 = the paper's 12), deterministic in the seed.

A demonstration that the frame cap or ``max_steps`` cut before a life was lost is kept (it is what
the expert did) but counted in :attr:`AgentDemonstrations.cut`, so that callers can warn loudly.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from opt_suite.agents.expert import TrainedExpert, checkpoint_key, sidecar_name, train_expert
from opt_suite.agents.params import ExpertParams
from opt_suite.demonstrations.base import episode_caps
from opt_suite.families.base import Task, TaskFamily
from opt_suite.trajectory import Trajectory

__all__ = [
    "AgentDemonstrations",
    "CutDemonstration",
    "checkpoint_names",
    "collect_agent_demonstrations",
    "cut_message",
    "reports_lives",
    "sample_demonstration",
    "task_caps",
]


class CutDemonstration(RuntimeError):
    """A demonstration was cut (``max_steps`` or the episode cap) before its episode's end.

    The end is the first lost life on families whose envs report ``lives`` (Atari), else the
    episode's termination; the message says which.
    """


def sample_demonstration(
    family: TaskFamily,
    task: Task,
    expert: TrainedExpert,
    rng: np.random.Generator,
    max_steps: int,
) -> tuple[Trajectory, bool]:
    """One trajectory from a reset until a life is lost (or the game ends, or it is cut).

    The env's reset seed and every action come from ``rng``. Returns the trajectory and whether it
    was cut (by the env's frame cap or ``max_steps``) before a life was lost, unless the family
    says the cut episode succeeded (:meth:`TaskFamily.solved_when_cut`).
    """
    env = family.make_env(task)
    reset_seed = int(rng.integers(2**31 - 1))
    obs, info = env.reset(seed=reset_seed)
    lives = info.get("lives", 0)
    observations: list[np.ndarray] = [obs]
    actions: list[int] = []
    rewards: list[float] = []
    cut = True
    while len(actions) < max_steps:
        probs = expert.action_probabilities(np.asarray(obs)[None])[0]
        action = int(rng.choice(len(probs), p=probs))
        obs, reward, terminated, truncated, info = env.step(action)
        observations.append(obs)
        actions.append(action)
        rewards.append(float(reward))
        if terminated or info.get("lives", 0) < lives:
            cut = False
            break
        if truncated:
            break
    env.close()
    if cut and family.solved_when_cut(task, float(np.sum(rewards))):
        cut = False  # a survival task's cap is its success (CartPole balanced to its limit)
    trajectory = Trajectory(
        task.task_id,
        np.stack(observations),
        np.array(actions, dtype=np.int64),
        np.array(rewards, dtype=np.float64),
        reset_seed=reset_seed,  # replaying the actions from this reset reaches every state
    )
    return trajectory, cut


def reports_lives(family: TaskFamily, task: Task) -> bool:
    """Whether ``task``'s env reports ``lives`` (Atari): demonstrations then end at a lost life."""
    env = family.make_env(task)
    try:
        return "lives" in env.reset(seed=0)[1]
    finally:
        env.close()


def cut_message(
    task_id: str, steps: int, max_steps: int, lives: bool, caps: str | None = None
) -> str:
    """Why a demonstration on ``task_id`` was cut, in the words of its family (lives or not).

    ``caps``: every cap that applies (``demonstrations.base.episode_caps``), else named generally.
    """
    if lives:
        end, cap = "a life was lost", "or the family's max_episode_frames"
    else:
        end, cap = "the episode ended", "or the family's episode cap"
    where = f"caps: {caps}" if caps else f"demonstrations.max_steps = {max_steps}, {cap}"
    return (
        f"demonstration on {task_id} was cut after {steps} steps before {end} "
        f"({where}); raise them, or train the expert longer (demonstrations.params.frames)"
    )


def task_caps(family: TaskFamily, task: Task, max_steps: int) -> str:
    """Every step cap of a demonstration on ``task`` (the env's own included)."""
    env = family.make_env(task)
    try:
        return episode_caps(env, family, max_steps)
    finally:
        env.close()


@dataclasses.dataclass(frozen=True, eq=False)
class AgentDemonstrations:
    """Demonstrations of trained experts, with what their experts did.

    Attributes:
      trajectories: ``trajectories_per_task`` per train task, in task order.
      experts: one per train task.
      cut: how many trajectories were cut before a life was lost.
      was_cut: per trajectory, whether it was cut; cut_messages: per cut one, why (its task, the
        steps reached and every cap).
    """

    trajectories: list[Trajectory]
    experts: list[TrainedExpert]
    cut: int
    was_cut: list[bool] = dataclasses.field(default_factory=list)
    cut_messages: list[str] = dataclasses.field(default_factory=list)


def _seed(parent: np.random.SeedSequence, *key: int) -> np.random.SeedSequence:
    return np.random.SeedSequence(parent.entropy, spawn_key=(*parent.spawn_key, *key))


def _expert_seed(seed: np.random.SeedSequence, task_position: int) -> int:
    return int(_seed(seed, task_position, 0).generate_state(1)[0] % (2**31 - 1))


def _checkpoint_name(family: TaskFamily, task: Task, params: ExpertParams, seed: int) -> str:
    return f"expert-{checkpoint_key(family, task, params, seed)[:24]}.npz"


def checkpoint_names(
    family: TaskFamily,
    train_tasks: Sequence[Task],
    params: ExpertParams,
    seed: np.random.SeedSequence,
) -> list[str]:
    """The files :func:`collect_agent_demonstrations` reads in its ``checkpoint_dir`` if present.

    Each expert's checkpoint and its sidecar of digests, in the order they are written; a runner
    that computes the cell on another machine sends the ones it has along.
    """
    names = []
    for i, task in enumerate(train_tasks):
        name = _checkpoint_name(family, task, params, _expert_seed(seed, i))
        names += [name, sidecar_name(name)]
    return names


def collect_agent_demonstrations(
    family: TaskFamily,
    train_tasks: Sequence[Task],
    params: ExpertParams,
    trajectories_per_task: int,
    max_steps: int,
    seed: np.random.SeedSequence,
    checkpoint_dir: str | Path | None = None,
    allow_cut: bool = True,
) -> AgentDemonstrations:
    """Train (or reload) an expert per train task and sample its demonstrations.

    Deterministic in ``seed``: train task i uses the children (i, 0) (expert) and (i, 1)
    (sampling) of ``seed``, whatever the other tasks are. Checkpoints are
    ``checkpoint_dir/expert-<key>.npz``, named by :func:`checkpoint_key`, so experts of different
    specs or seeds can share one directory.

    Raises:
      CutDemonstration: ``allow_cut`` is False and a trajectory was cut, naming its task.
    """
    trajectories, experts, cut = [], [], 0
    was_cut: list[bool] = []
    messages: list[str] = []
    for i, task in enumerate(train_tasks):
        expert_seed = _expert_seed(seed, i)
        path = None
        if checkpoint_dir is not None:
            path = Path(checkpoint_dir) / _checkpoint_name(family, task, params, expert_seed)
        expert = train_expert(family, task, params, expert_seed, path)
        experts.append(expert)
        rng = np.random.default_rng(_seed(seed, i, 1))
        for _ in range(trajectories_per_task):
            trajectory, this_cut = sample_demonstration(family, task, expert, rng, max_steps)
            if this_cut:
                caps = task_caps(family, task, max_steps)
                lives = reports_lives(family, task)
                message = cut_message(task.task_id, len(trajectory), max_steps, lives, caps)
                if not allow_cut:
                    raise CutDemonstration(message)
                messages.append(message)
            trajectories.append(trajectory)
            was_cut.append(this_cut)
            cut += this_cut
    return AgentDemonstrations(trajectories, experts, cut, was_cut, messages)
