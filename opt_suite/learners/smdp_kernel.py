"""The compiled (numba) loop of SMDP Q-learning on a task's table: every model-based run steps here.

One run at a time advances through its uniforms (:mod:`.smdp_tables`' layout: 5 per primitive
step, drawn in blocks by the caller), choosing epsilon-greedily among the options available in
its state, acting with the option's mu, sampling the outcome of (s, a) from the task's table
with ``U_OUTCOME``, and updating Q(s0, o) towards :func:`~opt_suite.options.termination.smdp_target`
when the option ends (:func:`~opt_suite.options.termination.terminates`, the goal, or the cut at
``max_steps``). Both rules are compiled from their one definition, not restated.

Why compiled and per run: a run's step is a handful of look-ups, which Python spends ~1 us on and
numpy (over many runs at once) spends its per-call overhead on; compiled, a step costs tens of
nanoseconds, so the runs of a cell simply go one after the other and a run's numbers cannot depend
on which other runs share its cell.

Usage counting is an observer: with ``record`` the loop also adds, per episode and option, the
decisions that chose it and the primitive steps it ran into two arrays; it only reads the loop's
variables (the learning numbers are the same either way), and without it costs one untaken branch
per decision.

A module of its own so that importing the registered learner (``opt-suite list``, ``validate``)
never imports numba: the engines import it when they run.
"""

from __future__ import annotations

import numba
import numpy as np

from opt_suite.learners.smdp_tables import (
    U_ACTION,
    U_CHOICE,
    U_EXPLORE,
    U_OUTCOME,
    U_TERMINATE,
)
from opt_suite.options.termination import smdp_target, terminates

__all__ = ["IS", "FS", "advance"]

# The run's position between calls, so that a run can stop at the end of its uniforms and go on
# with the next ones: IS indexes the int array, FS the float array.
IS_STATE, IS_OPTION, IS_OPTION_START, IS_OPTION_STEPS, IS_EPISODE_STEPS, IS_EPISODES = range(6)
FS_OPTION_REWARD, FS_OPTION_DISCOUNT, FS_EPISODE_RETURN = range(3)
IS, FS = 6, 3

# The shared rules (appendix E's termination, eq. 11's target), compiled for the loop below.
_terminates = numba.njit(cache=True, nogil=True)(terminates)
_smdp_target = numba.njit(cache=True, nogil=True)(smdp_target)


@numba.njit(cache=True, nogil=True)
def _choose(
    q_row: np.ndarray,
    explore_index: np.ndarray,
    explore_count: int,
    u_explore: float,
    u_choice: float,
    eps: float,
) -> int:
    """Epsilon-greedy; exploration among the ``explore_count`` options of ``explore_index``.

    Greedy ties are broken by ``u_choice``: the j-th of the n tied best, j = int(u_choice * n)
    (Python's ``max`` and ``list.count`` semantics: the first best, ``==`` for ties).
    """
    if u_explore < eps:
        j = int(u_choice * explore_count)
        return explore_index[j if j < explore_count else explore_count - 1]
    n_opts = q_row.shape[0]
    best = q_row[0]
    for o in range(1, n_opts):
        if q_row[o] > best:
            best = q_row[o]
    n_best = 0
    for o in range(n_opts):
        if q_row[o] == best:
            n_best += 1
    j = int(u_choice * n_best)
    if j >= n_best:
        j = n_best - 1
    for o in range(n_opts):
        if q_row[o] == best:
            if j == 0:
                return o
            j -= 1
    return -1  # unreachable: the best is in the row


@numba.njit(cache=True, nogil=True)
def _row_max(q_row: np.ndarray) -> float:
    """max(q_row) as Python's ``max`` takes it: the first of the largest."""
    best = q_row[0]
    for o in range(1, q_row.shape[0]):
        if q_row[o] > best:
            best = q_row[o]
    return best


