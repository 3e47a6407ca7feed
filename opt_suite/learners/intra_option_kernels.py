"""The compiled (numba) kernels of :mod:`.intra_option_q`: its update, choice and batch loop.

A module of their own so that importing the registered learner (``opt-suite list``, ``validate``)
never imports numba: :meth:`.intra_option_q.IntraOptionQLearning.run` imports this module.
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
from opt_suite.options.termination import terminates

__all__ = ["advance", "intra_option_update"]


@numba.njit(cache=True, nogil=True)
def intra_option_update(
    q_s: np.ndarray,
    q_s2: np.ndarray,
    mu_a: np.ndarray,
    beta_s2: np.ndarray,
    available_s2: np.ndarray,
    r: float,
    done: bool,
    alpha: float,
    gamma: float,
    running: int,
    bump_running: float,
    bump_other: float,
) -> None:
    """One intra-option step (Sutton, Precup & Singh 1999, eq. 20), in place on ``q_s``.

    Args:
      q_s: float [O], Q(s, .), updated in place.
      q_s2: float [O], Q(s', .) (may be the same array as ``q_s`` when s' = s: every value is read
        before it is written, and the max over o' is taken first).
      mu_a: float [O], mu_o(a | s) for the action a taken: each option's step-size weight.
      beta_s2: float [O], beta_o(s').
      available_s2: bool [O], the options whose initiation set holds s' (the max ranges over them).
      r: the step's reward r_{t+1}.
      done: s' is terminal (targets are r alone).
      alpha: the step size (times mu_o(a | s) per option).
      gamma: the discount per primitive step.
      running: the option that took the step (its own ``bump_running``).
      bump_running: added to beta_{running}(s') in U: the termination bump of the running
        option's k-th step (bump * k), the probability execution adds to beta there; 0 leaves
        beta alone (``bump_in_target`` off).
      bump_other: added to beta_o(s') of every other option: the bump after a first step
        (bump * 1), since the step is o's first step when o is read as started in s; 0 when off.
    """
    v_s2 = -np.inf  # max over o' available in s'
    for o in range(q_s2.shape[0]):
        if available_s2[o] and q_s2[o] > v_s2:
            v_s2 = q_s2[o]
    for o in range(q_s.shape[0]):
        w = mu_a[o]
        if w <= 0.0:
            continue  # not consistent with the action taken
        if done:
            target = r
        else:
            # The termination probability execution applies in s', min(1, beta + bump) (adding
            # 0.0 when the bump stays out of the target leaves beta, and every number, as it was).
            b = beta_s2[o] + (bump_running if o == running else bump_other)
            u = v_s2 if b >= 1.0 else (1.0 - b) * q_s2[o] + b * v_s2
            target = r + gamma * u
        q_s[o] = q_s[o] + (alpha * w) * (target - q_s[o])


@numba.njit(cache=True, nogil=True)
def _first_above(cum: np.ndarray, u: float) -> int:
    j = 0
    last = cum.shape[0] - 1
    while j < last and cum[j] <= u:
        j += 1
    return j


@numba.njit(cache=True, nogil=True)
def _choose(
    q_row: np.ndarray, available: np.ndarray, u_explore: float, u_choice: float, eps: float
) -> int:
    """Epsilon-greedy over the available options; the SMDP engines' tie and explore draws."""
    n_opts = q_row.shape[0]
    if u_explore < eps:
        count = 0
        for o in range(n_opts):
            count += available[o]
        j = min(int(u_choice * count), count - 1)
        for o in range(n_opts):
            if available[o]:
                if j == 0:
                    return o
                j -= 1
    best = -np.inf
    n_best = 0
    for o in range(n_opts):
        if available[o]:
            if q_row[o] > best:
                best, n_best = q_row[o], 1
            elif q_row[o] == best:
                n_best += 1
    j = min(int(u_choice * n_best), n_best - 1)
    for o in range(n_opts):
        if available[o] and q_row[o] == best:
            if j == 0:
                return o
            j -= 1
    return -1  # unreachable: primitives are always available


# The shared termination rule (appendix E), compiled for the loop below.
_terminates = numba.njit(cache=True, nogil=True)(terminates)


@numba.njit(cache=True, nogil=True)
def advance(  # noqa: C901 - one loop, kept flat for speed
    blocks, runs, run_task, state, option, option_steps, ep_return, ep_steps, episode,
    returns, steps, q,
    next_state, outcome_cum, reward, terminal, start,
    action_cum, det_action, mu, beta, available,
    alpha, gamma, eps, bump, bump_target, max_steps, episodes,
):  # fmt: skip
    """Advance each run of ``runs`` through its block of uniforms (or until its episodes end).

    ``bump`` cuts options during execution; ``bump_target`` is the bump the update's target puts
    on beta (``bump`` with ``bump_in_target``, else 0).
    """
    for i in range(runs.shape[0]):
        r = runs[i]
        t = run_task[r]
        s, o, k = state[r], option[r], option_steps[r]
        ret, t_ep, ep = ep_return[r], ep_steps[r], episode[r]
        for pos in range(blocks.shape[1]):
            if ep >= episodes:
                break
            u = blocks[i, pos]
            if o < 0:
                o = _choose(q[r, s], available[:, s], u[U_EXPLORE], u[U_CHOICE], eps)
                k = 0
            a = det_action[o, s]
            if a < 0:
                a = _first_above(action_cum[o, s], u[U_ACTION])
            j = _first_above(outcome_cum[t, s, a], u[U_OUTCOME])
            s2 = next_state[t, s, a, j]
            rew = reward[t, s, a, j]
            k += 1
            ret += rew
            t_ep += 1
            done = terminal[t, s2]
            intra_option_update(
                q[r, s], q[r, s2], mu[:, s, a], beta[:, s2], available[:, s2], rew, done,
                alpha, gamma, o, bump_target * k, bump_target,
            )  # fmt: skip
            cut = t_ep >= max_steps
            if done or cut or _terminates(u[U_TERMINATE], beta[o, s2], bump, k):
                o = -1
            s = s2
            if done or cut:
                returns[r, ep] = ret
                steps[r, ep] = t_ep
                ep += 1
                s, o, ret, t_ep = start[t], -1, 0.0, 0
        state[r], option[r], option_steps[r] = s, o, k
        ep_return[r], ep_steps[r], episode[r] = ret, t_ep, ep
