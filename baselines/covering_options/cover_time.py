"""The expected cover time of a random walk on a graph, by seeded simulation (the fidelity measure).

Jinnai et al. (2019) evaluate covering options by the expected number of steps a random walk takes
to visit every state (the expected cover time). An option adds an edge, so the walk with
options is the walk on the graph with the option edges added: from s it moves to s' with
probability W[s, s'] / sum_s'' W[s, s''] (an option is one more choice where it can start). The
exact expected cover time is exponential to compute; a few hundred walks, vectorised over walks,
estimate it to a few per cent.
"""

from __future__ import annotations

import numpy as np

__all__ = ["cover_times"]


def cover_times(
    weights: np.ndarray, walks: int, rng: np.random.Generator, max_steps: int = 10**6
) -> np.ndarray:
    """Steps (int [walks]) each walk from a uniformly drawn start takes to visit every vertex.

    Args:
      weights: float [n, n], symmetric, >= 0: a connected graph (the walk follows its edges).
      walks: how many independent walks.
      rng: the generator that draws starts and steps.
      max_steps: a walk not done by then is an error, not a cut-off number.

    Raises:
      ValueError: a vertex without edges, or a walk that has not covered the graph in max_steps.
    """
    weights = np.asarray(weights, dtype=np.float64)
    n = weights.shape[0]
    degree = weights.sum(axis=1)
    if np.any(degree <= 0.0):
        raise ValueError(f"cover_times: {int((degree <= 0).sum())} vertices have no edges")
    cumulative = np.cumsum(weights / degree[:, None], axis=1)
    cumulative[:, -1] = 1.0  # round-off must not make the last neighbour unreachable
    state = rng.integers(n, size=walks)
    visited = np.zeros((walks, n), dtype=bool)
    visited[np.arange(walks), state] = True
    unseen = np.full(walks, n - 1)
    done_at = np.zeros(walks, dtype=np.int64)
    for step in range(1, max_steps + 1):
        live = np.flatnonzero(unseen > 0)
        if live.size == 0:
            return done_at
        draw = rng.random(live.size)
        state[live] = (cumulative[state[live]] < draw[:, None]).sum(axis=1)
        new = ~visited[live, state[live]]
        visited[live, state[live]] = True
        unseen[live] -= new
        done_at[live[unseen[live] == 0]] = step
    raise ValueError(f"cover_times: a walk had not covered the graph after {max_steps} steps")
