"""The tabular learners without a model: SMDP and intra-option Q-learning stepping the env itself.

``smdp_q_learning`` and ``intra_option_q_learning`` need a table over states, not a model of the
task: on a family with index observations and no exact model (a gymnasium env such as FrozenLake)
they learn by stepping the task's env, with Q over the ``Discrete`` observation space's ``n``
indices. Where a family has an exact model, the model-based engines (:mod:`.smdp_kernel`,
:mod:`.smdp_scalar`, :mod:`.intra_option_q`) are an optimisation of the same algorithm, chosen
because sampling a table is cheaper than a gymnasium step.

Same algorithm, same numbers: every step consumes the uniforms of :mod:`.smdp_tables`' layout
from the run's own generator (exploration, ties, the option's action, its termination) and the
update is the model-based engines' float for float. Only the outcome of (s, a) differs: the env
draws it with its own generator (seeded once per run from a fixed child of the run's seed), where
the model engines use the step's ``U_OUTCOME`` uniform. So on a deterministic env the two give
identical returns and steps (a test checks it on four rooms with ``slip: 0``), and on a stochastic
one the same distribution.

Episodes end when the env terminates (no bootstrap), when the env truncates (its own step cap, or
the family's ``max_episode_steps``) or at the learner's ``max_steps`` (both cuts bootstrap).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from opt_suite.families.base import TaskFamily
from opt_suite.learners.base import EpisodeLog, LearnerRun
from opt_suite.learners.smdp_tables import BLOCK_STEPS, Hyper, OptionTables, draw_block
from opt_suite.options.termination import smdp_target, terminates

__all__ = ["ENV_SEED_STREAM", "env_seed", "run_on_envs"]

#: Per run: its EpisodeLog and, per episode, how often each option was chosen and its steps.
RunResult = tuple[EpisodeLog, np.ndarray, np.ndarray]

#: The spawn key suffix of a run's env seed: a fixed child of the run's seed, so the learner's
#: uniforms (the run's generator) and the env's draws are independent streams.
ENV_SEED_STREAM = 0

#: The env's uniforms drawn ahead per call of the compiled loop (an episode on FrozenLake 8x8
#: with options is ~30 steps; the unused ones are given back).
ENV_UNIFORMS = 64


def env_seed(seed: np.random.SeedSequence) -> int:
    """The seed of the first ``env.reset`` of a run with ``seed`` (later resets continue it)."""
    child = np.random.SeedSequence(seed.entropy, spawn_key=(*seed.spawn_key, ENV_SEED_STREAM))
    return int(child.generate_state(1)[0])


@dataclasses.dataclass(frozen=True)
class _Options:
    """The option tables as nested lists (fast scalar indexing), see :class:`OptionTables`."""

    action_cum: list
    det_action: list
    beta: list
    mu: np.ndarray
    available: np.ndarray
    explore: list | None

    @classmethod
    def of(cls, tables: OptionTables) -> _Options:
        assert tables.mu is not None  # OptionTables.build always sets it
        available = (
            np.ones(tables.beta.shape, dtype=bool) if tables.available is None else tables.available
        )
        explore = None
        if tables.available is not None:
            explore = [np.flatnonzero(row).tolist() for row in tables.available.T]
        return cls(
            tables.action_cum.tolist(),
            tables.det_action.tolist(),
            tables.beta.tolist(),
            tables.mu,
            available,
            explore,
        )


def run_on_envs(
    family: TaskFamily,
    runs: Sequence[LearnerRun],
    tables: OptionTables,
    hyper: Hyper,
    episodes: int,
    intra_option: bool = False,
) -> list[RunResult]:
    """Each run learns from scratch on its own env of its task, in order.

    Returns:
      Per run: its EpisodeLog, and int [episodes, O] arrays of the decisions that chose each
      option and the primitive steps each option ran (primitives first), per episode.

    Args:
      family: gives each run's env (``family.make_env(task)``), index observations.
      runs: (task, seed) pairs.
      tables: primitives + options tabulated over the S indices.
      hyper: the learner's numbers.
      episodes: episodes per run.
      intra_option: the intra-option update (every consistent option, every step) instead of
        SMDP Q-learning's one update per option execution.
    """
    options = _Options.of(tables)
    logs = []
    for run in runs:
        env = family.make_env(run.task)
        try:
            # An env whose step is one draw from its table takes the compiled loop (SMDP only).
            source = None if intra_option else getattr(env, "table_source", lambda: None)()
            if source is not None:
                rng = np.random.default_rng(run.seed)
                logs.append(_run_compiled(env, source, tables, hyper, rng, env_seed(run.seed),
                                          episodes))  # fmt: skip
                continue
            logs.append(
                _run(env, options, hyper, np.random.default_rng(run.seed), env_seed(run.seed),
                     episodes, intra_option)
            )  # fmt: skip
        finally:
            env.close()
    return logs


def _run_compiled(env: Any, source: Any, tables: OptionTables, hyper: Hyper,
                  rng: np.random.Generator, seed: int, episodes: int) -> RunResult:  # fmt: skip
    """One run of SMDP Q-learning in the compiled loop, the env's step read from its table.

    ``source`` is the env's :class:`~opt_suite.families.gymnasium.env.TableSource`: the loop
    samples each step's outcome from it with the env's own next uniform, as the env's step
    would, and the env itself only resets (its reset draws the start state from the same
    generator). So that the reset sees the generator where the env's own steps would have left
    it, the loop's uniforms are drawn from the env's generator and, when the loop stops before
    using them all (at an episode's end), the generator is put back and advanced by the number
    used. Same numbers as :func:`_run` (a test and ``benchmarks/smdp_run_hashes.py`` check it).
    """
    from opt_suite.learners import smdp_kernel as kernel
    from opt_suite.learners.smdp_scalar import ScalarOptions

    opts = ScalarOptions.build(tables)
    num_states, n_opts = source.next_state.shape[0], opts.num_options
    q = tables.initial_q(1, hyper.q_init)
    returns, steps = np.zeros(episodes), np.zeros(episodes, dtype=np.int64)
    calls = np.zeros((episodes, n_opts), dtype=np.int64)
    option_steps = np.zeros((episodes, n_opts), dtype=np.int64)
    max_steps = min(hyper.max_steps, source.frame_cap)  # the env truncates at its frame cap
    obs, _ = env.reset(seed=seed)
    ints = np.array([_observation(obs, num_states), -1, 0, 0, 0, 0], dtype=np.int64)
    floats = np.array([0.0, 1.0, 0.0])
    block, pos = np.empty((BLOCK_STEPS, 5)), BLOCK_STEPS
    generator = source.generator()
    while ints[kernel.IS_EPISODES] < episodes:
        if pos == BLOCK_STEPS:
            block, pos = draw_block(rng), 0
        before = generator.bit_generator.state
        env_uniforms = generator.random(ENV_UNIFORMS)
        episode = ints[kernel.IS_EPISODES]
        pos, used = kernel.advance(
            block, pos, True, env_uniforms, ints, floats, q,
            source.next_state, source.cumulative, source.reward, source.terminated, -1,
            opts.action_cum, opts.det_action, opts.beta, opts.explore_index, opts.explore_count,
            hyper.alpha, hyper.gamma, hyper.epsilon, hyper.termination_bump, max_steps, episodes,
            returns, steps, True, calls, option_steps,
        )  # fmt: skip
        if used < ENV_UNIFORMS:  # back to where the env's own steps would have left it
            generator.bit_generator.state = before
            generator.random(used)
        if ints[kernel.IS_EPISODES] > episode and ints[kernel.IS_EPISODES] < episodes:
            obs, _ = env.reset()
            ints[kernel.IS_STATE] = _observation(obs, num_states)
            generator = source.generator()
    return EpisodeLog(returns, steps), calls, option_steps


def _choose(q_row: list, explore_here: list | None, u_explore: float, u_choice: float,
            eps: float) -> int:  # fmt: skip
    """Epsilon-greedy, ties broken by ``u_choice`` (the model-based engines' choice exactly)."""
    n_opts = len(q_row)
    if u_explore < eps:
        if explore_here is not None:
            j = int(u_choice * len(explore_here))
            return explore_here[j if j < len(explore_here) else len(explore_here) - 1]
        o = int(u_choice * n_opts)
        return o if o < n_opts else n_opts - 1
    best = max(q_row)
    n_best = q_row.count(best)
    if n_best == 1:
        return q_row.index(best)
    j = int(u_choice * n_best)
    if j >= n_best:
        j = n_best - 1
    # The j-th best, found from the one before (ties are common while Q is flat; building the
    # list of all the best cost ~0.2 us more per tie).
    o = q_row.index(best)
    for _ in range(j):
        o = q_row.index(best, o + 1)
    return o


def _observation(obs: Any, num_states: int) -> int:
    s = int(obs)
    if not 0 <= s < num_states:
        raise ValueError(f"the env gave observation {obs!r}, outside its Discrete({num_states})")
    return s


def _run(env, options: _Options, hyper: Hyper, rng: np.random.Generator, seed: int,  # noqa: C901
         episodes: int, intra_option: bool) -> RunResult:  # fmt: skip
    """One run: ``episodes`` episodes of (SMDP or intra-option) Q-learning on ``env``.

    The loop is the learner's whole share of a step's cost (the rest is ``env.step``), so it
    touches Python scalars where it can: the SMDP table is nested lists, and the usage counts are
    lists turned into arrays at the end. The termination rule is ``terminates``, as in every other
    engine (writing it out in place measured no gain).
    """
    from opt_suite.learners.intra_option_kernels import intra_option_update

    act_cum, det_action, beta, explore = (
        options.action_cum,
        options.det_action,
        options.beta,
        options.explore,
    )
    n_opts, num_states = len(beta), len(beta[0])
    a_last = len(act_cum[0][0]) - 1
    alpha, gamma, eps, bump, bump_target, max_steps = (
        hyper.alpha,
        hyper.gamma,
        hyper.epsilon,
        hyper.termination_bump,
        hyper.target_bump,
        hyper.max_steps,
    )
    q_array = np.full((num_states, n_opts), hyper.q_init)
    q_array[~options.available.T] = -np.inf  # see OptionTables.available
    # SMDP Q-learning reads and writes single entries: lists. The intra-option kernel updates a
    # whole row in place: it keeps the array, and a decision reads its row as a list.
    q: list[list[float]] = q_array.tolist()
    mu_t = np.ascontiguousarray(options.mu.transpose(1, 2, 0))  # [S, A, O]
    beta_t = np.ascontiguousarray(np.asarray(beta).T)  # [S, O]
    available_t = np.ascontiguousarray(options.available.T)  # [S, O]
    step = env.step
    returns: list[float] = []
    steps: list[int] = []
    calls: list[list[int]] = []
    option_steps: list[list[int]] = []
    ep_calls, ep_option_steps = [0] * n_opts, [0] * n_opts
    block: list[list[float]] = []
    pos = BLOCK_STEPS
    obs, _ = env.reset(seed=seed)
    s, o, s0, k, racc, disc, ret, t_ep = _observation(obs, num_states), -1, 0, 0, 0.0, 1.0, 0.0, 0
    while len(returns) < episodes:
        if pos == BLOCK_STEPS:
            block, pos = draw_block(rng).tolist(), 0
        u_explore, u_choice, u_action, _, u_term = block[pos]
        pos += 1
        if o < 0:
            here = None if explore is None else explore[s]
            q_s = q_array[s].tolist() if intra_option else q[s]
            o = _choose(q_s, here, u_explore, u_choice, eps)
            s0, k, racc, disc = s, 0, 0.0, 1.0
            ep_calls[o] += 1
        a = det_action[o][s]
        if a < 0:  # sample a ~ mu(s, .): the first a whose cumulative mu exceeds u
            c = act_cum[o][s]
            a = 0
            while a < a_last and c[a] <= u_action:
                a += 1
        obs, r, terminated, truncated, _ = step(a)
        s2, r = _observation(obs, num_states), float(r)
        k += 1
        ret += r
        t_ep += 1
        done = bool(terminated)
        cut = bool(truncated) or t_ep >= max_steps
        ends = done or cut or terminates(u_term, beta[o][s2], bump, k)
        if intra_option:
            q_s = q_array[s]
            intra_option_update(
                q_s, q_array[s2], mu_t[s, a], beta_t[s2], available_t[s2],
                r, done, alpha, gamma, o, bump_target * k, bump_target,
            )  # fmt: skip
        else:
            racc += disc * r
            disc *= gamma
            if ends:
                row = q[s0]
                row[o] = row[o] + alpha * (smdp_target(racc, disc, max(q[s2]), done) - row[o])
        if ends:
            ep_option_steps[o] += k
            o = -1
        s = s2
        if done or cut:
            returns.append(ret)
            steps.append(t_ep)
            calls.append(ep_calls)
            option_steps.append(ep_option_steps)
            ep_calls, ep_option_steps = [0] * n_opts, [0] * n_opts
            obs, _ = env.reset()
            s, o, ret, t_ep = _observation(obs, num_states), -1, 0.0, 0
    return (
        EpisodeLog(np.array(returns), np.array(steps, dtype=np.int64)),
        np.array(calls, dtype=np.int64).reshape(episodes, n_opts),
        np.array(option_steps, dtype=np.int64).reshape(episodes, n_opts),
    )
