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
- *beta in U* is by default the option's own beta_o(s'), without ``termination_bump``: the bump
  depends on how long the option has run, which U (a function of s' and o) cannot see. Execution
  does cut options with it (min(1, beta_o(s') + bump k) after the k-th step,
  :func:`~opt_suite.options.termination.terminates`), so that target values continuing options
  that execution would have ended. ``bump_in_target: true`` puts the bump into U with the same
  rule: the option that took the step uses its own k; every other consistent option is read as
  started in s, so the step is its first (k = 1). U is then
  (1 - b) Q(s', o) + b max_o' Q(s', o') with b = min(1, beta_o(s') + bump k). Off by default, so
  every spec written before it keeps its hash and its numbers (issue 25).

With primitives only, this is one-step Q-learning, and gives :mod:`.smdp_q`'s numbers exactly (the
same uniforms, choices and float operations; a test checks it).

Why a learner of its own rather than a flag of ``smdp_q_learning``: it is a different update rule,
not a setting of the same one; keeping it apart leaves the paper learner's two engines (and every
published number) untouched, and a spec says what it runs by the learner's name. It shares
``smdp_q_learning``'s parameters and tables (:func:`.smdp_q.prepare`).

All runs of a cell advance in one compiled (numba) loop (:mod:`.intra_option_kernels`, imported
when it runs), each run drawing its uniforms from its own generator in blocks
(:mod:`.smdp_tables`' layout), so a run's numbers never depend on its batch.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from opt_suite.families.capabilities import DISCRETE_ACTIONS, INDEX_OBSERVATIONS
from opt_suite.learners.base import EpisodeLog, Learner, LearnerContext
from opt_suite.learners.smdp_q import SMDPQLearning, has_model, model_free, prepare
from opt_suite.learners.smdp_tables import draw_block
from opt_suite.params import param

__all__ = ["IntraOptionQLearning"]


class IntraOptionQLearning(Learner):
    """Epsilon-greedy intra-option Q-learning over primitives + options (see the module)."""

    name = "intra_option_q_learning"
    # No model needed: without one it steps the env (env_tabular.py); with one, the model engine.
    requires = frozenset({DISCRETE_ACTIONS, INDEX_OBSERVATIONS})
    description = (
        "tabular intra-option Q-learning (Sutton et al. 1999, Sec. 5): every consistent option "
        "learns from every step"
    )

    @dataclasses.dataclass(frozen=True)
    class Params(SMDPQLearning.Params):
        """SMDP Q-learning's hyper-parameters, plus where the termination bump acts."""

        bump_in_target: bool = param(
            False,
            added_later=True,
            doc="also put termination_bump into the update's target: U continues an option with "
            "1 - min(1, beta + bump k), the probability execution continues it (k: the running "
            "option's steps; 1 for the other consistent options); false (default): beta alone",
        )

    def run(self, context: LearnerContext) -> list[EpisodeLog]:
        """Learn on every run's task from scratch, all runs advanced together (compiled).

        Raises:
          ValueError: as ``smdp_q_learning``: no tabular model, tasks that differ in (S, A),
            options that do not match the family, episodes / max_steps below 1, or a frame
            budget (this learner has none: ``frame_budgets`` is False).
        """
        family, runs, options = context.family, context.runs, context.options
        episodes, max_steps, frames = context.episodes, context.max_steps, context.frames
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
        from opt_suite.learners.intra_option_kernels import advance as _advance

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
                hyper.target_bump, hyper.max_steps, episodes,
            )  # fmt: skip
            active = active[episode[active] < episodes]
        return [EpisodeLog(returns[i], steps[i]) for i in range(R)]

    # The untrained policy (alpha = 0): a Q table at q_init, as SMDP Q-learning's.
    zero_shot = SMDPQLearning.zero_shot
