"""Lookup tables and the random-number layout of the tabular learners' engines.

SMDP Q-learning on a task's table runs in one compiled loop (:mod:`.smdp_kernel`); intra-option
Q-learning in its own (:mod:`.intra_option_kernels`) and both, without a model, step the env
(:mod:`.env_tabular`). A run's numbers must not depend on which path or which other runs share its
cell, so every path reads the same tables and the same uniforms:

- every run owns one ``numpy.random.Generator`` built from its own seed;
- every primitive step of a run consumes exactly :data:`UNIFORMS_PER_STEP` uniforms (used or not),
  drawn in blocks of :data:`BLOCK_STEPS` steps — so the k-th step of a run always sees the same
  numbers, whichever path takes it and whatever the other runs do;
- every path does the same float64 operations in the same order.

Uniform columns of one step: ``U_EXPLORE`` (epsilon test), ``U_CHOICE`` (random option, or which of
several tied greedy options), ``U_ACTION`` (the option's action from mu), ``U_OUTCOME`` (which of
the K outcomes of (s, a)), ``U_TERMINATE`` (the option's termination test on the next state).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from opt_suite.families.base import TabularModel
from opt_suite.options import TabularOptionSet

__all__ = [
    "UNIFORMS_PER_STEP",
    "BLOCK_STEPS",
    "U_EXPLORE",
    "U_CHOICE",
    "U_ACTION",
    "U_OUTCOME",
    "U_TERMINATE",
    "Hyper",
    "OptionTables",
    "TaskTables",
    "cumulative",
    "draw_block",
]

UNIFORMS_PER_STEP = 5
BLOCK_STEPS = 512
U_EXPLORE, U_CHOICE, U_ACTION, U_OUTCOME, U_TERMINATE = range(UNIFORMS_PER_STEP)


def draw_block(rng: np.random.Generator) -> np.ndarray:
    """The next [BLOCK_STEPS, UNIFORMS_PER_STEP] uniforms in [0, 1) of one run."""
    return rng.random((BLOCK_STEPS, UNIFORMS_PER_STEP))


def cumulative(p: np.ndarray) -> np.ndarray:
    """Cumulative sums along the last axis, made safe for "first index with c > u" sampling.

    From the last positive entry on, the sums are set to +inf, so rounding (sums ending at
    0.9999999) can never select a probability-0 padding entry; an all-zero row selects index 0.
    """
    c = np.cumsum(p, axis=-1, dtype=np.float64)
    positive = p > 0
    last = p.shape[-1] - 1 - np.argmax(positive[..., ::-1], axis=-1)
    last = np.where(positive.any(axis=-1), last, 0)
    c[np.arange(p.shape[-1]) >= last[..., None]] = np.inf
    return c


@dataclasses.dataclass(frozen=True)
class Hyper:
    """The learner's numbers, in the form the engines use (see ``SMDPQLearning.Params``)."""

    alpha: float
    gamma: float
    epsilon: float
    termination_bump: float
    q_init: float
    max_steps: int
    #: The bump intra-option Q-learning's target adds to beta (``bump_in_target``: the
    #: termination bump; else 0, beta alone). The SMDP engines never read it.
    target_bump: float = 0.0


