"""Eigenpurposes and the eigenoptions that maximise them (Machado, Bellemare & Bowling 2017).

For an eigenvector ``e`` of the normalised Laplacian, the eigenpurpose is the intrinsic reward

    r^e(s, s') = e[s'] - e[s]            (Machado et al. 2017, Sec. 3, "eigenpurpose")

(e^T (phi(s') - phi(s)) with tabular one-hot phi). The eigenbehaviour is the optimal policy for r^e
in the MDP whose actions are the primitives plus ``terminate`` (value 0); the eigenoption follows it
and terminates where terminating is optimal, i.e. where *no action has positive value*:

    beta(s) = 1  iff  max_a q^e(s, a) <= 0.

We solve each eigenpurpose MDP by value iteration with the discount the authors use (0.9; their code
runs policy iteration, which reaches the same optimal values).

The termination tolerance. The authors' policy iteration (``mcmachado/options``, ``Learning.py``)
evaluates each policy to theta = 0.001 and, in its improvement step, picks ``terminate`` whenever
the best action's value is within 0.001 of terminate's (which is 0): an absolute tolerance of
0.001, so beta(s) = 1 iff max_a q^e(s, a) < 0.001. We default to 1e-9 (just above value
iteration's error, 1e-12): "no positive value", as the paper states it. Measured (known
adjacency, both signs, first eigenvector skipped; ``termination_tol`` 1e-9 against 0.001):

- ``sutton-13x13`` (104 states), 4 options: no state's termination changes; 8 options: 1 state
  of 1 option. The quick spec's eigenoptions are the same options either way.
- ``paper-40x40`` (1525 states), 8 options: 13–157 states per option (1–10% of the grid) terminate
  with 0.001 and not with 1e-9; the terminating fraction goes from 0.1–0.3% of states to 1.1–10.6%.
  Eigenpurpose rewards e[s'] − e[s] are ~1/sqrt(S) per step there, so 0.001 is not negligible.

So on the paper's grid the choice is a real one: ``termination_tol: 0.001`` reproduces the
authors' code (their argmax breaks ties among primitives by order; ours spreads μ over every action
within the tolerance of the best, so μ differs in more states than β does).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from opt_suite.families.base import TabularModel
from opt_suite.tabular import MDPArrays, value_iteration, with_terminate_action

__all__ = ["EigenOption", "layout_dynamics", "eigenpurpose_reward", "eigenoption"]


class EigenOption:
    """One eigenoption, tabulated: ``mu`` [S, A], ``beta`` [S] (0 or 1), ``q`` [S, A] its values."""

    __slots__ = ("mu", "beta", "q")

    def __init__(self, mu: np.ndarray, beta: np.ndarray, q: np.ndarray) -> None:
        self.mu, self.beta, self.q = mu, beta, q


def layout_dynamics(models: Sequence[TabularModel]) -> MDPArrays:
    """The task-independent dynamics shared by the train tasks, with no terminal state.

    Eigenoptions must not know any task's goal. Each task's model makes its goal absorbing, so a
    state's row is taken from the first train task in which that state is not terminal; a state
    that is terminal in every train task keeps its absorbing row (an option reaching it stays put
    and, with nothing to gain there, terminates).
    """
    first = models[0]
    next_state = np.array(first.next_state, dtype=np.int32)
    prob = np.array(first.prob, dtype=np.float64)
    filled = ~np.asarray(first.terminal, dtype=bool)
    for model in models[1:]:
        take = ~filled & ~np.asarray(model.terminal, dtype=bool)
        next_state[take], prob[take] = model.next_state[take], model.prob[take]
        filled |= take
    terminal = np.zeros(first.num_states, dtype=bool)
    return MDPArrays(next_state, prob, np.zeros_like(prob), terminal)


def eigenpurpose_reward(eigenvector: np.ndarray, next_state: np.ndarray) -> np.ndarray:
    """r[s, a, k] = e[next_state[s, a, k]] - e[s]  (Machado et al. 2017, Sec. 3, "eigenpurpose")."""
    eigenvector = np.asarray(eigenvector, dtype=np.float64)
    if eigenvector.shape != next_state.shape[:1]:
        raise ValueError(
            f"eigenvector: expected shape ({next_state.shape[0]},), got {eigenvector.shape}"
        )
    return eigenvector[next_state] - eigenvector[:, None, None]


def eigenoption(
    dynamics: MDPArrays,
    eigenvector: np.ndarray,
    gamma: float,
    termination_tol: float,
    vi_tol: float = 1e-12,
) -> EigenOption:
    """The eigenoption of ``eigenvector``: optimal eigenbehaviour, terminating where q^e <= 0.

    Args:
      dynamics: task-independent transitions (``layout_dynamics``); its reward is ignored.
      eigenvector: e, float [S].
      gamma: discount of the eigenpurpose MDP (authors: 0.9).
      termination_tol: ``max_a q(s, a) <= termination_tol`` counts as "no positive value"; it only
        has to exceed value iteration's error (the authors' policy iteration uses an absolute
        0.001: see the module docstring for what that changes).
      vi_tol: value iteration's stopping tolerance.

    Returns:
      The option. ``mu`` is uniform over the primitive actions of largest value (ties are all
      optimal); where the option terminates it still holds that greedy choice, because the
      ``TabularOptionSet`` has no initiation sets and a learner may start the option there.
    """
    reward = eigenpurpose_reward(eigenvector, dynamics.next_state)
    with_stop = with_terminate_action(MDPArrays.of(dynamics, reward=reward))
    _, q_all = value_iteration(with_stop, gamma, tol=vi_tol)
    num_states, num_actions = dynamics.next_state.shape[:2]
    q = q_all[:num_states, :num_actions]
    best = q.max(axis=1)
    beta = (best <= termination_tol).astype(np.float64)
    ties = q >= best[:, None] - max(termination_tol, vi_tol)
    mu = ties / ties.sum(axis=1, keepdims=True)
    return EigenOption(mu, beta, q)
