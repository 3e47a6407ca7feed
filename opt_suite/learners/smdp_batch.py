"""SMDP Q-learning for many runs at once: each active run advances one primitive step per iteration.

Each iteration is a fixed sequence of numpy operations over the active runs (each with its own task,
Q table, running option, step count within the option, accumulated reward and episode counters), so
its cost is spread over all of them. Runs that finish their episodes drop out; once few are left the
rest are handed to the scalar engine mid-episode (:class:`~.smdp_scalar.Progress`), which is faster
per run. The arithmetic matches :mod:`.smdp_scalar` operation for operation, so a run's numbers do
not depend on the batch it is in (the update is the SMDP Q-learning rule documented there).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from opt_suite.learners.smdp_scalar import Progress, ScalarOptions, ScalarRun, ScalarTables
from opt_suite.learners.smdp_tables import (
    BLOCK_STEPS,
    U_ACTION,
    U_CHOICE,
    U_EXPLORE,
    U_OUTCOME,
    U_TERMINATE,
    Hyper,
    OptionTables,
    TaskTables,
    draw_block,
)
from opt_suite.options.termination import smdp_target, terminates

__all__ = ["HANDOFF_RUNS", "run_batch"]

HANDOFF_RUNS = 40
"""Below this many active runs a numpy iteration costs more than scalar steps (measured, see
``benchmarks/bench_learner.py``); the remaining runs finish in the scalar engine."""


def _choose(
    q_rows: np.ndarray,
    u_explore: np.ndarray,
    u_choice: np.ndarray,
    eps: float,
    states: np.ndarray,
    options: OptionTables,
) -> np.ndarray:
    """Epsilon-greedy option choice; greedy ties broken by ``u_choice`` (as the scalar engine).

    With initiation sets, unavailable options hold Q = -inf (never greedy) and exploration draws
    among the options available in ``states``.
    """
    num_options = q_rows.shape[1]
    best = q_rows.max(axis=1)
    ties = q_rows == best[:, None]
    n_best = ties.sum(axis=1)
    j = np.minimum((u_choice * n_best).astype(np.int64), n_best - 1)
    greedy = np.argmax(np.cumsum(ties, axis=1) > j[:, None], axis=1)
    if options.explore_index is None or options.explore_count is None:
        explore = np.minimum((u_choice * num_options).astype(np.int64), num_options - 1)
    else:
        count = options.explore_count[states]
        pick = np.minimum((u_choice * count).astype(np.int64), count - 1)
        explore = options.explore_index[states, pick]
    return np.where(u_explore < eps, explore, greedy)


def _first_above(cum: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Per row, the first index whose cumulative probability exceeds u (clipped to the last)."""
    return np.minimum((cum <= u[:, None]).sum(axis=1), cum.shape[1] - 1)