@dataclasses.dataclass(frozen=True, eq=False)
class OptionTables:
    """Primitives followed by the learned options, as one table of O = A + m options.

    Attributes:
      action_cum: float [O, S, A] cumulative mu (see :func:`cumulative`).
      det_action: int [O, S] the action when mu is deterministic there, else -1 (a fast path).
      beta: float [O, S] termination probabilities; 1 everywhere for primitives.
      available: bool [O, S], where each option may start (its initiation set; primitives
        everywhere), or None when every option may start everywhere. With it, the engines start
        Q(s, o) at -inf where o may not start — so greedy choices and ``max_o' Q(s', o')`` skip it
        with no extra work, and it is never updated (never chosen there) — and exploration draws
        uniformly among the options available in s (:attr:`explore_index`).
      explore_index: int [S, O], the options available in each state first (in order), padding
        after; explore_count: int [S], how many (both None without ``available``).
      mu: float [O, S, A], the policies themselves (the intra-option learner weighs by them).
    """

    action_cum: np.ndarray
    det_action: np.ndarray
    beta: np.ndarray
    available: np.ndarray | None = None
    explore_index: np.ndarray | None = None
    explore_count: np.ndarray | None = None
    mu: np.ndarray | None = None

    @classmethod
    def build(cls, options: TabularOptionSet, num_states: int, num_actions: int) -> OptionTables:
        """Prepend the A primitive options (mu one-hot, beta = 1) to ``options``."""
        m = len(options)
        if options.mu.shape != (m, num_states, num_actions):
            raise ValueError(
                f"options: expected mu of shape [m, {num_states}, {num_actions}] for this family, "
                f"got {options.mu.shape}"
            )
        primitive_mu = np.broadcast_to(
            np.eye(num_actions)[:, None, :], (num_actions, num_states, num_actions)
        )
        mu = np.concatenate([primitive_mu, np.asarray(options.mu, dtype=np.float64)])
        beta = np.concatenate([np.ones((num_actions, num_states)), options.beta]).astype(np.float64)
        det_action = np.where((mu == 1.0).any(-1), np.argmax(mu, axis=-1), -1).astype(np.int64)
        if not options.has_initiation:
            return cls(cumulative(mu), det_action, beta, mu=mu)
        available = np.concatenate(
            [np.ones((num_actions, num_states), dtype=bool), options.initiation_table]
        )
        # Stable sort of "not available": the available options of s first, in option order.
        explore_index = np.argsort(~available.T, axis=1, kind="stable").astype(np.int64)
        explore_count = available.sum(axis=0).astype(np.int64)
        return cls(cumulative(mu), det_action, beta, available, explore_index, explore_count, mu)

    @property
    def num_options(self) -> int:
        """O = A + m."""
        return int(self.beta.shape[0])

    def initial_q(self, runs: int, q_init: float) -> np.ndarray:
        """Q [runs * S, O] at the start: ``q_init``, and -inf where an option may not start."""
        num_options, num_states = self.beta.shape
        q = np.full((runs, num_states, num_options), q_init)
        if self.available is not None:
            q[:, ~self.available.T] = -np.inf
        return q.reshape(runs * num_states, num_options)


@dataclasses.dataclass(frozen=True, eq=False)
class TaskTables:
    """The models of several tasks of one family, stacked: [T, S, A, K] (tasks share S, A).

    Attributes:
      next_state: int [T, S, A, K].
      outcome_cum: float [T, S, A, K] cumulative outcome probabilities (see :func:`cumulative`).
      reward: float [T, S, A, K].
      terminal: bool [T, S].
      start: int [T].
    """

    next_state: np.ndarray
    outcome_cum: np.ndarray
    reward: np.ndarray
    terminal: np.ndarray
    start: np.ndarray

    @classmethod
    def stack(cls, models: Sequence[TabularModel]) -> TaskTables:
        """Stack models; K is padded to the largest with probability-0 outcomes."""
        shapes = {m.next_state.shape[:2] for m in models}
        if len(shapes) != 1:
            raise ValueError(f"tasks of one batch must share (S, A), got {sorted(shapes)}")
        k = max(m.next_state.shape[2] for m in models)

        def pad(x: np.ndarray) -> np.ndarray:
            return np.pad(x, ((0, 0), (0, 0), (0, k - x.shape[2])))

        return cls(
            next_state=np.stack([pad(m.next_state) for m in models]).astype(np.int64),
            outcome_cum=cumulative(np.stack([pad(m.prob) for m in models])),
            reward=np.stack([pad(m.reward) for m in models]).astype(np.float64),
            terminal=np.stack([np.asarray(m.terminal, dtype=bool) for m in models]),
            start=np.array([m.start for m in models], dtype=np.int64),
        )

    @property
    def shape(self) -> tuple[int, int, int, int]:
        """(T, S, A, K)."""
        return self.next_state.shape  # type: ignore[return-value]
