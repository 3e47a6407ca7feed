"""A policy over options learned on one test task, for pictures: "where π picks each option".

The paper's Figure 2 shows, on a new task, the probability that the learned policy over options
would execute each option in each state, and the path it takes. We learn that policy exactly as the
benchmark does — the ``smdp_q_learning`` learner, one run on the task — and read its Q table.
"""

from __future__ import annotations

import numpy as np

from opt_suite.families.base import TabularModel
from opt_suite.learners.smdp_q import SMDPQLearning
from opt_suite.learners.smdp_scalar import ScalarOptions, ScalarRun, ScalarTables
from opt_suite.learners.smdp_tables import Hyper, OptionTables, TaskTables
from opt_suite.options import TabularOptionSet
from opt_suite.options.termination import terminates

__all__ = ["learn_q", "greedy_path"]


def learn_q(
    model: TabularModel,
    options: TabularOptionSet,
    params: SMDPQLearning.Params,
    episodes: int,
    max_steps: int,
    seed: np.random.SeedSequence,
) -> np.ndarray:
    """Q [S, A + m] after ``episodes`` episodes of SMDP Q-learning on the task of ``model``."""
    tasks = TaskTables.stack([model])
    tables = OptionTables.build(options, model.num_states, model.num_actions)
    hyper = Hyper(
        params.alpha,
        params.gamma,
        params.epsilon,
        params.termination_bump,
        params.q_init,
        max_steps,
    )
    run = ScalarRun(
        ScalarTables.build(tasks, 0, ScalarOptions.build(tables)),
        hyper,
        np.random.default_rng(seed),
    )
    run.run_episodes(episodes)
    return run.q_array()


def greedy_path(
    model: TabularModel,
    options: TabularOptionSet,
    q: np.ndarray,
    termination_bump: float,
    max_steps: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """One episode of the greedy policy over options from the task's start.

    Options act and terminate as in the learner (β(s) plus ``termination_bump`` per step run).

    Returns:
      (states [T+1], chosen [T]): the states visited and, per step, the option that acted
      (0..A-1 primitives, A.. learned options).
    """
    num_actions = model.num_actions
    mu = np.concatenate([np.eye(num_actions)[:, None, :].repeat(model.num_states, 1), options.mu])
    beta = np.concatenate([np.ones((num_actions, model.num_states)), options.beta])
    state, option, ran = int(model.start), -1, 0
    states = [state]
    chosen: list[int] = []
    while not model.terminal[state] and len(chosen) < max_steps:
        if option < 0:
            option, ran = int(np.argmax(q[state])), 0
        action = int(rng.choice(num_actions, p=mu[option, state] / mu[option, state].sum()))
        outcome = int(rng.choice(model.prob.shape[2], p=model.prob[state, action]))
        state = int(model.next_state[state, action, outcome])
        chosen.append(option)
        states.append(state)
        ran += 1
        if terminates(rng.random(), beta[option, state], termination_bump, ran):
            option = -1
    return np.array(states), np.array(chosen)
