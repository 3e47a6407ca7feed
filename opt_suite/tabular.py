"""Exact dynamic programming over tabular models in the "K outcomes per (s, a)" form.

Pure numpy functions over the arrays of :class:`~opt_suite.families.base.TabularModel`
(``next_state`` [S, A, K], ``prob`` [S, A, K], ``reward`` [S, A, K], ``terminal`` [S]). Anything
with those four attributes is accepted (:class:`TabularMDP`), so callers can swap in their own
reward table — eigenoptions solve their eigenpurpose MDPs (r = e[s'] - e[s]) with these
same functions::

    mdp = MDPArrays.of(model, reward=e[model.next_state] - e[:, None, None])
    V, Q = value_iteration(with_terminate_action(mdp), gamma)

Terminal states are absorbing and worth 0; their rows are never used. Values are the expected
discounted return from a state, V(s) = E[sum_t gamma^t r_{t+1}] (Sutton & Barto, eq. 3.8).
"""

from __future__ import annotations

import dataclasses
from typing import Protocol

import numpy as np
import scipy.sparse
import scipy.sparse.linalg

__all__ = [
    "TabularMDP",
    "MDPArrays",
    "with_terminate_action",
    "q_from_v",
    "value_iteration",
    "greedy_policy",
    "optimal_actions",
    "policy_evaluation",
    "reachable_states",
]


class TabularMDP(Protocol):
    """The four arrays every function here needs (a ``TabularModel`` satisfies it).

    Read-only properties, so that frozen dataclasses (``TabularModel``, :class:`MDPArrays`) match.
    """

    @property
    def next_state(self) -> np.ndarray:
        """The successor of each outcome, int [S, A, K]."""
        ...

    @property
    def prob(self) -> np.ndarray:
        """Each outcome's probability, float [S, A, K]."""
        ...

    @property
    def reward(self) -> np.ndarray:
        """Each outcome's reward, float [S, A, K]."""
        ...

    @property
    def terminal(self) -> np.ndarray:
        """The absorbing states where episodes end, bool [S]."""
        ...


@dataclasses.dataclass(frozen=True, eq=False)
class MDPArrays:
    """A bare tabular MDP: int [S, A, K] successors, their probabilities and rewards, bool [S]."""

    next_state: np.ndarray
    prob: np.ndarray
    reward: np.ndarray
    terminal: np.ndarray

    @classmethod
    def of(cls, mdp: TabularMDP, *, reward: np.ndarray | None = None) -> MDPArrays:
        """The arrays of ``mdp``, optionally with another reward table of the same shape."""
        reward = mdp.reward if reward is None else np.asarray(reward, dtype=np.float64)
        if reward.shape != mdp.next_state.shape:
            raise ValueError(f"reward: expected shape {mdp.next_state.shape}, got {reward.shape}")
        return cls(mdp.next_state, mdp.prob, reward, mdp.terminal)


def with_terminate_action(mdp: TabularMDP) -> MDPArrays:
    """``mdp`` plus a last action that ends the episode with reward 0 (value Q(s, ⊥) = 0).

    Implemented as a move to one extra absorbing terminal state (index S), so V and Q come back with
    S + 1 rows and A + 1 columns; drop the last row. Eigenoptions use it: an option terminates where
    no action has positive eigenpurpose value (Machado et al., 2017, Sec. 3).
    """
    S, A, K = mdp.next_state.shape
    next_state = np.full((S + 1, A + 1, K), S, dtype=np.int32)
    next_state[:S, :A] = mdp.next_state
    prob = np.zeros((S + 1, A + 1, K))
    prob[:S, :A] = mdp.prob
    prob[:, A, 0] = 1.0
    prob[S, :, 0] = 1.0  # the absorbing state's rows are never used; keep them stochastic
    reward = np.zeros((S + 1, A + 1, K))
    reward[:S, :A] = mdp.reward
    terminal = np.append(np.asarray(mdp.terminal, dtype=bool), True)
    return MDPArrays(next_state, prob, reward, terminal)


def _check(mdp: TabularMDP, gamma: float) -> None:
    shape = mdp.next_state.shape
    if len(shape) != 3 or mdp.prob.shape != shape or mdp.reward.shape != shape:
        raise ValueError(
            f"expected next_state, prob, reward of one shape [S, A, K], got {shape}, "
            f"{mdp.prob.shape}, {mdp.reward.shape}"
        )
    if mdp.terminal.shape != shape[:1]:
        raise ValueError(f"terminal: expected shape ({shape[0]},), got {mdp.terminal.shape}")
    if not 0.0 < gamma <= 1.0:
        raise ValueError(f"gamma: expected 0 < gamma <= 1, got {gamma}")


def q_from_v(mdp: TabularMDP, v: np.ndarray, gamma: float) -> np.ndarray:
    """Q(s, a) = sum_k p(s, a, k) [r(s, a, k) + gamma V(s'_k)] (Bellman backup, S&B eq. 3.14).

    Args:
      mdp: the model.
      v: float [S] state values; terminal entries are taken as 0 whatever they hold.
      gamma: discount.

    Returns:
      float [S, A]; terminal rows are 0.
    """
    v = np.where(mdp.terminal, 0.0, v)
    q = (mdp.prob * (mdp.reward + gamma * v[mdp.next_state])).sum(axis=-1)
    q[mdp.terminal] = 0.0
    return q


