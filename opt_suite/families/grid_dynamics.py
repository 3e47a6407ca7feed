"""Exact, vectorised transition tables of a grid world (reward-independent, shared by tasks).

States are the free cells in row-major order. Actions are ``up, down, left, right`` (the order of
the option-critic code). Tables are in :class:`~opt_suite.families.base.TabularModel`'s "K outcomes
per (s, a)" form: ``next_state[s, a, k]`` with probability ``prob[s, a, k]``. A move into a wall or
off the map leaves the agent where it is.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ACTIONS", "MOVES", "states_of", "neighbours", "slip_table", "random_neighbour_table"]

ACTIONS = ("up", "down", "left", "right")
MOVES = np.array([(-1, 0), (1, 0), (0, -1), (0, 1)], dtype=np.int32)


def states_of(walls: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``cells`` int32 [S, 2] (row, col) of each state, ``index`` int32 [rows, cols] (-1: wall)."""
    cells = np.argwhere(~walls).astype(np.int32)
    index = np.full(walls.shape, -1, dtype=np.int32)
    index[cells[:, 0], cells[:, 1]] = np.arange(len(cells), dtype=np.int32)
    return cells, index


def neighbours(walls: np.ndarray) -> np.ndarray:
    """int32 [S, 4]: the state one move away in each direction, or the state itself when blocked."""
    cells, index = states_of(walls)
    target = cells[:, None, :] + MOVES[None, :, :]  # [S, 4, 2]
    rows, cols = walls.shape
    on_map = (target[..., 0] >= 0) & (target[..., 0] < rows) & (target[..., 1] >= 0)
    on_map &= target[..., 1] < cols
    clipped = np.clip(target, 0, [rows - 1, cols - 1])
    landed = index[clipped[..., 0], clipped[..., 1]]
    here = np.broadcast_to(np.arange(len(cells), dtype=np.int32)[:, None], landed.shape)
    return np.where(on_map & (landed >= 0), landed, here).astype(np.int32)


def slip_table(walls: np.ndarray, slip: float) -> tuple[np.ndarray, np.ndarray]:
    """The paper's dynamics (Sec. 5.1): the intended move w.p. ``1 - slip``, else another direction.

    Outcome ``k`` is "moved in direction k": probability ``1 - slip`` for ``k == a`` and
    ``slip / 3`` for each of the other three directions. K = 4; outcomes that bump into walls share
    the next state (the agent's own), which is harmless for a "K outcomes" table.

    Returns:
      ``next_state`` int32 [S, 4, 4] and ``prob`` float64 [S, 4, 4].
    """
    nbr = neighbours(walls)
    next_state = np.repeat(nbr[:, None, :], 4, axis=1)
    per_action = np.where(np.eye(4, dtype=bool), 1.0 - slip, slip / 3.0)  # [a, k]
    prob = np.broadcast_to(per_action, next_state.shape).copy()
    return next_state, prob


def random_neighbour_table(walls: np.ndarray, fail_prob: float) -> tuple[np.ndarray, np.ndarray]:
    """The option-critic four-rooms dynamics (Bacon, Harb & Precup 2017, their released code).

    A move into a wall leaves the agent in place (probability 1). Otherwise the agent moves to the
    intended cell ``n``, and then with probability ``fail_prob`` is displaced to a uniformly random
    free neighbour of ``n`` (which may be the cell it came from). This is the released code's order
    of events; the paper's wording ("transitions randomly to one of the empty adjacent cells") does
    not say adjacent to which cell.

    Outcome 0 is "stayed at ``n``", outcome ``1 + d`` is "displaced from ``n`` in direction d"
    (probability 0 where that direction is blocked). K = 5.

    Returns:
      ``next_state`` int32 [S, 4, 5] and ``prob`` float64 [S, 4, 5].
    """
    nbr = neighbours(walls)
    num_states = len(nbr)
    intended = nbr  # [S, A]
    bumped = intended == np.arange(num_states)[:, None]
    around = nbr[intended]  # [S, A, 4]: neighbours of the intended cell
    open_around = around != intended[..., None]
    share = fail_prob / open_around.sum(axis=-1, keepdims=True)  # >= 1 open: the cell came from
    next_state = np.concatenate([intended[..., None], around], axis=-1).astype(np.int32)
    prob = np.concatenate(
        [np.full(intended.shape + (1,), 1.0 - fail_prob), np.where(open_around, share, 0.0)],
        axis=-1,
    )
    prob[bumped] = np.eye(5)[0]  # a bump into a wall is never displaced
    return next_state, prob
