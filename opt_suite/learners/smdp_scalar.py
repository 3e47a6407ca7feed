"""SMDP Q-learning for one run, as a tight Python loop over Python lists (the fast single-run path).

Per primitive step the loop does a handful of list look-ups; numpy calls (about a microsecond each)
would dominate at this size. The arithmetic is the batch engine's, operation for operation, so a run
gives the same numbers in either engine (see :mod:`.smdp_tables`).

One SMDP Q-learning update, when option o started in s has run k steps to s' (Sutton, Precup &
Singh, 1999, eq. 11)::

    Q(s, o) <- Q(s, o) + alpha [R + gamma^k max_o' Q(s', o') - Q(s, o)],
    R = r_1 + gamma r_2 + ... + gamma^(k-1) r_k,

with no bootstrap when s' is terminal (a cut at ``max_steps`` is not terminal: it bootstraps).

With ``record_usage`` a run also counts, per episode and per option (primitives first), how many
decisions chose it and how many primitive steps it ran; the counting only reads the loop's
variables, so the learning numbers are the same with and without it.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from opt_suite.learners.smdp_tables import (
    BLOCK_STEPS,
    Hyper,
    OptionTables,
    TaskTables,
    draw_block,
)
from opt_suite.options.termination import smdp_target, terminates

__all__ = ["Progress", "ScalarOptions", "ScalarTables", "ScalarRun"]


@dataclasses.dataclass
class Progress:
    """Where a run is, so that an engine can hand it to the other mid-episode.

    Attributes:
      state: current state.
      option: the running option, or -1 when the next step starts with a decision.
      option_start: the state the running option started in.
      option_steps: k, primitive steps the running option has taken.
      option_reward: R, its discounted reward so far.
      option_discount: gamma^k.
      episode_return: undiscounted return of the current episode so far.
      episode_steps: primitive steps of the current episode so far.
      block: [BLOCK_STEPS, 5] the uniforms of the current block; ``block_pos``: the next row.
    """

    state: int
    option: int = -1
    option_start: int = 0
    option_steps: int = 0
    option_reward: float = 0.0
    option_discount: float = 1.0
    episode_return: float = 0.0
    episode_steps: int = 0
    block: np.ndarray | None = None
    block_pos: int = BLOCK_STEPS


@dataclasses.dataclass(frozen=True, eq=False)
class ScalarOptions:
    """The option tables as nested lists: action_cum [O][S][A], det_action and beta [O][S].

    ``explore`` [S][...]: the options available in each state (initiation sets), or None when
    every option may start everywhere; ``unavailable``: bool [S, O], where Q starts at -inf (see
    :class:`~.smdp_tables.OptionTables`), or None.
    """

    action_cum: list
    det_action: list
    beta: list
    explore: list | None = None
    unavailable: np.ndarray | None = None

    @classmethod
    def build(cls, options: OptionTables) -> ScalarOptions:
        """Convert the numpy option tables."""
        explore, unavailable = None, None
        if options.available is not None:
            explore = [np.flatnonzero(row).tolist() for row in options.available.T]
            unavailable = ~options.available.T
        return cls(
            options.action_cum.tolist(),
            options.det_action.tolist(),
            options.beta.tolist(),
            explore,
            unavailable,
        )


@dataclasses.dataclass(frozen=True, eq=False)
class ScalarTables:
    """One task's model ([S * A][K] and [S] lists) and the option lists (fast scalar indexing)."""

    next_state: list
    outcome_cum: list
    reward: list
    terminal: list
    start: int
    num_actions: int
    options: ScalarOptions

    @classmethod
    def build(cls, tasks: TaskTables, task: int, options: ScalarOptions) -> ScalarTables:
        """Task ``task`` of the stacked ``tasks``, with the shared option lists."""
        _, S, A, K = tasks.shape
        return cls(
            next_state=tasks.next_state[task].reshape(S * A, K).tolist(),
            outcome_cum=tasks.outcome_cum[task].reshape(S * A, K).tolist(),
            reward=tasks.reward[task].reshape(S * A, K).tolist(),
            terminal=tasks.terminal[task].tolist(),
            start=int(tasks.start[task]),
            num_actions=A,
            options=options,
        )


