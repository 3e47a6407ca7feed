"""Sampling the options' generative process in a tabular MDP (numpy): the Monte Carlo of Appendix D.

The process is the one of the paper's proofs (see :mod:`opt_suite.objective.recursions`): O_0 ~
π(s_0), and at every later state the running option terminates with probability β_O(s_t), in which
case π picks the next one. Every trial runs N paths at once; nothing here imports TensorFlow.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from opt_suite.families.base import TabularModel

__all__ = [
    "OptionTables",
    "MonteCarloEstimate",
    "random_option_tables",
    "sample_paths",
    "sample_episodes",
    "monte_carlo",
    "transition_probability",
]


@dataclasses.dataclass(frozen=True, eq=False)
class OptionTables:
    """A policy over options and its options, tabulated over states.

    Attributes:
      pi: [S, n], π(s, o).
      mu: [n, S, A], μ_o(s, a).
      beta: [n, S], β_o(s).
    """

    pi: np.ndarray
    mu: np.ndarray
    beta: np.ndarray

    def tables(self, states: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, ...]:
        """(pi, mu, beta) [T+1, n] of one trajectory, laid out for ``trajectory_terms``."""
        padded = np.append(actions, 0)  # μ at the last state is ignored
        return self.pi[states], self.mu[:, states, padded].T, self.beta[:, states].T


@dataclasses.dataclass(frozen=True)
class MonteCarloEstimate:
    """Monte Carlo estimates for one trajectory h from ``trials`` sampled paths.

    Attributes:
      trials: number of sampled paths.
      matches: how many reproduced h exactly (states and actions).
      prob, prob_se: the fraction that matched and its standard error.
      terminations, terminations_se: mean number of terminations T_1..T_|h| over the matching paths
        and its standard error (NaN with fewer than 2 matches).
    """

    trials: int
    matches: int
    prob: float
    prob_se: float
    terminations: float
    terminations_se: float


def random_option_tables(
    num_states: int, num_actions: int, num_options: int, rng: np.random.Generator
) -> OptionTables:
    """Randomly initialised options and policy over options: Dirichlet(1) rows, β ~ U(0, 1)."""
    return OptionTables(
        pi=rng.dirichlet(np.ones(num_options), size=num_states),
        mu=rng.dirichlet(np.ones(num_actions), size=(num_options, num_states)),
        beta=rng.uniform(size=(num_options, num_states)),
    )


def _categorical(probs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One draw per row of ``probs`` [N, k] (inverse CDF; rows need not be exactly normalised)."""
    cdf = np.cumsum(probs, axis=-1)
    u = rng.uniform(size=(len(probs), 1)) * cdf[:, -1:]
    return np.minimum((u >= cdf).sum(axis=-1), probs.shape[-1] - 1)


def sample_paths(
    model: TabularModel, options: OptionTables, steps: int, trials: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``trials`` paths of ``steps`` actions from the model's start state.

    Paths are not stopped at terminal states (callers compare or cut them).

    Returns:
      (states [N, steps+1], actions [N, steps], terminations [N, steps]) where terminations[:, t−1]
      is T_t, the termination of the running option on reaching s_t (t = 1..steps).
    """
    states = np.empty((trials, steps + 1), dtype=np.int64)
    actions = np.empty((trials, steps), dtype=np.int64)
    terminations = np.zeros((trials, steps), dtype=bool)
    s = np.full(trials, model.start)
    option = _categorical(options.pi[s], rng)
    for t in range(steps + 1):
        states[:, t] = s
        if t >= 1:
            stop = rng.uniform(size=trials) < options.beta[option, s]
            terminations[:, t - 1] = stop
            if stop.any():
                option[stop] = _categorical(options.pi[s[stop]], rng)
        if t == steps:
            break
        a = _categorical(options.mu[option, s], rng)
        actions[:, t] = a
        k = _categorical(model.prob[s, a], rng)
        s = model.next_state[s, a, k]
    return states, actions, terminations


def sample_episodes(
    model: TabularModel, options: OptionTables, max_steps: int, count: int, rng: np.random.Generator
) -> list[tuple[np.ndarray, np.ndarray]]:
    """``count`` episodes (states [T+1], actions [T]), each until a terminal state or max_steps."""
    states, actions, _ = sample_paths(model, options, max_steps, count, rng)
    episodes = []
    for s, a in zip(states, actions, strict=True):
        hits = np.flatnonzero(model.terminal[s])
        length = int(hits[0]) if hits.size else max_steps
        episodes.append((s[: length + 1], a[:length]))
    return episodes


def transition_probability(model: TabularModel, states: np.ndarray, actions: np.ndarray) -> float:
    """Π_t P(s_t, a_t, s_{t+1}) of a trajectory (the factors Ĵ leaves out)."""
    s, a, s_next = states[:-1], actions, states[1:]
    hit = model.next_state[s, a] == s_next[:, None]
    return float(np.prod((model.prob[s, a] * hit).sum(axis=-1)))


def monte_carlo(
    model: TabularModel,
    options: OptionTables,
    states: np.ndarray,
    actions: np.ndarray,
    trials: int,
    rng: np.random.Generator,
) -> MonteCarloEstimate:
    """Estimates Pr(h) and E[#terminations | H = h] for h = (states, actions) by sampling paths."""
    steps = len(actions)
    paths_s, paths_a, terms = sample_paths(model, options, steps, trials, rng)
    match = (paths_s == states).all(axis=1) & (paths_a == actions).all(axis=1)
    k = int(match.sum())
    prob = k / trials
    counts = terms[match].sum(axis=1).astype(np.float64)
    mean = float(counts.mean()) if k else float("nan")
    se = float(counts.std(ddof=1) / np.sqrt(k)) if k >= 2 else float("nan")
    return MonteCarloEstimate(
        trials=trials,
        matches=k,
        prob=prob,
        prob_se=float(np.sqrt(prob * (1.0 - prob) / trials)),
        terminations=mean,
        terminations_se=se,
    )