def value_iteration(
    mdp: TabularMDP, gamma: float, tol: float = 1e-10, max_iterations: int = 1_000_000
) -> tuple[np.ndarray, np.ndarray]:
    """Optimal values by value iteration: V(s) <- max_a Q(s, a) (S&B eq. 4.10).

    Args:
      mdp: the model (any reward table).
      gamma: discount, 0 < gamma <= 1 (gamma = 1 needs every state to reach a terminal state).
      tol: stop when the largest change of V in one sweep is below ``tol``.
      max_iterations: give up (``RuntimeError``) after this many sweeps.

    Returns:
      (V [S], Q [S, A]) with V = 0 and Q = 0 on terminal states.
    """
    _check(mdp, gamma)
    v = np.zeros(mdp.terminal.shape[0])
    for _ in range(max_iterations):
        q = q_from_v(mdp, v, gamma)
        v_new = q.max(axis=1)
        delta = np.abs(v_new - v).max(initial=0.0)
        v = v_new
        if delta < tol:
            return v, q_from_v(mdp, v, gamma)
    raise RuntimeError(
        f"value_iteration did not converge to tol={tol} in {max_iterations} sweeps "
        f"(last change {delta:.3g}); with gamma=1 every state must be able to reach a terminal "
        "state"
    )


def greedy_policy(q: np.ndarray) -> np.ndarray:
    """The first action of largest value in each state, int [S]."""
    return np.argmax(q, axis=-1)


def optimal_actions(q: np.ndarray, tol: float = 1e-8) -> np.ndarray:
    """Actions within ``tol`` of the best in their state, bool [S, A] (ties are all optimal)."""
    return q >= q.max(axis=-1, keepdims=True) - tol


def _policy_matrix(mdp: TabularMDP, policy: np.ndarray) -> np.ndarray:
    """Action probabilities [S, A] from an int [S] or a float [S, A] policy."""
    S, A, _ = mdp.next_state.shape
    policy = np.asarray(policy)
    if policy.shape == (S,):
        return np.eye(A)[policy]
    if policy.shape == (S, A):
        return policy.astype(np.float64)
    raise ValueError(f"policy: expected int [{S}] or float [{S}, {A}], got shape {policy.shape}")


def _transition_matrix(mdp: TabularMDP, pi: np.ndarray) -> scipy.sparse.csr_matrix:
    """Sparse P_pi[s, s'] over non-terminal rows (terminal rows are empty)."""
    S, A, K = mdp.next_state.shape
    weight = pi[:, :, None] * mdp.prob
    weight[mdp.terminal] = 0.0
    rows = np.broadcast_to(np.arange(S)[:, None, None], (S, A, K))
    return scipy.sparse.csr_matrix(
        (weight.ravel(), (rows.ravel(), mdp.next_state.ravel())), shape=(S, S)
    )


def policy_evaluation(mdp: TabularMDP, policy: np.ndarray, gamma: float) -> np.ndarray:
    """V^pi exactly, by solving (I - gamma P_pi) V = r_pi (S&B eq. 4.4 as a linear system).

    Args:
      mdp: the model.
      policy: int [S] actions, or float [S, A] action probabilities.
      gamma: discount.

    Returns:
      float [S], 0 on terminal states.

    Raises:
      ValueError: with gamma = 1, when some state cannot reach a terminal state under ``policy``
        (its value is unbounded).
    """
    _check(mdp, gamma)
    pi = _policy_matrix(mdp, policy)
    r_pi = (pi * (mdp.prob * mdp.reward).sum(axis=-1)).sum(axis=1)
    r_pi[mdp.terminal] = 0.0
    p_pi = _transition_matrix(mdp, pi)
    if gamma == 1.0:
        stuck = ~_reaches_terminal(p_pi, mdp.terminal)
        if stuck.any():
            raise ValueError(
                f"policy_evaluation: with gamma=1 the policy never reaches a terminal state from "
                f"{int(stuck.sum())} states (e.g. state {int(np.flatnonzero(stuck)[0])})"
            )
    S = mdp.terminal.shape[0]
    system = scipy.sparse.identity(S, format="csc") - gamma * p_pi.tocsc()
    return np.asarray(scipy.sparse.linalg.spsolve(system, r_pi), dtype=np.float64).reshape(S)


def _closure(edges: scipy.sparse.csr_matrix, found: np.ndarray) -> np.ndarray:
    """Grow the set ``found`` by s whenever (edges @ found)[s] > 0, until nothing changes."""
    found = found.copy()
    frontier = found.copy()
    while frontier.any():
        frontier = ((edges @ frontier.astype(np.int32)) > 0) & ~found
        found |= frontier
    return found


def _reaches_terminal(p_pi: scipy.sparse.csr_matrix, terminal: np.ndarray) -> np.ndarray:
    """States from which a terminal state has positive probability under P_pi, bool [S]."""
    # (P_pi @ f)[s] > 0 iff s moves into the set f with positive probability.
    return _closure((p_pi > 0).astype(np.int32), np.asarray(terminal, dtype=bool))


def reachable_states(mdp: TabularMDP, policy: np.ndarray, start: int) -> np.ndarray:
    """States visited with positive probability from ``start`` under ``policy``, bool [S].

    Terminal states are included when reached but not expanded (the episode ends there).
    """
    pi = _policy_matrix(mdp, policy)
    # (P_pi^T @ f)[s'] > 0 iff some state of the set f moves to s' with positive probability.
    edges_t = (_transition_matrix(mdp, pi) > 0).astype(np.int32).T.tocsr()
    found = np.zeros(mdp.terminal.shape[0], dtype=bool)
    found[start] = True
    return _closure(edges_t, found)
