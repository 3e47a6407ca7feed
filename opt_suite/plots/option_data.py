"""What the option pictures show, as plain arrays (tested without drawing a pixel).

Every picture of ``opt_suite.plots.options`` is made from these: grid images of per-state values,
the arrow of each state's most likely action, the probability an option gives to each demonstrated
action, and how often a policy over options picks each option.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import numpy.typing as npt

from opt_suite.families.base import TabularModel
from opt_suite.trajectory import Trajectory

__all__ = [
    "Arrows",
    "grid_image",
    "greedy_arrows",
    "demonstrated_action_probs",
    "option_usage",
    "epsilon_greedy_policy",
    "path_cells",
]


def _check_grid(model: TabularModel) -> tuple[np.ndarray, tuple[int, int]]:
    if model.cells is None or model.shape is None:
        raise ValueError("option pictures need a grid family (TabularModel.cells and .shape)")
    return np.asarray(model.cells), model.shape


def grid_image(model: TabularModel, values: np.ndarray) -> np.ndarray:
    """Grid image [rows, cols] of ``values[s]`` at each state's cell, NaN on walls (drawn blank)."""
    cells, shape = _check_grid(model)
    values = np.asarray(values, dtype=float)
    if values.shape != (model.num_states,):
        raise ValueError(f"expected one value per state [{model.num_states}], got {values.shape}")
    image = np.full(shape, np.nan)
    image[cells[:, 0], cells[:, 1]] = values
    return image


@dataclasses.dataclass(frozen=True, eq=False)
class Arrows:
    """One arrow per state: from the cell's centre along its most likely action's move.

    Attributes:
      rows, cols: float [S] cell centres.
      d_rows, d_cols: float [S] the move of argmax_a μ(s, a) (row down is +1).
      actions: int [S] argmax_a μ(s, a).
      confidence: float [S] max_a μ(s, a).
    """

    rows: np.ndarray
    cols: np.ndarray
    d_rows: np.ndarray
    d_cols: np.ndarray
    actions: np.ndarray
    confidence: np.ndarray


def greedy_arrows(model: TabularModel, mu: np.ndarray, moves: np.ndarray) -> Arrows:
    """The arrow of argmax_a μ(s, a) at every state.

    Args:
      model: a grid task's model (for the cells).
      mu: [S, A] one option's action probabilities.
      moves: int [A, 2] (d_row, d_col) of each action, e.g. ``grid_dynamics.MOVES``.
    """
    cells, _ = _check_grid(model)
    mu = np.asarray(mu, dtype=float)
    if mu.shape != (model.num_states, len(moves)):
        raise ValueError(
            f"expected mu [{model.num_states}, {len(moves)}] (states, actions), got {mu.shape}"
        )
    actions = mu.argmax(axis=1)
    move = np.asarray(moves, dtype=float)[actions]
    return Arrows(
        cells[:, 0].astype(float),
        cells[:, 1].astype(float),
        move[:, 0],
        move[:, 1],
        actions,
        mu.max(axis=1),
    )


def demonstrated_action_probs(mu: np.ndarray, trajectory: Trajectory) -> np.ndarray:
    """μ_o(s_t, a_t) [T]: how likely one option is to take each demonstrated action."""
    states = np.asarray(trajectory.observations)[: len(trajectory)]
    return np.asarray(mu, dtype=float)[states, np.asarray(trajectory.actions)]


def path_cells(model: TabularModel, states: npt.ArrayLike) -> np.ndarray:
    """The (row, col) [len(states), 2] of a sequence of states."""
    cells, _ = _check_grid(model)
    return cells[np.asarray(states, dtype=int)]


def option_usage(pi: np.ndarray, num_actions: int) -> np.ndarray:
    """π(s, o) [m, S] of each learned option o (the columns after the A primitives of ``pi``)."""
    pi = np.asarray(pi, dtype=float)
    if pi.ndim != 2 or pi.shape[1] < num_actions:
        raise ValueError(f"expected pi [S, A + m] with A = {num_actions}, got shape {pi.shape}")
    return pi[:, num_actions:].T


def epsilon_greedy_policy(q: np.ndarray, epsilon: float) -> np.ndarray:
    """The probabilities [S, O] with which ε-greedy on ``q`` [S, O] picks each option.

    A uniformly random option with probability ε, else a greedy one (ties shared equally) — the
    test-time learner's choice rule, so this is "the probability that π would execute each option"
    of the paper's Figure 2.
    """
    q = np.asarray(q, dtype=float)
    greedy = np.isclose(q, q.max(axis=1, keepdims=True), rtol=0.0, atol=1e-12)
    greedy = greedy / greedy.sum(axis=1, keepdims=True)
    return epsilon / q.shape[1] + (1.0 - epsilon) * greedy
