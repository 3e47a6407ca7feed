"""The test-time learner: tabular SMDP Q-learning over primitives + a method's options.

On each held-out test task an agent learns from scratch with epsilon-greedy SMDP Q-learning (Sutton,
Precup & Singh, 1999, eq. 11) over the A primitive actions (options that act once and terminate)
followed by the method's options. A chosen option runs until its termination function fires, the
goal is reached, or the episode is cut at ``max_steps`` primitive steps; then

    Q(s, o) <- Q(s, o) + alpha [R + gamma^k max_o' Q(s', o') - Q(s, o)]

with R the discounted reward over the option's k steps (no bootstrap at the goal). An option is
never started outside its initiation set (when the set has them, :meth:`OptionSet.initiation`):
greedy choices, exploration and the max over o' range over the options available there. As in
the paper's implementation notes (appendix E), the termination probability gets
``termination_bump`` added per step the option has run, beta(s) + bump * k, so with the default
0.05 no option runs past 20 steps.
This is the paper's evaluation (Section 4.1: "the tabular form of Q-learning ... with epsilon-greedy
exploration"); acting is a table look-up in the tabulated mu and beta.

Every run on a family with an exact model steps through one compiled loop (:mod:`.smdp_kernel`,
driven per run by :mod:`.smdp_scalar` and per cell by :mod:`.smdp_batch`); a run's numbers depend
only on its own seed, never on the other runs of its cell. ``run_with_usage`` takes the same loop
with its usage observer on, so it gives the same numbers and also counts, per episode, how often
each option was chosen and how many steps it ran (for ``opt-suite option-usage``). Without a model
the learner steps the env (:mod:`.env_tabular`, a Python loop: an env is opaque to the compiler).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from opt_suite.families.base import TabularModel, TabularModelMixin, TaskFamily, exact_model
from opt_suite.families.capabilities import DISCRETE_ACTIONS, INDEX_OBSERVATIONS
from opt_suite.learners.base import EpisodeLog, Learner, LearnerContext, LearnerRun, OptionUsage
from opt_suite.learners.smdp_batch import run_batch
from opt_suite.learners.smdp_scalar import ScalarOptions, ScalarRun, ScalarTables
from opt_suite.learners.smdp_tables import Hyper, OptionTables, TaskTables
from opt_suite.options import OptionSet, TabularOptionSet
from opt_suite.params import param

__all__ = [
    "SMDPQLearning",
    "has_model",
    "model_free",
    "prepare",
    "tabulate",
    "untrained_returns",
]


def tabulate(options: OptionSet, num_states: int) -> TabularOptionSet:
    """``options`` as tables over the S state indices (a tabular family's observations).

    A tabular set is used as it is; any other kind acts once on every state index, so e.g. network
    options trained on a tabular family are looked up like tables (initiation sets included).
    """
    if isinstance(options, TabularOptionSet):
        return options
    states = np.arange(num_states)
    mu, beta = options.probabilities(states)
    initiation = options.initiation(states).T if options.has_initiation else None
    return TabularOptionSet(mu.transpose(1, 0, 2), beta.T, options.names, initiation)


class SMDPQLearning(Learner):
    """Epsilon-greedy tabular SMDP Q-learning over primitives + options (the paper's learner)."""

    name = "smdp_q_learning"
    # No model needed: without one it steps the env (env_tabular.py); with one, the model engines.
    requires = frozenset({DISCRETE_ACTIONS, INDEX_OBSERVATIONS})
    counts_usage = True
    description = (
        "tabular SMDP Q-learning over primitives + options, epsilon-greedy (paper Sec. 4.1)"
    )

    @dataclasses.dataclass(frozen=True)
    class Params:
        """Hyper-parameters of SMDP Q-learning."""

        alpha: float = param(0.1, doc="step size of the Q update", gt=0, le=1)
        gamma: float = param(0.99, doc="discount per primitive step", gt=0, le=1)
        epsilon: float = param(
            0.1, doc="probability of choosing a uniformly random option", ge=0, le=1
        )
        termination_bump: float = param(
            0.05,
            doc="added to an option's beta per step it has run (paper app. E); 0 disables",
            ge=0,
            le=1,
        )
        q_init: float = param(0.0, doc="initial value of every Q(s, o)")

    def run(self, context: LearnerContext) -> list[EpisodeLog]:
        """Learn on every run's task from scratch, one run after another in the compiled loop.

        Returns:
          One EpisodeLog per run, in order: undiscounted return and primitive steps per episode.

        Raises:
          ValueError: the family has no tabular model, its tasks differ in (S, A), the options do
            not match its states and actions, episodes / max_steps is below 1, or a frame budget
            is given (this learner has none: ``frame_budgets`` is False).
        """
        family, runs, options = context.family, context.runs, context.options
        episodes, max_steps, frames = context.episodes, context.max_steps, context.frames
        if frames is not None:
            raise ValueError(f"{self.name}: runs a number of episodes; it has no frame budget")
        self._check_budget(episodes, max_steps)
        if not runs:
            return []
        if not has_model(family):
            found = model_free(self.name, self.params, family, runs, options, episodes, max_steps)
            return [log for log, _ in found]
        tasks, run_tasks, tables, hyper = self._prepare(family, runs, options, max_steps)
        returns, steps = run_batch(
            tasks,
            run_tasks,
            tables,
            hyper,
            [np.random.default_rng(r.seed) for r in runs],
            episodes,
        )
        return [EpisodeLog(returns[i], steps[i]) for i in range(len(runs))]

    def zero_shot(self, context: LearnerContext) -> list[np.ndarray]:
        """Returns of the untrained policy, per run: see :func:`untrained_returns`."""
        c = context
        return [
            untrained_returns(self, c.family, run, c.options, c.episodes, c.max_steps)
            for run in c.runs
        ]

    def run_with_usage(self, context: LearnerContext) -> list[tuple[EpisodeLog, OptionUsage]]:
        """:meth:`run`, also counting per episode how often each option is chosen and its steps.

        Every run takes :meth:`run`'s compiled loop with the usage observer on (it only reads
        the loop's variables), so the EpisodeLogs equal :meth:`run`'s bit for bit.
        """
        family, runs, options = context.family, context.runs, context.options
        episodes, max_steps = context.episodes, context.max_steps
        self._check_budget(episodes, max_steps)
        if not runs:
            return []
        if not has_model(family):
            return model_free(self.name, self.params, family, runs, options, episodes, max_steps)
        tasks, run_tasks, tables, hyper = self._prepare(family, runs, options, max_steps)
        scalar_options = ScalarOptions.build(tables)
        names = tuple(f"a{a}" for a in range(tasks.shape[2])) + tuple(options.names)
        results = []
        for r, t in zip(runs, run_tasks, strict=True):
            table = ScalarTables.build(tasks, t, scalar_options)
            scalar = ScalarRun(table, hyper, np.random.default_rng(r.seed), record_usage=True)
            scalar.run_episodes(episodes)
            log = EpisodeLog(np.array(scalar.returns), np.array(scalar.steps, dtype=np.int64))
            usage = OptionUsage(
                names,
                tasks.shape[2],
                np.array(scalar.calls, dtype=np.int64),
                np.array(scalar.option_steps, dtype=np.int64),
            )
            results.append((log, usage))
        return results

    def _check_budget(self, episodes: int, max_steps: int) -> None:
        if episodes < 1 or max_steps < 1:
            raise ValueError(
                f"{self.name}: expected episodes >= 1 and max_steps >= 1, got {episodes} and "
                f"{max_steps}"
            )

    def _prepare(
        self, family: TaskFamily, runs: Sequence[LearnerRun], options: OptionSet, max_steps: int
    ) -> tuple[TaskTables, list[int], OptionTables, Hyper]:
        return prepare(self.name, self.params, family, runs, options, max_steps)


def prepare(
    name: str,
    params: SMDPQLearning.Params,
    family: TaskFamily,
    runs: Sequence[LearnerRun],
    options: OptionSet,
    max_steps: int,
) -> tuple[TaskTables, list[int], OptionTables, Hyper]:
    """The stacked task models, each run's task index, the option tables and the numbers.

    Shared by the tabular learners (``name`` is the caller's, for error messages).
    """
    models: dict[str, TabularModel] = {}
    for r in runs:
        if r.task.task_id not in models:
            model = exact_model(family, r.task)
            if model is None:
                raise ValueError(
                    f"learner {name!r} needs a tabular model, but family "
                    f"{family.name!r} has none for task {r.task.task_id!r}"
                )
            models[r.task.task_id] = model
    order = list(models)
    tasks = TaskTables.stack([models[t] for t in order])
    _, S, A, _ = tasks.shape
    hyper = hyper_of(params, max_steps)
    run_tasks = [order.index(r.task.task_id) for r in runs]
    return tasks, run_tasks, OptionTables.build(tabulate(options, S), S, A), hyper


def hyper_of(params: SMDPQLearning.Params, max_steps: int) -> Hyper:
    """The engines' numbers from a tabular learner's params (shared by every engine's caller)."""
    p = params
    # Only intra-option Q-learning's Params has ``bump_in_target`` (its target, not execution).
    in_target = getattr(p, "bump_in_target", False)
    target_bump = p.termination_bump if in_target else 0.0
    return Hyper(p.alpha, p.gamma, p.epsilon, p.termination_bump, p.q_init, max_steps, target_bump)


def untrained_returns(
    learner: Learner,
    family: TaskFamily,
    run: LearnerRun,
    options: OptionSet,
    episodes: int,
    max_steps: int,
) -> np.ndarray:
    """``episodes`` returns of a tabular Q-learner that never updates (``alpha = 0``).

    Its Q table stays at ``q_init`` everywhere, so every greedy choice is a tie broken uniformly
    and the policy is the uniform one over the A primitives and the m options (available ones,
    with initiation sets): what the learner acts with before its first update, for as long as the
    zero-shot episodes last. Shared by the tabular learners (their Params have ``alpha``).
    """
    frozen = type(learner)(dataclasses.replace(learner.params, alpha=0.0))
    context = LearnerContext(family, [run], options, episodes, max_steps)
    return np.asarray(frozen.run(context)[0].returns)


def has_model(family: TaskFamily) -> bool:
    """Whether the model-based engines apply (an exact model); else the env is stepped."""
    return isinstance(family, TabularModelMixin)


def model_free(
    name: str,
    params: SMDPQLearning.Params,
    family: TaskFamily,
    runs: Sequence[LearnerRun],
    options: OptionSet,
    episodes: int,
    max_steps: int,
    intra_option: bool = False,
) -> list[tuple[EpisodeLog, OptionUsage]]:
    """The tabular learners on a family without a model: Q over its Discrete(n) observations.

    See :mod:`.env_tabular`; ``name`` is the caller's, for error messages.

    Raises:
      ValueError: observations that are not a ``Discrete`` space, or actions that are not.
    """
    from opt_suite.learners.env_tabular import run_on_envs

    space, actions = family.observation_space, family.action_space
    if getattr(space, "shape", None) != () or not hasattr(space, "n"):
        raise ValueError(f"learner {name!r} needs index (Discrete) observations; got {space}")
    if not hasattr(actions, "n"):
        raise ValueError(f"learner {name!r} needs discrete actions; got {actions}")
    S, A = int(space.n), int(actions.n)
    hyper = hyper_of(params, max_steps)
    tables = OptionTables.build(tabulate(options, S), S, A)
    names = tuple(f"a{a}" for a in range(A)) + tuple(options.names)
    found = run_on_envs(family, runs, tables, hyper, episodes, intra_option)
    return [(log, OptionUsage(names, A, calls, steps)) for log, calls, steps in found]