def run_batch(
    tasks: TaskTables,
    run_tasks: Sequence[int],
    options: OptionTables,
    hyper: Hyper,
    rngs: Sequence[np.random.Generator],
    episodes: int,
    handoff: int = HANDOFF_RUNS,
) -> tuple[np.ndarray, np.ndarray]:
    """Run ``len(rngs)`` independent learners: run i on task ``run_tasks[i]``, drawing from rngs[i].

    Args:
      tasks: the stacked task models.
      run_tasks: int [R], each run's task index into ``tasks``.
      options: primitives + options.
      hyper: the learner's numbers.
      rngs: one generator per run, its only source of randomness.
      episodes: episodes per run.
      handoff: hand the remaining runs to the scalar engine once fewer than this are active.

    Returns:
      (returns float [R, episodes], steps int [R, episodes]).
    """
    T, S, A, K = tasks.shape
    n_opts, R = options.num_options, len(rngs)
    # Flat tables: one 1-D gather per look-up is the cheapest numpy indexing.
    next_flat, reward_flat = tasks.next_state.ravel(), tasks.reward.ravel()  # [(t, s, a, k)]
    outcome_cum = tasks.outcome_cum.reshape(T * S * A, K)  # rows (t, s, a)
    terminal_flat = tasks.terminal.ravel()  # [(t, s)]
    action_cum = options.action_cum.reshape(n_opts * S, A)  # rows (o, s)
    det_flat, beta_flat = options.det_action.ravel(), options.beta.ravel()  # [(o, s)]
    alpha, gamma, eps, bump = hyper.alpha, hyper.gamma, hyper.epsilon, hyper.termination_bump
    q = options.initial_q(R, hyper.q_init)  # run r's Q(s, .) is row r * S + s
    returns = np.zeros((R, episodes))
    steps = np.zeros((R, episodes), dtype=np.int64)

    # The active runs' state, compacted whenever runs finish (hence typed np.ndarray: any shape).
    run: np.ndarray = np.arange(R)
    task: np.ndarray = np.asarray(run_tasks, dtype=np.int64)
    q_base: np.ndarray = run * S
    t_base: np.ndarray = task * S
    s: np.ndarray = tasks.start[task].copy()
    o: np.ndarray = np.full(R, -1)
    s0: np.ndarray = np.zeros(R, np.int64)
    k: np.ndarray = np.zeros(R, np.int64)
    t_ep: np.ndarray = np.zeros(R, np.int64)
    ep: np.ndarray = np.zeros(R, np.int64)
    racc: np.ndarray = np.zeros(R)
    disc: np.ndarray = np.ones(R)
    ret: np.ndarray = np.zeros(R)
    # [step, column, run]: each column read is contiguous
    block: np.ndarray = np.empty((BLOCK_STEPS, 5, R))
    pos = BLOCK_STEPS  # all runs start together, so they share the position in their blocks

    while run.size >= handoff:
        if pos == BLOCK_STEPS:
            block = np.stack([draw_block(rngs[r]) for r in run], axis=-1)
            pos = 0
        u = block[pos]
        pos += 1

        decide = np.flatnonzero(o < 0)
        if decide.size == run.size:  # e.g. primitives only: everyone decides, no gathers needed
            o = _choose(q[q_base + s], u[U_EXPLORE], u[U_CHOICE], eps, s, options)
            s0, k, racc, disc = s.copy(), np.zeros_like(k), np.zeros_like(racc), np.ones_like(disc)
        elif decide.size:
            sd = s[decide]
            o[decide] = _choose(
                q[q_base[decide] + sd], u[U_EXPLORE, decide], u[U_CHOICE, decide], eps, sd, options
            )
            s0[decide], k[decide], racc[decide], disc[decide] = sd, 0, 0.0, 1.0
        os_ = o * S + s
        a = det_flat[os_]
        sample = np.flatnonzero(a < 0)
        if sample.size:
            a[sample] = _first_above(action_cum[os_[sample]], u[U_ACTION, sample])
        sa = (t_base + s) * A + a
        outcome = sa * K + _first_above(outcome_cum[sa], u[U_OUTCOME])
        s2, r = next_flat[outcome], reward_flat[outcome]
        k += 1
        racc += disc * r
        disc *= gamma
        ret += r
        t_ep += 1
        done = terminal_flat[t_base + s2]
        over = done | (t_ep >= hyper.max_steps)
        end = np.flatnonzero(over | terminates(u[U_TERMINATE], beta_flat[o * S + s2], bump, k))
        if end.size:  # SMDP Q-learning update of the options that just ended
            qe = q_base[end]
            target = smdp_target(racc[end], disc[end], q[qe + s2[end]].max(axis=1), done[end])
            rows, cols = qe + s0[end], o[end]
            q[rows, cols] = q[rows, cols] + alpha * (target - q[rows, cols])
            o[end] = -1
        s = s2
        if over.any():
            f = np.flatnonzero(over)
            returns[run[f], ep[f]] = ret[f]
            steps[run[f], ep[f]] = t_ep[f]
            ep[f] += 1
            s[f], ret[f], t_ep[f] = tasks.start[task[f]], 0.0, 0
            live = ep < episodes
            if not live.all():
                run, task, q_base, t_base, s, o, s0, k, t_ep, ep = (
                    x[live] for x in (run, task, q_base, t_base, s, o, s0, k, t_ep, ep)
                )
                racc, disc, ret, block = racc[live], disc[live], ret[live], block[:, :, live]

    # Few runs left: finish each in the scalar engine, from exactly where it is.
    tables: dict[int, ScalarTables] = {}
    option_lists: ScalarOptions | None = None
    for i, r in enumerate(run):
        ti = int(task[i])
        if option_lists is None:
            option_lists = ScalarOptions.build(options)
        if ti not in tables:
            tables[ti] = ScalarTables.build(tasks, ti, option_lists)
        progress = Progress(
            state=int(s[i]),
            option=int(o[i]),
            option_start=int(s0[i]),
            option_steps=int(k[i]),
            option_reward=float(racc[i]),
            option_discount=float(disc[i]),
            episode_return=float(ret[i]),
            episode_steps=int(t_ep[i]),
            block=block[:, :, i].copy() if pos < BLOCK_STEPS else None,
            block_pos=pos,
        )
        scalar = ScalarRun(tables[ti], hyper, rngs[r], q=q[r * S : (r + 1) * S], progress=progress)
        scalar.run_episodes(episodes - int(ep[i]))
        returns[r, ep[i] :] = scalar.returns
        steps[r, ep[i] :] = scalar.steps
    return returns, steps
