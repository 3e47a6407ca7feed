"""The option-critic learning loop on tabular models, compiled with numba (Bacon et al. 2017).

Imported only when option-critic trains (``numba`` is a training-time dependency; registered modules
stay light). Without numba the same code runs as plain Python, correct but ~1000x slower.

Randomness: the loop draws nothing itself. It reads uniforms in [0, 1) from a buffer that the caller
fills from the run's ``numpy.random.Generator``; it stops before an episode could run out of them,
and the caller refills and resumes. So the numbers depend only on the seed, compiled or not.

Transitions are sampled from the task's exact model arrays (the family's ``TabularModel``: one
source of truth for dynamics and rewards): outcome k of (s, a) with the model's probability.
"""

from __future__ import annotations

import numpy as np

from baselines.option_critic._jit import COMPILED, njit
from baselines.option_critic.updates import (
    arrival_value,
    choose_option,
    critic_step,
    intra_option_step,
    sample_index,
    sigmoid,
    softmax_into,
    termination_step,
)

__all__ = ["run_chunk", "uniforms_per_episode", "COMPILED"]


def uniforms_per_episode(max_steps: int) -> int:
    """Uniforms one episode may read: start, first option and action, then 4 a step at most."""
    return 3 + 4 * max_steps


@njit
def run_chunk(
    next_state,  # int32 [T, S, A, K]
    cumprob,  # float64 [T, S, A, K], cumulative outcome probabilities, last = 1
    reward,  # float64 [T, S, A, K]
    terminal,  # bool [T, S]
    start,  # int64 [T], each task's start state
    live_states,  # int64 [T, S], non-terminal states first (random starts)
    live_count,  # int64 [T]
    config,  # float64 [12], see method.py loop_config()
    q_omega,  # float64 [S, O]
    q_u,  # float64 [S, O, A]
    theta,  # float64 [O, S, A]
    vartheta,  # float64 [O, S]
    uniforms,  # float64 [N]
    episode,  # int, index of the next episode (picks its task)
    episodes_end,  # int, stop before this episode
    steps_done,  # int, env steps spent so far
    budget,  # int, stop when steps_done reaches it (mid-episode: that episode is dropped)
    out_steps,  # int64 [E], per recorded episode: env steps
    out_return,  # float64 [E]: undiscounted return
    out_duration,  # float64 [E]: mean primitive steps per option execution
):
    """Run episodes until ``episodes_end``, the budget, the output arrays or the uniforms run out.

    Returns:
      (next episode index, steps_done, episodes recorded in the out arrays).
    """
    gamma, lr_critic, lr_intra, lr_term = config[0], config[1], config[2], config[3]
    temperature, epsilon, xi = config[4], config[5], config[6]
    softmax_options, baseline, random_starts = config[7] > 0.5, config[8] > 0.5, config[9] > 0.5
    max_steps = int(config[10])
    num_tasks = next_state.shape[0]
    num_outcomes = next_state.shape[3]
    num_options = q_omega.shape[1]
    per_task = int(config[11])  # 0: round robin over tasks; n: n episodes per task in order
    buf = np.empty(max(num_options, theta.shape[2]))
    need = 3 + 4 * max_steps
    cursor = 0
    recorded = 0
    while episode < episodes_end and steps_done < budget:
        if recorded >= out_steps.shape[0] or cursor + need > uniforms.shape[0]:
            break
        task = episode % num_tasks if per_task == 0 else min(episode // per_task, num_tasks - 1)
        u = uniforms[cursor]
        cursor += 1
        if random_starts:
            s = live_states[task, min(int(u * live_count[task]), live_count[task] - 1)]
        else:
            s = start[task]
        o = choose_option(q_omega[s], softmax_options, temperature, epsilon, uniforms[cursor], buf)
        softmax_into(theta[o, s], temperature, buf)
        a = sample_index(buf[: theta.shape[2]], uniforms[cursor + 1])
        cursor += 2
        ep_steps, ep_return, duration, duration_sum, executions = 0, 0.0, 0, 0.0, 0
        cut = False
        for _ in range(max_steps):
            if steps_done >= budget:
                cut = True
                break
            # Take a in s, observe s', r (outcome k of the model, with its probability).
            u = uniforms[cursor]
            cursor += 1
            k = 0
            while k < num_outcomes - 1 and u >= cumprob[task, s, a, k]:
                k += 1
            s_next = next_state[task, s, a, k]
            r = reward[task, s, a, k]
            done = terminal[task, s_next]
            steps_done += 1
            ep_steps += 1
            ep_return += r
            duration += 1
            # 1. Options evaluation: intra-option Q-learning towards r + gamma U(s', o).
            target = r
            if not done:
                beta_next = sigmoid(vartheta[o, s_next])
                target += gamma * arrival_value(q_omega[s_next], o, beta_next)
            critic_step(q_omega, q_u, s, o, a, target, lr_critic)
            # 2. Options improvement: intra-option policy gradient at (s, a) ...
            critic = q_u[s, o, a] - (q_omega[s, o] if baseline else 0.0)
            intra_option_step(theta, o, s, a, critic, lr_intra, temperature, buf)
            if done:
                break
            # ... and termination gradient at s'.
            termination_step(vartheta, q_omega[s_next], o, s_next, xi, lr_term)
            # If beta_o terminates in s', choose a new option by pi_Omega(s').
            if uniforms[cursor] < sigmoid(vartheta[o, s_next]):
                duration_sum += duration
                executions += 1
                duration = 0
                o = choose_option(
                    q_omega[s_next],
                    softmax_options,
                    temperature,
                    epsilon,
                    uniforms[cursor + 1],
                    buf,
                )
            cursor += 2
            softmax_into(theta[o, s_next], temperature, buf)
            a = sample_index(buf[: theta.shape[2]], uniforms[cursor])
            cursor += 1
            s = s_next
        if cut:
            break
        # The option still running when the episode ends counts as one execution (if it acted).
        if duration > 0:
            duration_sum += duration
            executions += 1
        out_steps[recorded] = ep_steps
        out_return[recorded] = ep_return
        out_duration[recorded] = duration_sum / executions
        recorded += 1
        episode += 1
    return episode, steps_done, recorded