class ScalarRun:
    """One run of SMDP Q-learning with epsilon-greedy exploration over primitives + options.

    Args:
      tables: the run's task and option tables.
      hyper: learning rate, discount, exploration, termination bump, initial Q, episode cap.
      rng: the run's own generator (the only randomness used).
      q: initial Q [S, O] (default: ``hyper.q_init`` everywhere).
      progress: where to resume (default: the start of a first episode).
      record_usage: count each episode's option choices and steps in ``calls`` and
        ``option_steps`` (needs a run that starts at an episode's start: a resumed episode's
        earlier choices are unknown).

    Raises:
      ValueError: ``record_usage`` with a ``progress`` in the middle of an episode.
    """

    def __init__(
        self,
        tables: ScalarTables,
        hyper: Hyper,
        rng: np.random.Generator,
        q: np.ndarray | None = None,
        progress: Progress | None = None,
        record_usage: bool = False,
    ) -> None:
        mid_episode = progress is not None and (progress.episode_steps or progress.option >= 0)
        if record_usage and mid_episode:
            raise ValueError("record_usage needs a run that starts at the start of an episode")
        self.tables = tables
        self.hyper = hyper
        self.rng = rng
        num_options = len(tables.options.beta)
        if q is None:
            q = np.full((len(tables.terminal), num_options), hyper.q_init)
            if tables.options.unavailable is not None:  # see OptionTables.available
                q[tables.options.unavailable] = -np.inf
        self.q: list[list[float]] = np.asarray(q, dtype=np.float64).tolist()
        self.progress = progress if progress is not None else Progress(state=tables.start)
        self.returns: list[float] = []
        self.steps: list[int] = []
        self.record_usage = record_usage
        # Per ended episode: decisions that chose option o, primitive steps option o ran ([O]).
        self.calls: list[list[int]] = []
        self.option_steps: list[list[int]] = []

    def q_array(self) -> np.ndarray:
        """Q [S, O] as a numpy array."""
        return np.array(self.q, dtype=np.float64)

    def run_episodes(self, episodes: int) -> None:  # noqa: C901 - one loop, kept flat for speed
        """Advance until ``episodes`` more episodes have ended (goal reached or cut)."""
        t, h, p = self.tables, self.hyper, self.progress
        q, ns_tab, cum_tab, rew_tab = self.q, t.next_state, t.outcome_cum, t.reward
        terminal, opts = t.terminal, t.options
        act_cum, det_action, beta = opts.action_cum, opts.det_action, opts.beta
        explore = opts.explore
        n_actions, n_opts = t.num_actions, len(beta)
        k_last, a_last = len(ns_tab[0]) - 1, n_actions - 1
        alpha, gamma, eps, bump, max_steps = (
            h.alpha,
            h.gamma,
            h.epsilon,
            h.termination_bump,
            h.max_steps,
        )
        rng, returns, steps_log = self.rng, self.returns, self.steps
        record = self.record_usage
        calls, option_steps = [0] * n_opts, [0] * n_opts  # of the current episode
        s, o, s0, k = p.state, p.option, p.option_start, p.option_steps
        racc, disc, ret, t_ep = (
            p.option_reward,
            p.option_discount,
            p.episode_return,
            p.episode_steps,
        )
        # Without a block in progress, pos == BLOCK_STEPS: a fresh block is drawn before any read.
        block: list[list[float]] = p.block.tolist() if p.block is not None else []
        pos = p.block_pos
        left = episodes
        while left > 0:
            if pos == BLOCK_STEPS:
                block_array = draw_block(rng)
                block, pos = block_array.tolist(), 0
            u_explore, u_choice, u_action, u_outcome, u_term = block[pos]
            pos += 1
            if o < 0:  # choose an option: epsilon-greedy, ties broken by u_choice
                if u_explore < eps and explore is not None:  # among the options available in s
                    here = explore[s]
                    j = int(u_choice * len(here))
                    o = here[j if j < len(here) else len(here) - 1]
                elif u_explore < eps:
                    o = int(u_choice * n_opts)
                    if o >= n_opts:
                        o = n_opts - 1
                else:
                    row = q[s]
                    best = max(row)
                    n_best = row.count(best)
                    if n_best == 1:
                        o = row.index(best)
                    else:
                        j = int(u_choice * n_best)
                        if j >= n_best:
                            j = n_best - 1
                        o = [i for i, v in enumerate(row) if v == best][j]
                s0, k, racc, disc = s, 0, 0.0, 1.0
                if record:
                    calls[o] += 1
            a = det_action[o][s]
            if a < 0:  # sample a ~ mu(s, .): the first a whose cumulative mu exceeds u
                c = act_cum[o][s]
                a = 0
                while a < a_last and c[a] <= u_action:
                    a += 1
            sa = s * n_actions + a
            c = cum_tab[sa]
            j = 0
            while j < k_last and c[j] <= u_outcome:
                j += 1
            s2 = ns_tab[sa][j]
            r = rew_tab[sa][j]
            k += 1
            racc += disc * r
            disc *= gamma
            ret += r
            t_ep += 1
            done = terminal[s2]
            cut = t_ep >= max_steps
            if done or cut or terminates(u_term, beta[o][s2], bump, k):
                target = smdp_target(racc, disc, max(q[s2]), done)
                row = q[s0]
                row[o] = row[o] + alpha * (target - row[o])
                if record:
                    option_steps[o] += k
                o = -1
            s = s2
            if done or cut:
                returns.append(ret)
                steps_log.append(t_ep)
                left -= 1
                s, o, ret, t_ep = t.start, -1, 0.0, 0
                if record:
                    self.calls.append(calls)
                    self.option_steps.append(option_steps)
                    calls, option_steps = [0] * n_opts, [0] * n_opts
        p.state, p.option, p.option_start, p.option_steps = s, o, s0, k
        p.option_reward, p.option_discount, p.episode_return, p.episode_steps = (
            racc,
            disc,
            ret,
            t_ep,
        )
        p.block = None if block is None else np.array(block, dtype=np.float64)
        p.block_pos = pos
