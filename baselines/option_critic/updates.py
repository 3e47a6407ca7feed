"""One step of tabular option-critic's maths (Bacon, Harb & Precup 2017), as in-place functions.

Each function is one line of the paper's Algorithm 1, compiled with numba (``_jit.njit``);
``loop.py`` calls them in that order. The tests check each with hand-worked numbers, compiled
and as plain Python (``f.py_func``).

Tables (all zeros at the start, as in the paper: "all the weights were initialized to zero"):
  theta    [O, S, A]  intra-option policy preferences, pi_o(a | s) = softmax_a(theta[o, s] / T);
  vartheta [O, S]     termination logits, beta_o(s) = sigmoid(vartheta[o, s]);
  q_omega  [S, O]     option values Q_Omega(s, o), also the policy over options' preferences;
  q_u      [S, O, A]  option-action values Q_U(s, o, a).
"""

from __future__ import annotations

import math

import numpy as np

from baselines.option_critic._jit import njit

__all__ = [
    "softmax_into",
    "sample_index",
    "sigmoid",
    "choose_option",
    "arrival_value",
    "critic_step",
    "intra_option_step",
    "termination_step",
]


@njit
def softmax_into(preferences: np.ndarray, temperature: float, out: np.ndarray) -> None:
    """out[i] = exp(p[i] / T) / sum_j exp(p[j] / T) (Boltzmann policy), stable for small T."""
    top = preferences[0]
    for i in range(1, preferences.shape[0]):
        top = max(top, preferences[i])
    total = 0.0
    for i in range(preferences.shape[0]):
        out[i] = math.exp((preferences[i] - top) / temperature)
        total += out[i]
    for i in range(preferences.shape[0]):
        out[i] /= total


@njit
def sample_index(probs: np.ndarray, u: float) -> int:
    """The index i with cumsum(probs)[i-1] <= u < cumsum(probs)[i], for u uniform in [0, 1)."""
    acc = 0.0
    last = probs.shape[0] - 1
    for i in range(last):
        acc += probs[i]
        if u < acc:
            return i
    return last  # u beyond the rounded total lands on the last entry


@njit
def sigmoid(x: float) -> float:
    """1 / (1 + exp(-x)): the termination probability beta(s) of a logit (stable both ways)."""
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


@njit
def choose_option(
    q_row: np.ndarray, softmax: bool, temperature: float, epsilon: float, u: float, buf: np.ndarray
) -> int:
    """The policy over options pi_Omega(s): Boltzmann over Q_Omega(s, .), or epsilon-greedy.

    Epsilon-greedy uses one uniform u for both draws: u < epsilon picks uniformly (u / epsilon),
    otherwise a uniformly random greedy option ((u - epsilon) / (1 - epsilon) among the ties), so
    equal values early on do not always favour option 0.
    """
    n = q_row.shape[0]
    if softmax:
        softmax_into(q_row, temperature, buf)
        return sample_index(buf[:n], u)
    if u < epsilon:
        return min(int(u / epsilon * n), n - 1)
    top = q_row[0]
    for i in range(1, n):
        top = max(top, q_row[i])
    ties = 0
    for i in range(n):
        if q_row[i] == top:
            ties += 1
    pick = min(int((u - epsilon) / (1.0 - epsilon) * ties), ties - 1)
    for i in range(n):
        if q_row[i] == top:
            if pick == 0:
                return i
            pick -= 1
    return n - 1  # unreachable


@njit
def arrival_value(q_next: np.ndarray, option: int, beta_next: float) -> float:
    """U(s', o) = (1 - beta_o(s')) Q_Omega(s', o) + beta_o(s') max_o' Q_Omega(s', o').

    Bacon et al. (2017), the "value upon arrival" of Eq. (2)-(3), with the greedy V_Omega of their
    Algorithm 1.
    """
    top = q_next[0]
    for i in range(1, q_next.shape[0]):
        top = max(top, q_next[i])
    return (1.0 - beta_next) * q_next[option] + beta_next * top


@njit
def critic_step(
    q_omega: np.ndarray,
    q_u: np.ndarray,
    s: int,
    o: int,
    a: int,
    target: float,
    lr: float,
) -> None:
    """Intra-option Q-learning of Q_U(s, o, a) and Q_Omega(s, o) towards r + gamma U(s', o).

    Algorithm 1's "options evaluation" (delta = target - Q_U(s, o, a); Q_U += alpha delta); the
    authors' code learns Q_Omega with the same target and step size (Sutton, Precup & Singh 1999,
    intra-option Q-learning).
    """
    q_u[s, o, a] += lr * (target - q_u[s, o, a])
    q_omega[s, o] += lr * (target - q_omega[s, o])


@njit
def intra_option_step(
    theta: np.ndarray,
    o: int,
    s: int,
    a: int,
    critic: float,
    lr: float,
    temperature: float,
    buf: np.ndarray,
) -> None:
    """theta[o, s] += lr * critic * (onehot(a) - pi_o(. | s))  (intra-option policy gradient).

    Bacon et al. (2017), Theorem 1 and Algorithm 1: theta += alpha_theta d log pi(a|s)/d theta
    Q_U(s, o, a). For pi = softmax(theta / T) that gradient is (onehot(a) - pi) / T; like the
    authors' code we leave the 1/T factor in the step size, so their learning rates mean the same.
    ``critic`` is Q_U(s, o, a), minus the baseline Q_Omega(s, o) when one is used.
    """
    n = theta.shape[2]
    softmax_into(theta[o, s], temperature, buf)
    for b in range(n):
        theta[o, s, b] -= lr * critic * buf[b]
    theta[o, s, a] += lr * critic


@njit
def termination_step(
    vartheta: np.ndarray,
    q_next: np.ndarray,
    o: int,
    s_next: int,
    regulariser: float,
    lr: float,
) -> None:
    """vartheta[o, s'] -= lr * beta (1 - beta) * (A_Omega(s', o) + xi)  (termination gradient).

    Bacon et al. (2017), Theorem 2 and Algorithm 1, with the advantage A_Omega(s', o) =
    Q_Omega(s', o) - max_o' Q_Omega(s', o') and the optional regulariser xi of their paper (a margin
    that makes terminating slightly costly; 0 in the four-rooms experiment).
    """
    beta = sigmoid(vartheta[o, s_next])
    top = q_next[0]
    for i in range(1, q_next.shape[0]):
        top = max(top, q_next[i])
    advantage = q_next[o] - top
    vartheta[o, s_next] -= lr * beta * (1.0 - beta) * (advantage + regulariser)
