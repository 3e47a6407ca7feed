"""Reference values by enumerating every option path (numpy, float64): the ground truth for tests.

Nothing here is clever on purpose: it writes down the generative process of the paper's proofs (see
:mod:`opt_suite.objective.recursions`) path by path and sums. A path is the full hidden history
(O_0, T_1, O_1, ..., T_{T−1}, O_{T−1}, T_T) — termination indicators included, because "terminate
and pick the same option again" and "continue" are different events with different probabilities.
Cost is n^T · 2^T, so keep T ≤ 6 and n ≤ 4.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["BruteForceTerms", "enumerate_terms", "brute_force_terms", "enumerate_step_posteriors"]


class BruteForceTerms(NamedTuple):
    """Per-trajectory values: see :class:`opt_suite.objective.recursions.TrajectoryTerms`."""

    log_prob: np.ndarray
    expected_terminations: np.ndarray
    posterior_terminations: np.ndarray


def _paths(num_options: int, length: int) -> tuple[np.ndarray, np.ndarray]:
    """Every (options [P, T], terminations [P, T+1]) pair; terminations[:, 0] is unused (0)."""
    options = np.indices((num_options,) * length).reshape(length, -1).T
    flags = np.indices((2,) * length).reshape(length, -1).T
    opt = np.repeat(options, len(flags), axis=0)
    term = np.tile(flags, (len(options), 1))
    return opt, np.concatenate([np.zeros((len(term), 1), dtype=int), term], axis=1)


def enumerate_terms(
    pi: np.ndarray, mu: np.ndarray, beta: np.ndarray, length: int
) -> tuple[float, float, float]:
    """Brute-force (Pr(h), Σ_t Pr(T_t=1 | h_t), Σ_t Pr(T_t=1 | h)) for one trajectory.

    Args:
      pi: [L, n] π(s_t, o) of one trajectory (the layout of ``trajectory_terms``).
      mu: [L, n] μ_o(s_t, a_t).
      beta: [L, n] β_o(s_t).
      length: T, the number of actions.

    Returns:
      (probability, filtering expected terminations, posterior expected terminations).
    """
    if length == 0:
        return 1.0, 0.0, 0.0
    pi, mu, beta = (np.asarray(x, dtype=np.float64) for x in (pi, mu, beta))
    options, term = _paths(pi.shape[1], length)
    rows = np.arange(len(options))
    # prefix[:, t] = weight of (O_0..O_t, T_1..T_t) and the actions a_0..a_t.
    prefix = np.empty((len(options), length))
    weight = pi[0, options[:, 0]] * mu[0, options[:, 0]]
    prefix[:, 0] = weight
    for t in range(1, length):
        prev, cur = options[:, t - 1], options[:, t]
        stop = beta[t, prev]
        terminated = (
            stop * pi[t, cur]
        )  # T_t = 1: the policy over options picks O_t (maybe = O_{t−1})
        continued = (1.0 - stop) * (cur == prev)  # T_t = 0: O_t = O_{t−1}
        weight = weight * np.where(term[:, t] == 1, terminated, continued) * mu[t, cur]
        prefix[:, t] = weight
    stop_last = beta[length, options[:, -1]]
    full = weight * np.where(term[:, length] == 1, stop_last, 1.0 - stop_last)
    prob = full.sum()
    # Filtering: Pr(T_t = 1 | h_t) = Σ prefix_{t−1} β_t(O_{t−1}) / Σ prefix_{t−1}. Every prefix
    # appears equally often in the enumeration, so summing over all paths keeps the ratio exact.
    filtering = sum(
        (prefix[:, t - 1] * beta[t, options[rows, t - 1]]).sum() / prefix[:, t - 1].sum()
        for t in range(1, length + 1)
    )
    posterior = (full[:, None] * term[:, 1:]).sum() / prob
    return float(prob), float(filtering), float(posterior)


def brute_force_terms(pi, mu, beta, lengths) -> BruteForceTerms:
    """:func:`enumerate_terms` for a batch laid out as for ``trajectory_terms`` ([B, L, n], [B])."""
    values = [
        enumerate_terms(pi[b], mu[b], beta[b], int(length)) for b, length in enumerate(lengths)
    ]
    prob, filtering, posterior = (np.array(v, dtype=np.float64) for v in zip(*values, strict=True))
    return BruteForceTerms(np.log(prob), filtering, posterior)


def enumerate_step_posteriors(
    pi: np.ndarray, mu: np.ndarray, beta: np.ndarray, length: int
) -> tuple[np.ndarray, np.ndarray]:
    """Brute-force (Pr(O_t = o | h) [T, n], Pr(T_t = 1 | h) [T + 1]) for one trajectory (T >= 1).

    The ground truth of :func:`opt_suite.objective.posterior.step_posteriors`; arguments as for
    :func:`enumerate_terms`. Pr(T_0 = 1 | h) is 0 (no option runs before s_0).
    """
    pi, mu, beta = (np.asarray(x, dtype=np.float64) for x in (pi, mu, beta))
    options, term = _paths(pi.shape[1], length)
    weight = pi[0, options[:, 0]] * mu[0, options[:, 0]]
    for t in range(1, length):
        prev, cur = options[:, t - 1], options[:, t]
        stop = beta[t, prev]
        step = np.where(term[:, t] == 1, stop * pi[t, cur], (1.0 - stop) * (cur == prev))
        weight = weight * step * mu[t, cur]
    stop_last = beta[length, options[:, -1]]
    full = weight * np.where(term[:, length] == 1, stop_last, 1.0 - stop_last)
    prob = full.sum()
    option = np.stack(
        [np.bincount(options[:, t], weights=full, minlength=pi.shape[1]) for t in range(length)]
    )
    return option / prob, (full[:, None] * term).sum(axis=0) / prob
