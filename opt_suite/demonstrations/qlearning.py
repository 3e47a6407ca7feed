"""Tabular epsilon-greedy Q-learning on an exact model, compiled: the ``q_learning`` expert's loop.

Watkins (1989): Q(s, a) <- Q(s, a) + alpha [r + gamma max_a' Q(s', a') - Q(s, a)], with no
bootstrap from a terminal state; an episode cut at ``max_steps`` bootstraps (it is not an end).
Ties in the greedy choice go to the first best action. Every random draw comes from
``np.random`` inside the compiled function, seeded per call from the caller's Generator, so a run
is a function of that Generator alone.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["q_learning_episodes"]


@numba.njit(cache=True)
def _episodes(next_state, cumulative, reward, terminal, start, q, alpha, gamma, epsilon,
              max_steps, episodes, seed):  # fmt: skip
    np.random.seed(seed)
    num_actions = q.shape[1]
    outcomes = cumulative.shape[2]
    for _ in range(episodes):
        s = start
        for _ in range(max_steps):
            if np.random.random() < epsilon:
                a = np.random.randint(num_actions)
            else:
                a = 0
                for b in range(1, num_actions):
                    if q[s, b] > q[s, a]:
                        a = b
            u = np.random.random()
            k = 0
            while k < outcomes - 1 and u >= cumulative[s, a, k]:
                k += 1
            s2 = next_state[s, a, k]
            target = reward[s, a, k]
            if not terminal[s2]:
                best = q[s2, 0]
                for b in range(1, num_actions):
                    best = max(best, q[s2, b])
                target += gamma * best
            q[s, a] += alpha * (target - q[s, a])
            s = s2
            if terminal[s]:
                break


def q_learning_episodes(
    model, q: np.ndarray, alpha: float, gamma: float, epsilon: float, max_steps: int,
    episodes: int, rng: np.random.Generator,
) -> None:  # fmt: skip
    """Run ``episodes`` Q-learning episodes from ``model.start``, updating ``q`` [S, A] in place."""
    cumulative = np.cumsum(model.prob, axis=-1)
    cumulative = cumulative / cumulative[..., -1:]
    _episodes(
        np.ascontiguousarray(model.next_state, dtype=np.int64),
        np.ascontiguousarray(cumulative),
        np.ascontiguousarray(model.reward, dtype=np.float64),
        np.ascontiguousarray(model.terminal),
        int(model.start),
        q,
        float(alpha),
        float(gamma),
        float(epsilon),
        int(max_steps),
        int(episodes),
        int(rng.integers(2**31 - 1)),
    )
