"""Intra-option Q-learning: every option consistent with each primitive step learns from it.

Sutton, Precup & Singh (1999), Sec. 5 ("Intra-option learning"), eq. 20: after every primitive step
s --a, r--> s' (whatever option is running), every Markov option o whose policy could have taken a
in s is updated towards

    r + gamma U(s', o),   U(s', o) = (1 - beta_o(s')) Q(s', o) + beta_o(s') max_o' Q(s', o'),

and towards r alone when s' is terminal. The running option is updated like any other, so SMDP
Q-learning's one update per option execution is replaced by one per step and option; the policy
over options acts exactly as :mod:`.smdp_q`'s does (epsilon-greedy over the options whose
initiation set holds s, ties broken uniformly; an option runs until beta, plus
``termination_bump`` per step it has run, stops it).

Choices the paper leaves open, documented here:

- *Stochastic policies.* The paper states the rule for deterministic options (update o when
  mu_o(s) = a). Here o's step size is ``alpha * mu_o(a | s)``: for a deterministic option that is
  exactly the paper's rule (alpha when consistent, 0 otherwise) and for a primitive it is one-step
  Q-learning, while a stochastic option learns from every action it might take, in proportion to
  how likely it takes it. It stays stable (weight <= 1), unlike the importance ratio
  mu_o(a|s) / mu_running(a|s), which is unbiased but reaches 57 for the hallway options (0.95
  against 0.05 / 3) — the price is a bias of the fixed point towards the actions the agent happens
  to take, small for near-deterministic options such as the hallway options (0.95).
- *Initiation sets.* Q(s, o) is learned in every state, inside I_o or not: U(s', o) needs the value
  of *continuing* o in s', which exists wherever o can run. The max in U and the choice of options
  range over the options available in s' (in s).
- *beta in U* is the option's own beta_o(s'), without ``termination_bump``: the bump depends on how
  long the option has run, which U (a function of s' and o) cannot see; it shapes only execution.

With primitives only, this is one-step Q-learning, and gives :mod:`.smdp_q`'s numbers exactly (the
same uniforms, choices and float operations; a test checks it).

Why a learner of its own rather than a flag of ``smdp_q_learning``: it is a different update rule,
not a setting of the same one; keeping it apart leaves the paper learner's two engines (and every
published number) untouched, and a spec says what it runs by the learner's name. It shares
``smdp_q_learning``'s parameters and tables (:func:`.smdp_q.prepare`).

All runs of a cell advance in one compiled (numba) loop, each run drawing its uniforms from its own
generator in blocks (:mod:`.smdp_tables`' layout), so a run's numbers never depend on its batch.
"""

from __future__ import annotations

from collections.abc import Sequence

import numba
import numpy as np

from opt_suite.families.base import TaskFamily
from opt_suite.families.capabilities import DISCRETE_ACTIONS, INDEX_OBSERVATIONS
from opt_suite.learners.base import EpisodeLog, Learner, LearnerRun
from opt_suite.learners.smdp_q import SMDPQLearning, has_model, model_free, prepare
from opt_suite.learners.smdp_tables import (
    U_ACTION,
    U_CHOICE,
    U_EXPLORE,
    U_OUTCOME,
    U_TERMINATE,
    draw_block,
)
from opt_suite.options import OptionSet
from opt_suite.options.termination import terminates

__all__ = ["IntraOptionQLearning", "intra_option_update"]


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
            b = beta_s2[o]
            u = v_s2 if b == 1.0 else (1.0 - b) * q_s2[o] + b * v_s2
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
def _advance(  # noqa: C901 - one loop, kept flat for speed
    blocks, runs, run_task, state, option, option_steps, ep_return, ep_steps, episode,
    returns, steps, q,
    next_state, outcome_cum, reward, terminal, start,
    action_cum, det_action, mu, beta, available,
    alpha, gamma, eps, bump, max_steps, episodes,
):  # fmt: skip
    """Advance each run of ``runs`` through its block of uniforms (or until its episodes end)."""
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
                alpha, gamma,
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


class IntraOptionQLearning(Learner):
    """Epsilon-greedy intra-option Q-learning over primitives + options (see the module)."""

    name = "intra_option_q_learning"
    # No model needed: without one it steps the env (env_tabular.py); with one, the model engine.
    requires = frozenset({DISCRETE_ACTIONS, INDEX_OBSERVATIONS})
    description = (
        "tabular intra-option Q-learning (Sutton et al. 1999, Sec. 5): every consistent option "
        "learns from every step"
    )
    Params = SMDPQLearning.Params

    def run(
        self,
        family: TaskFamily,
        runs: Sequence[LearnerRun],
        options: OptionSet,
        episodes: int,
        max_steps: int,
        frames: int | None = None,
    ) -> list[EpisodeLog]:
        """Learn on every run's task from scratch, all runs advanced together (compiled).

        Raises:
          ValueError: as ``smdp_q_learning``: no tabular model, tasks that differ in (S, A),
            options that do not match the family, episodes / max_steps below 1, or a frame
            budget (this learner has none: ``frame_budgets`` is False).
        """
        if frames is not None:
            raise ValueError(f"{self.name}: runs a number of episodes; it has no frame budget")
        if episodes < 1 or max_steps < 1:
            raise ValueError(
                f"{self.name}: expected episodes >= 1 and max_steps >= 1, got {episodes} and "
                f"{max_steps}"
            )
        if not runs:
            return []
        if not has_model(family):
            found = model_free(
                self.name, self.params, family, runs, options, episodes, max_steps, True
            )
            return [log for log, _ in found]
        tasks, run_tasks, tables, hyper = prepare(
            self.name, self.params, family, runs, options, max_steps
        )
        _, S, _, _ = tasks.shape
        R, n_opts = len(runs), tables.num_options
        assert tables.mu is not None  # OptionTables.build always sets it
        available = (
            np.ones((n_opts, S), dtype=np.bool_) if tables.available is None else tables.available
        )
        rngs = [np.random.default_rng(r.seed) for r in runs]
        run_task = np.asarray(run_tasks, dtype=np.int64)
        state = tasks.start[run_task].copy()
        option = np.full(R, -1, dtype=np.int64)
        option_steps = np.zeros(R, dtype=np.int64)
        ep_return, ep_steps = np.zeros(R), np.zeros(R, dtype=np.int64)
        episode = np.zeros(R, dtype=np.int64)
        returns, steps = np.zeros((R, episodes)), np.zeros((R, episodes), dtype=np.int64)
        q = np.full((R, S, n_opts), hyper.q_init)
        active = np.arange(R)
        while active.size:
            blocks = np.stack([draw_block(rngs[r]) for r in active])  # [n, BLOCK_STEPS, 5]
            _advance(
                blocks, active, run_task, state, option, option_steps, ep_return, ep_steps,
                episode, returns, steps, q,
                tasks.next_state, tasks.outcome_cum, tasks.reward, tasks.terminal, tasks.start,
                tables.action_cum, tables.det_action, tables.mu, tables.beta, available,
                hyper.alpha, hyper.gamma, hyper.epsilon, hyper.termination_bump,
                hyper.max_steps, episodes,
            )  # fmt: skip
            active = active[episode[active] < episodes]
        return [EpisodeLog(returns[i], steps[i]) for i in range(R)]
