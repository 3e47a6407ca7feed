"""The ``q_learning`` expert without a model: tabular Q-learning stepping the task's env.

On a family with index observations and no exact model (a gymnasium env such as FrozenLake) the
expert learns as on a model (:mod:`.qlearning`: Watkins' update, epsilon-greedy, a cut episode
bootstraps) from the env's own transitions, Q over the ``Discrete`` space's ``n`` indices.

**Ties are broken at random while it learns.** Q starts at zero and a goal task pays only at its
goal, so until the goal is first found every action of every state ties. Ties to the first best
action (what the model's compiled loop does) make the exploring agent walk into one wall: on the
deterministic 4x4 FrozenLake, with epsilon 0.2, its goal was never reached in 20,000 episodes. A
uniformly random choice among the tied best actions is a random walk until the first reward, which
finds the goal of a small map within tens of episodes. The greedy policy that is checked and
demonstrated still takes the first best action (it is deterministic).

**When it stops.** Without a model its greedy policy cannot be compared with the optimal one, so
the model's test (V*(s_0) - V^pi(s_0) <= tolerance) becomes a plateau test on the env: every
``check_every`` episodes the greedy policy is rolled out :data:`CHECK_ROLLOUTS` times (seeded
resets); training stops once some training episodes returned more than others (FrozenLake: one
found the goal), every rollout's episode ended (none cut at ``max_steps``), one of them reached
the best return any training episode reached (the goal, when only the goal pays),
and their mean return gained at most ``tolerance`` x scale over the previous check (scale: the
largest absolute mean return or reward seen, at least 1e-12). Not optimality: a plateau of the
greedy return, which is what a model-free expert can know. After ``max_episodes`` without it: an
error saying how far it got.

**Demonstrations** are the greedy policy's episodes that reach that best return; on a stochastic
env some do not (FrozenLake's slippery ice drops the agent into a hole): those are dropped with a
warning line, and up to :data:`TRIES_PER_DEMONSTRATION` x ``trajectories_per_task`` episodes are
tried before fewer demonstrations than asked is an error naming the task.

Every draw (exploration, the envs' reset seeds) comes from the generator the caller seeds.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

__all__ = [
    "CHECK_ROLLOUTS",
    "TRIES_PER_DEMONSTRATION",
    "EnvExpert",
    "greedy_rollout",
    "train_on_env",
]

#: Greedy rollouts per check (their mean return is the plateau test's number).
CHECK_ROLLOUTS = 10
#: Of the CHECK_ROLLOUTS, how many must reach the best return for a plateau. One would be luck
#: on a stochastic env (slippery FrozenLake stopped with a greedy policy that reached the goal 2%
#: of the time, too rarely to give its demonstrations); on a deterministic env all or none do.
MIN_REACHING_BEST = 3
#: Greedy episodes tried per demonstration asked for before too few reached the best return.
TRIES_PER_DEMONSTRATION = 10


@dataclasses.dataclass(frozen=True, eq=False)
class EnvExpert:
    """A model-free expert: Q [S, A], its greedy policy, episodes trained, last checked return."""

    q: np.ndarray
    policy: np.ndarray
    episodes: int
    mean_return: float
    best_return: float


def _greedy(q_row: np.ndarray, rng: np.random.Generator) -> int:
    """A best action of ``q_row``; one drawn uniformly when several tie (see the docstring)."""
    best = np.flatnonzero(q_row == q_row.max())
    return int(best[0]) if best.size == 1 else int(rng.choice(best))


def _episode(env: Any, q: np.ndarray, spec: Any, max_steps: int, rng: np.random.Generator) -> float:
    """One epsilon-greedy Q-learning episode on ``env`` (already reset); returns its return."""
    num_states, num_actions = q.shape
    s = int(env.last_observation)
    total = 0.0
    for _ in range(max_steps):
        if rng.random() < spec.epsilon:
            a = int(rng.integers(num_actions))
        else:
            a = _greedy(q[s], rng)
        obs, r, terminated, truncated, _ = env.step(a)
        s2 = int(obs)
        target = float(r) if terminated else float(r) + spec.gamma * float(q[s2].max())
        q[s, a] += spec.alpha * (target - q[s, a])
        total += float(r)
        s = s2
        if terminated or truncated:
            break
    return total


class _Tracked:
    """An env that remembers its last observation (the episode loop starts from it)."""

    def __init__(self, env: Any) -> None:
        self.env = env
        self.last_observation: Any = None

    def reset(self, seed: int) -> Any:
        self.last_observation, _ = self.env.reset(seed=seed)
        return self.last_observation

    def step(self, action: int) -> Any:
        out = self.env.step(action)
        self.last_observation = out[0]
        return out


def greedy_rollout(
    env: Any, policy: np.ndarray, seed: int, max_steps: int
) -> tuple[list[int], list[int], list[float], bool]:
    """(states, actions, rewards, ended) of the greedy ``policy`` from a reset with ``seed``."""
    obs, _ = env.reset(seed=seed)
    states, actions, rewards = [int(obs)], [], []
    for _ in range(max_steps):
        a = int(policy[states[-1]])
        obs, r, terminated, truncated, _ = env.step(a)
        states.append(int(obs))
        actions.append(a)
        rewards.append(float(r))
        if terminated:
            return states, actions, rewards, True
        if truncated:
            break
    return states, actions, rewards, False


def train_on_env(
    env: Any, num_states: int, spec: Any, rng: np.random.Generator, max_steps: int, name: str
) -> EnvExpert:
    """Q-learning on ``env`` until the greedy return plateaus (see the module docstring).

    Raises:
      ValueError: no plateau within ``spec.max_episodes`` episodes (the caller makes it an
        ExpertError), saying the last mean return and how many rollouts ended.
    """
    q = np.zeros((num_states, int(env.action_space.n)))
    tracked = _Tracked(env)
    episodes, previous, scale = 0, None, 1e-12
    mean, ended, best, worst = float("nan"), 0, -np.inf, np.inf
    while episodes < spec.max_episodes:
        for _ in range(min(spec.check_every, spec.max_episodes - episodes)):
            tracked.reset(int(rng.integers(2**31 - 1)))
            episode_return = _episode(tracked, q, spec, max_steps, rng)
            best, worst = max(best, episode_return), min(worst, episode_return)
            episodes += 1
        if best <= worst:  # every episode returned the same: nothing learned to tell apart yet
            continue
        policy = np.argmax(q, axis=1)
        rollouts = [
            greedy_rollout(env, policy, int(rng.integers(2**31 - 1)), max_steps)
            for _ in range(CHECK_ROLLOUTS)
        ]
        ended = sum(r[3] for r in rollouts)
        mean = float(np.mean([sum(r[2]) for r in rollouts]))
        rewards = [abs(x) for r in rollouts for x in r[2]]
        scale = max(scale, abs(mean), max(rewards, default=0.0))
        reaching = sum(sum(r[2]) >= best - spec.tolerance * scale for r in rollouts)
        reaches_best = reaching >= MIN_REACHING_BEST
        if (
            ended == CHECK_ROLLOUTS
            and reaches_best
            and previous is not None
            and mean - previous <= spec.tolerance * scale
        ):
            return EnvExpert(q.copy(), policy, episodes, mean, float(best))
        previous = mean
    raise ValueError(
        f"expert for {name} (no model: Q-learning on the env): after "
        f"demonstrations.params.max_episodes={spec.max_episodes} episodes its greedy policy "
        f"ended {ended} of {CHECK_ROLLOUTS} rollouts within demonstrations.max_steps={max_steps} "
        f"steps, mean return {mean:.4g} (best episode in training: {best:.4g}), not yet a "
        "plateau that reaches the best return; raise max_episodes or max_steps"
    )