@numba.njit(cache=True, nogil=True)
def advance(  # noqa: C901 - one loop, kept flat for speed
    blocks, pos, from_env, env_uniforms, ints, floats, q,
    next_state, outcome_cum, reward, outcome_done, start,
    action_cum, det_action, beta, explore_index, explore_count,
    alpha, gamma, eps, bump, max_steps, episodes,
    returns, steps, record, calls, option_steps,
):  # fmt: skip
    """Advance one run through ``blocks[pos:]`` or until ``episodes`` episodes have ended.

    The step source is the table (``next_state``, ``outcome_cum``, ``reward``, ``outcome_done``)
    sampled with a uniform: the step's ``U_OUTCOME`` for a task's model, or, ``from_env``, the
    next of ``env_uniforms``, the env's own draws (:class:`~opt_suite.families.gymnasium.env.
    TableSource`); then the loop also stops when they run out, and at the end of each episode,
    for the caller to reset the env (whose reset draws the next start).

    Args:
      blocks: float [N, 5], the run's uniforms.
      pos: the first unread row of ``blocks``.
      from_env: the outcomes are the env's (see above), else the model's.
      env_uniforms: float [M], the env's next uniforms (read only ``from_env``).
      ints: int [IS], the run's position (``IS_*``), read and written back.
      floats: float [FS], the run's position (``FS_*``), read and written back.
      q: float [S, O], the run's Q, updated in place.
      next_state: int [S, A, K], the task's table: the outcomes of (s, a).
      outcome_cum: float [S, A, K], their cumulative probabilities.
      reward: float [S, A, K], their rewards.
      outcome_done: bool [S, A, K], whether each outcome ends the episode (terminal).
      start: the start state (``from_env``: the caller's reset gives it instead).
      action_cum: float [O, S, A], the options' cumulative mu.
      det_action: int [O, S], the action where mu is deterministic, else -1.
      beta: float [O, S], termination probabilities.
      explore_index: int [S, O], the options that may start in each state first.
      explore_count: int [S], how many may start there.
      alpha: the step size.
      gamma: the discount per primitive step.
      eps: the exploration probability.
      bump: added to beta per step an option has run.
      max_steps: the cut of an episode, in primitive steps (the env's own cut included).
      episodes: end when the run's episode count (``ints[IS_EPISODES]``) reaches this.
      returns: float [E], each ended episode's return, at its index in the run.
      steps: int [E], each ended episode's primitive steps.
      record: count usage into ``calls`` and ``option_steps`` (else they are not touched).
      calls: int [E, O], per episode the decisions that chose each option.
      option_steps: int [E, O], per episode the primitive steps each option ran.

    Returns:
      (the first unread row of ``blocks``, how many of ``env_uniforms`` were used).
    """
    a_last = action_cum.shape[2] - 1
    k_last = outcome_cum.shape[2] - 1
    s, o, s0, k = ints[IS_STATE], ints[IS_OPTION], ints[IS_OPTION_START], ints[IS_OPTION_STEPS]
    t_ep, ep = ints[IS_EPISODE_STEPS], ints[IS_EPISODES]
    racc, disc = floats[FS_OPTION_REWARD], floats[FS_OPTION_DISCOUNT]
    ret = floats[FS_EPISODE_RETURN]
    n_rows, n_env, env_pos = blocks.shape[0], env_uniforms.shape[0], 0
    while ep < episodes and pos < n_rows:
        if from_env and env_pos == n_env:
            break
        u = blocks[pos]
        pos += 1
        if o < 0:
            o = _choose(q[s], explore_index[s], explore_count[s], u[U_EXPLORE], u[U_CHOICE], eps)
            s0, k, racc, disc = s, 0, 0.0, 1.0
            if record:
                calls[ep, o] += 1
        a = det_action[o, s]
        if a < 0:  # sample a ~ mu(s, .): the first a whose cumulative mu exceeds u
            c = action_cum[o, s]
            a = 0
            while a < a_last and c[a] <= u[U_ACTION]:
                a += 1
        if from_env:
            u_outcome = env_uniforms[env_pos]
            env_pos += 1
        else:
            u_outcome = u[U_OUTCOME]
        c = outcome_cum[s, a]
        j = 0
        while j < k_last and c[j] <= u_outcome:
            j += 1
        s2 = next_state[s, a, j]
        r = reward[s, a, j]
        k += 1
        racc += disc * r
        disc *= gamma
        ret += r
        t_ep += 1
        done = outcome_done[s, a, j]
        cut = t_ep >= max_steps
        if done or cut or _terminates(u[U_TERMINATE], beta[o, s2], bump, k):
            target = _smdp_target(racc, disc, _row_max(q[s2]), done)
            q[s0, o] = q[s0, o] + alpha * (target - q[s0, o])
            if record:
                option_steps[ep, o] += k
            o = -1
        s = s2
        if done or cut:
            returns[ep] = ret
            steps[ep] = t_ep
            ep += 1
            s, o, ret, t_ep = start, -1, 0.0, 0
            if from_env:
                break  # the caller resets the env
    ints[IS_STATE], ints[IS_OPTION], ints[IS_OPTION_START], ints[IS_OPTION_STEPS] = s, o, s0, k
    ints[IS_EPISODE_STEPS], ints[IS_EPISODES] = t_ep, ep
    floats[FS_OPTION_REWARD], floats[FS_OPTION_DISCOUNT] = racc, disc
    floats[FS_EPISODE_RETURN] = ret
    return pos, env_pos
