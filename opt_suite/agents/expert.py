"""Trained-agent experts and their demonstrations: the paper's Atari demonstration source.

The paper (Sec. 4.2) first learned "a good performing policy with A3C for each game", then "sampled
12 trajectories for training" from three train tasks, "each trajectory lasted until a life was
lost, not for the entire duration of the episode". Here:

- :func:`train_expert`: a PPO agent (:mod:`opt_suite.agents.ppo`; why PPO is said there) learns
  one train task within a budget of emulator frames, on one vector env of that task. Its weights are
  saved as a checkpoint keyed by everything that determines them (family params, task, expert
  params, seed, package versions); a rerun with the same key loads them instead of training.
- :func:`sample_demonstration`: one trajectory sampled from the expert's softmax policy (as from
  A3C's), from a reset until the first life is lost, the game ends, or the episode is cut; seeded.
- :func:`collect_agent_demonstrations`: ``trajectories_per_task`` demonstrations on each train task
  (3 x 4 = the paper's 12), deterministic in the seed.

A demonstration that the frame cap or ``max_steps`` cut before a life was lost is kept (it is what
the expert did) but counted in :attr:`AgentDemonstrations.cut`, so that callers can warn loudly.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from opt_suite.agents import ppo
from opt_suite.agents.environment import GymnasiumPyEnvironment
from opt_suite.agents.params import ExpertParams
from opt_suite.families.base import Task, TaskFamily
from opt_suite.trajectory import Trajectory

__all__ = [
    "AgentDemonstrations",
    "CutDemonstration",
    "TrainedExpert",
    "checkpoint_key",
    "collect_agent_demonstrations",
    "sample_demonstration",
    "cut_message",
    "reports_lives",
    "train_expert",
]

CHECKPOINT_FORMAT = 1


class CutDemonstration(RuntimeError):
    """A demonstration was cut (``max_steps`` or the episode cap) before its episode's end.

    The end is the first lost life on families whose envs report ``lives`` (Atari), else the
    episode's termination; the message says which.
    """


@dataclasses.dataclass(eq=False)
class TrainedExpert:
    """A trained actor network and what its training did.

    Attributes:
      actor: the tf-agents actor network (softmax policy over the task's actions).
      key: the checkpoint key (see :func:`checkpoint_key`).
      frames: emulator frames it was trained for.
      episode_returns: returns of the training episodes, in order (the expert's learning curve).
      reused: loaded from a checkpoint rather than trained now.
    """

    actor: Any
    key: str
    frames: int
    episode_returns: np.ndarray
    reused: bool = False
    _logits: Any = dataclasses.field(default=None, repr=False)

    def action_probabilities(self, observations: np.ndarray) -> np.ndarray:
        """pi(a | s) [N, A] for a batch of observations [N, ...]."""
        if self._logits is None:
            self._logits = ppo.policy_logits(self.actor)
        logits = self._logits(observations).astype(np.float64)
        logits -= logits.max(axis=-1, keepdims=True)
        probs = np.exp(logits)
        return probs / probs.sum(axis=-1, keepdims=True)


def _versions() -> dict[str, str]:
    names = ("opt-suite", "tensorflow", "tf-agents", "ale-py", "gymnasium")
    return {name: metadata.version(name) for name in names}


def checkpoint_key(family: TaskFamily, task: Task, params: ExpertParams, seed: int) -> str:
    """A hash of everything an expert's weights depend on (a changed input retrains)."""
    plain = {
        "format": CHECKPOINT_FORMAT,
        "family": type(family).name,
        "family_params": dataclasses.asdict(family.params),
        "task": dataclasses.asdict(task.params),
        "expert": dataclasses.asdict(params),
        "seed": int(seed),
        "versions": _versions(),
    }
    return hashlib.sha256(json.dumps(plain, sort_keys=True).encode()).hexdigest()


def train_expert(
    family: TaskFamily,
    task: Task,
    params: ExpertParams,
    seed: int,
    checkpoint: str | Path | None = None,
    progress: Callable[[ppo.TrainingLog], None] | None = None,
) -> TrainedExpert:
    """A PPO expert for ``task`` trained for ``params.frames`` emulator frames, or its checkpoint.

    Args:
      family: the family (its ``make_vector_env`` acts in lockstep).
      task: the train task.
      params: budget and agent settings.
      seed: networks, policy samples and env seeds all derive from it.
      checkpoint: an ``.npz`` path; reused when it holds this key, (over)written after training.
      progress: called after every PPO iteration with the training log so far.
    """
    key = checkpoint_key(family, task, params, seed)
    env = family.make_vector_env(task, params.ppo.num_envs)
    py_env = GymnasiumPyEnvironment(env, seed=seed)
    agent = ppo.build_agent(py_env.time_step_spec(), py_env.action_spec(), params.ppo, seed)
    if checkpoint is not None and Path(checkpoint).exists():
        loaded = _load(Path(checkpoint), key)
        if loaded is not None:
            weights, frames, returns = loaded
            agent.actor_net.set_weights(weights)
            py_env.close()
            return TrainedExpert(agent.actor_net, key, frames, returns, reused=True)
    log = ppo.train(py_env, agent, params.ppo, params.frames, progress)
    py_env.close()
    returns = np.array(log.episode_returns, dtype=np.float64)
    if checkpoint is not None:
        _save(Path(checkpoint), key, agent.actor_net.get_weights(), log.frames, returns)
    return TrainedExpert(agent.actor_net, key, log.frames, returns)


def _save(
    path: Path, key: str, weights: list[np.ndarray], frames: int, returns: np.ndarray
) -> None:
    """Write the checkpoint atomically (a crash never leaves half a file under the real name)."""
    buffer = io.BytesIO()
    arrays: dict[str, Any] = {f"weight_{i}": w for i, w in enumerate(weights)}
    np.savez_compressed(
        buffer,
        key=np.array(key),
        frames=np.array(frames),
        episode_returns=returns,
        num_weights=np.array(len(weights)),
        **arrays,
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(buffer.getvalue())
    os.replace(partial, path)


def _load(path: Path, key: str) -> tuple[list[np.ndarray], int, np.ndarray] | None:
    """The checkpoint's weights if it holds ``key``; None for another key or an unreadable file."""
    try:
        with np.load(path) as data:
            if str(data["key"]) != key:
                return None
            weights = [data[f"weight_{i}"] for i in range(int(data["num_weights"]))]
            return weights, int(data["frames"]), data["episode_returns"]
    except (OSError, ValueError, KeyError):
        return None


def sample_demonstration(
    family: TaskFamily,
    task: Task,
    expert: TrainedExpert,
    rng: np.random.Generator,
    max_steps: int,
) -> tuple[Trajectory, bool]:
    """One trajectory from a reset until a life is lost (or the game ends, or it is cut).

    The env's reset seed and every action come from ``rng``. Returns the trajectory and whether it
    was cut (by the env's frame cap or ``max_steps``) before a life was lost.
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
        probs = expert.action_probabilities(obs[None])[0]
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


def cut_message(task_id: str, steps: int, max_steps: int, lives: bool) -> str:
    """Why a demonstration on ``task_id`` was cut, in the words of its family (lives or not)."""
    if lives:
        end, cap = "a life was lost", "or the family's max_episode_frames"
    else:
        end, cap = "the episode ended", "or the family's episode cap"
    return (
        f"demonstration on {task_id} was cut after {steps} steps before {end} "
        f"(demonstrations.max_steps = {max_steps}, {cap}); raise them, or train the expert "
        "longer (demonstrations.params.frames)"
    )


@dataclasses.dataclass(frozen=True, eq=False)
class AgentDemonstrations:
    """Demonstrations of trained experts, with what their experts did.

    Attributes:
      trajectories: ``trajectories_per_task`` per train task, in task order.
      experts: one per train task.
      cut: how many trajectories were cut before a life was lost.
    """

    trajectories: list[Trajectory]
    experts: list[TrainedExpert]
    cut: int


def _seed(parent: np.random.SeedSequence, *key: int) -> np.random.SeedSequence:
    return np.random.SeedSequence(parent.entropy, spawn_key=(*parent.spawn_key, *key))


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
    for i, task in enumerate(train_tasks):
        expert_seed = int(_seed(seed, i, 0).generate_state(1)[0] % (2**31 - 1))
        path = None
        if checkpoint_dir is not None:
            key = checkpoint_key(family, task, params, expert_seed)
            path = Path(checkpoint_dir) / f"expert-{key[:24]}.npz"
        expert = train_expert(family, task, params, expert_seed, path)
        experts.append(expert)
        rng = np.random.default_rng(_seed(seed, i, 1))
        for _ in range(trajectories_per_task):
            trajectory, was_cut = sample_demonstration(family, task, expert, rng, max_steps)
            if was_cut and not allow_cut:
                raise CutDemonstration(
                    cut_message(
                        task.task_id, len(trajectory), max_steps, reports_lives(family, task)
                    )
                )
            trajectories.append(trajectory)
            cut += was_cut
    return AgentDemonstrations(trajectories, experts, cut)
