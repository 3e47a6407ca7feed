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
    """The option-critic four-rooms dynamics (Bacon, Harb & Precup 2017, Sec. 5, four-rooms).

    The paper: "primitive movements can fail with probability 1/3, in which case the agent
    transitions randomly to one of the empty adjacent cells". So with probability ``1 - fail_prob``
    the intended move happens (a move into a wall leaves the agent in place), and with
    probability ``fail_prob`` the move fails and the agent lands on a uniformly random free
    neighbour of the cell it is in.

    The released code (jeanharb/option_critic, ``fourrooms/fourrooms.py``) contradicts its own
    docstring: it first makes the intended move, then displaces the agent around the *new* cell, and
    never displaces it after a bump into a wall. We implement the paper's intent, as the issue asks.

    Outcome 0 is "the intended move", outcome ``1 + d`` is "failed, displaced in direction d"
    (probability 0 where that direction is blocked). K = 5.

    Returns:
      ``next_state`` int32 [S, 4, 5] and ``prob`` float64 [S, 4, 5].
    """
    nbr = neighbours(walls)  # [S, 4]
    num_states = len(nbr)
    open_around = nbr != np.arange(num_states)[:, None]  # [S, 4]: free neighbours of the cell
    # Four rooms has no isolated cells; guard anyway so an isolated cell simply stays put.
    count = np.maximum(open_around.sum(axis=-1, keepdims=True), 1)
    displaced = np.where(open_around, fail_prob / count, 0.0)  # [S, 4]
    stay_share = np.where(open_around.any(axis=-1, keepdims=True), 0.0, fail_prob)
    next_state = np.concatenate(
        [nbr[..., None], np.broadcast_to(nbr[:, None, :], nbr.shape + (4,))], axis=-1
    ).astype(np.int32)
    prob = np.concatenate(
        [
            np.full(nbr.shape + (1,), 1.0 - fail_prob),
            np.broadcast_to(displaced[:, None, :], nbr.shape + (4,)),
        ],
        axis=-1,
    ).copy()
    # An isolated cell (no free neighbour): the failed move also leaves it in place.
    prob[..., 0] += np.broadcast_to(stay_share, nbr.shape)
    return next_state, prob
