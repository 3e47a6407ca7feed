"""SMDP Q-learning for one run: its tables, its position, and the compiled loop that advances it.

:class:`ScalarRun` holds one run (its Q table, its generator, where it is) and hands its uniforms,
a block at a time, to the compiled loop (:func:`.smdp_kernel.advance`), which is every model-based
SMDP Q-learning step: a single run, a cell's many runs (:mod:`.smdp_batch`) and the counting of
option usage go through it alike, so they give the same numbers by construction.

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

__all__ = ["Progress", "ScalarOptions", "ScalarTables", "ScalarRun"]


@dataclasses.dataclass
class Progress:
    """Where a run is between calls of :meth:`ScalarRun.run_episodes` (it may stop mid-episode).

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
    """The option tables as the compiled loop reads them.

    Attributes:
      action_cum: float [O, S, A]; det_action: int [O, S]; beta: float [O, S] (see
        :class:`~.smdp_tables.OptionTables`).
      explore_index: int [S, O], the options that may start in each state first (all of them,
        in order, without initiation sets); explore_count: int [S], how many.
      unavailable: bool [S, O], where Q starts at -inf (see :class:`~.smdp_tables.OptionTables`),
        or None when every option may start everywhere.
    """

    action_cum: np.ndarray
    det_action: np.ndarray
    beta: np.ndarray
    explore_index: np.ndarray
    explore_count: np.ndarray
    unavailable: np.ndarray | None = None

    @classmethod
    def build(cls, options: OptionTables) -> ScalarOptions:
        """From the option tables; without initiation sets every option is explored everywhere."""
        num_options, num_states = options.beta.shape
        if options.explore_index is None or options.explore_count is None:
            explore_index = np.broadcast_to(np.arange(num_options), (num_states, num_options))
            explore_count = np.full(num_states, num_options)
            unavailable = None
        else:
            explore_index, explore_count = options.explore_index, options.explore_count
            unavailable = None if options.available is None else ~options.available.T
        return cls(
            np.ascontiguousarray(options.action_cum),
            np.ascontiguousarray(options.det_action, dtype=np.int64),
            np.ascontiguousarray(options.beta),
            np.ascontiguousarray(explore_index, dtype=np.int64),
            np.ascontiguousarray(explore_count, dtype=np.int64),
            unavailable,
        )

    @property
    def num_options(self) -> int:
        """O = A + m."""
        return int(self.beta.shape[0])


@dataclasses.dataclass(frozen=True, eq=False)
class ScalarTables:
    """One task's table ([S, A, K] arrays, terminal [S], start) and the option tables.

    ``outcome_done`` [S, A, K]: whether each outcome's next state is terminal (the compiled loop
    reads the end of an episode per outcome, as an env's table gives it).
    """

    next_state: np.ndarray
    outcome_cum: np.ndarray
    reward: np.ndarray
    terminal: np.ndarray
    outcome_done: np.ndarray
    start: int
    num_actions: int
    options: ScalarOptions

    @classmethod
    def build(cls, tasks: TaskTables, task: int, options: ScalarOptions) -> ScalarTables:
        """Task ``task`` of the stacked ``tasks`` (views, no copies), with the shared options."""
        return cls(
            next_state=tasks.next_state[task],
            outcome_cum=tasks.outcome_cum[task],
            reward=tasks.reward[task],
            terminal=tasks.terminal[task],
            outcome_done=tasks.terminal[task][tasks.next_state[task]],
            start=int(tasks.start[task]),
            num_actions=tasks.shape[2],
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
        num_options = tables.options.num_options
        if q is None:
            q = np.full((len(tables.terminal), num_options), hyper.q_init)
            if tables.options.unavailable is not None:  # see OptionTables.available
                q[tables.options.unavailable] = -np.inf
        # A copy: the loop updates it in place, and the caller's array stays theirs.
        self.q: np.ndarray = np.array(q, dtype=np.float64)
        self.progress = progress if progress is not None else Progress(state=tables.start)
        self.returns: list[float] = []
        self.steps: list[int] = []
        self.record_usage = record_usage
        # Per ended episode: decisions that chose option o, primitive steps option o ran ([O]).
        self.calls: list[list[int]] = []
        self.option_steps: list[list[int]] = []

    def q_array(self) -> np.ndarray:
        """Q [S, O] as a numpy array (a copy)."""
        return self.q.copy()

    def run_episodes(self, episodes: int) -> None:
        """Advance until ``episodes`` more episodes have ended (goal reached or cut)."""
        from opt_suite.learners import smdp_kernel as kernel

        t, h, p, opts = self.tables, self.hyper, self.progress, self.tables.options
        ints = np.array(
            [p.state, p.option, p.option_start, p.option_steps, p.episode_steps, 0], np.int64
        )
        floats = np.array([p.option_reward, p.option_discount, p.episode_return], np.float64)
        returns = np.zeros(episodes)
        steps = np.zeros(episodes, dtype=np.int64)
        num_options = opts.num_options
        usage_rows = episodes if self.record_usage else 0  # an observer: no rows when off
        calls = np.zeros((usage_rows, num_options), dtype=np.int64)
        option_steps = np.zeros((usage_rows, num_options), dtype=np.int64)
        # Without a block in progress, pos == BLOCK_STEPS: a fresh block is drawn before any read.
        block = p.block if p.block is not None else np.empty((BLOCK_STEPS, 5))
        pos = p.block_pos
        no_env = np.empty(0)
        while ints[kernel.IS_EPISODES] < episodes:
            if pos == BLOCK_STEPS:
                block, pos = draw_block(self.rng), 0
            pos, _ = kernel.advance(
                block, pos, False, no_env, ints, floats, self.q,
                t.next_state, t.outcome_cum, t.reward, t.outcome_done, t.start,
                opts.action_cum, opts.det_action, opts.beta, opts.explore_index,
                opts.explore_count,
                h.alpha, h.gamma, h.epsilon, h.termination_bump, h.max_steps, episodes,
                returns, steps, self.record_usage, calls, option_steps,
            )  # fmt: skip
        self.returns.extend(returns.tolist())
        self.steps.extend(steps.tolist())
        if self.record_usage:
            self.calls.extend(calls.tolist())
            self.option_steps.extend(option_steps.tolist())
        p.state, p.option, p.option_start, p.option_steps, p.episode_steps = (
            int(x) for x in ints[:5]
        )
        p.option_reward, p.option_discount, p.episode_return = (float(x) for x in floats)
        p.block, p.block_pos = block, pos
