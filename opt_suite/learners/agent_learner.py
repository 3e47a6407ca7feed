"""Test-time learner ``tf_agents``: a tf-agents PPO agent over primitives + options (the deep path).

The paper's Atari experiments (Sec. 4.2) train "the policy over options using A3C ... with grayscale
images as inputs". tf-agents has no A3C; PPO with parallel envs is its nearest actor-critic (the
Atari experts are PPO agents for the same reason). On each held-out task the agent learns from
scratch on an :class:`~opt_suite.learners.option_env.OptionAugmentedEnv` of ``num_envs`` copies of
the task (the family's :func:`~opt_suite.families.env_batch.make_env_batch`: Atari's on C++
threads): its actions are the A primitives followed by the m options, an option runs until it
terminates as one semi-Markov step, and the agent bootstraps with γ^k (the env's discount is γ^k and
the agent's own discount factor is 1).

The agent is the Atari experts' (:func:`opt_suite.agents.ppo.build_agent`: the A3C network of Mnih
et al. 2016 on frames — two convolutions and 256 units — for the actor and the value; 3x3 stride-1
convolutions on images under 20 px, dense layers only on vectors and state indices) with its
discount factor set to 1; its action set is A + m.

Learning curve: every finished episode of every sub-env, in the order they end, with its return,
primitive steps and the emulator frames the whole run had used by then (all sub-envs together).
The budget is ``episodes`` episodes (the run stops once that many ended; episodes still running
are cut, not counted), or — with ``evaluation.frames`` — a number of emulator frames: the run stops
acting after the batched step that reaches it, the episodes that *ended within* the budget are
the curve, and the episodes still running then (at most one per sub-env, and any that ended in
that last step past the budget) are cut and not counted; their frames were spent, so they count
against the budget like every other frame. No PPO update uses experience past the budget.
Deterministic per run seed: TensorFlow's global seed, the envs' reset seeds and the options' draws
all derive from it. A worker keeps its agent per graph (:mod:`opt_suite.agents.agent_cache`: the
PPO update is traced once per worker, not once per run) and resets it to a fresh build's state for
every run, so a run's numbers do not depend on the runs its worker made before.

Option usage (``counts_usage``): per logged episode, the decisions that chose each of the A + m
choices, the primitive steps taken while each ran and the emulator frames those steps used (resets'
frames belong to no choice), counted by the option-augmented env as the
agent acts (integer increments: counting changes no number, ``run_with_usage`` equals ``run``).
Within a frame budget the counts are those of the episodes that ended within it, like the curve.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import gymnasium
import numpy as np

from opt_suite.agents.params import PPOParams
from opt_suite.component import ProblemSize
from opt_suite.families.capabilities import DISCRETE_ACTIONS
from opt_suite.families.env_batch import make_env_batch
from opt_suite.learners.base import EpisodeLog, Learner, LearnerContext, LearnerRun, OptionUsage
from opt_suite.options.policy_start import PolicyStart
from opt_suite.params import param

__all__ = ["TFAgentsLearner"]


class TFAgentsLearner(Learner):
    """PPO (tf-agents) over primitives + options on an option-augmented env (paper Sec. 4.2)."""

    name = "tf_agents"
    frame_budgets = True
    counts_usage = True
    clones_policy = True
    #: Any observation: convolutions on images, dense layers on vectors and state indices (the
    #: trunk is sized to the observation, ``opt_suite.option_networks.trunk``).
    requires = frozenset({DISCRETE_ACTIONS})
    description = (
        "tf-agents PPO over primitives + options: an option runs to termination as one SMDP step "
        "(discount gamma^k); for image families (Atari, paper Sec. 4.2)"
    )

    @dataclasses.dataclass(frozen=True)
    class Params:
        """The experts' PPO agent, and how options run under it."""

        ppo: PPOParams = param(
            PPOParams(),
            doc="the PPO agent, as the Atari experts' (num_envs parallel copies of the task, "
            "steps_per_iteration decisions per env between updates); its gamma is not used: the "
            "agent bootstraps with the env's gamma^k",
        )
        gamma: float = param(
            0.99, doc="discount per primitive step (paper app. E: 0.99)", gt=0, le=1
        )
        termination_bump: float = param(
            0.05,
            doc="added to an option's beta per step it has run (paper app. E); 0 disables",
            ge=0,
            le=1,
        )

    @classmethod
    def check_family(cls, params: Any, family: Any) -> list[tuple[str, str]]:
        """The agent's network must fit the family's observations (else it fails at run time)."""
        from opt_suite.agents.params import network_fit

        return network_fit(params.ppo, family, "ppo.")

    @classmethod
    def memory_estimate(cls, params: Any, size: ProblemSize) -> tuple[int, str]:
        """(bytes, what) of the agent's networks and batch, for the work estimate.

        Counted with A outputs (the m options, unknown here, add one logit each: negligible).
        """
        from opt_suite.agents.params import ppo_memory

        found = ppo_memory(params.ppo, size.observation_shape, size.num_actions)
        return found, "the PPO agent: networks with Adam's moments and one update's batch"

    def run(self, context: LearnerContext) -> list[EpisodeLog]:
        """Learn on every run's task from scratch, one run after the other.

        Args:
          context: the runs (their family needs discrete actions) and their budget;
            ``context.frames`` is a budget in emulator frames per run instead of ``episodes``
            (see the module docstring for the episodes running when it is spent).

        Raises:
          ValueError: episodes / max_steps / frames below 1, or a family without discrete
            actions. Options with initiation sets are masked in the agent's policy over options
            (:mod:`.initiation_mask`): it never chooses one where it may not start.
        """
        pairs = self.run_with_usage(context)
        return [log for log, _ in pairs]  # counting is passive: the same logs

    def run_with_usage(self, context: LearnerContext) -> list[tuple[EpisodeLog, OptionUsage]]:
        """:meth:`run`, with each logged episode's option counts (see the module docstring)."""
        family, runs, options = context.family, context.runs, context.options
        episodes, max_steps, frames = context.episodes, context.max_steps, context.frames
        if episodes < 1 or max_steps < 1 or (frames is not None and frames < 1):
            raise ValueError(
                f"{self.name}: expected episodes >= 1, max_steps >= 1 and frames >= 1, got "
                f"{episodes}, {max_steps} and {frames}"
            )
        return [self._run_one(family, r, options, episodes, max_steps, frames) for r in runs]

    def zero_shot(self, context: LearnerContext) -> list[np.ndarray]:
        """Returns of the agent's initial policy, never updated, over ``context.options``.

        Per run, the first ``context.episodes`` episodes to end across the ``num_envs``
        sub-envs, acting with the freshly built agent's actor (as ``run`` would at its first
        step) and no PPO update.
        """
        c = context
        return [
            self._zero_shot_one(c.family, run, c.options, c.episodes, c.max_steps) for run in c.runs
        ]

    def _zero_shot_one(
        self, family: Any, run: LearnerRun, options: Any, episodes: int, max_steps: int
    ) -> np.ndarray:
        from opt_suite.learners import ppo_parts

        env, agent, seed, _ = self._agent_on(family, run, options, max_steps)
        try:
            ppo_parts.act(env, agent, episodes, seed=seed)
        finally:
            env.close()
        return np.array([e.ret for e in env.episodes[:episodes]], np.float64)

    def _agent_on(
        self, family: Any, run: LearnerRun, options: Any, max_steps: int, measure_fit: bool = False
    ) -> Any:
        """(option env of ``run``'s task, a fresh agent, the acting seed, its clone's fit).

        All from ``run.seed``. The fit (``CloneFit``) is measured with ``measure_fit`` on a
        policy start only (else None), its held-out clone from a stream of its own.
        """
        from opt_suite.learners import ppo_parts
        from opt_suite.learners.initiation_mask import action_mask

        p = self.params
        tf_seed, env_seed = _children(run.seed, 2)
        count = p.ppo.num_envs
        envs = make_env_batch(family, run.task, count, max_steps)
        if not isinstance(envs.single_action_space, gymnasium.spaces.Discrete):
            envs.close()
            raise ValueError(
                f"{self.name}: needs discrete actions; family {family.name!r} has "
                f"{envs.single_action_space}"
            )
        try:
            env = ppo_parts.option_env(
                envs, options, p.gamma, p.termination_bump, env_seed.spawn(count)
            )
        except BaseException:
            envs.close()  # e.g. an option's interpreter that disagrees with its network
            raise
        try:
            seed = int(tf_seed.generate_state(1)[0] % (2**31 - 1))
            mask = action_mask(options, int(envs.single_action_space.n), family.observation_space)
            agent = ppo_parts.ppo_agent(env, p.ppo, seed, mask)
            fit = None
            if isinstance(options, PolicyStart):  # bc_ppo: clone the actor before acting
                *_, clone_seed, held_out_seed = _children(run.seed, 4)
                _, fit = ppo_parts.clone(
                    env, agent, options, clone_seed, held_out_seed if measure_fit else None
                )
        except BaseException:
            env.close()
            raise
        return env, agent, seed, fit

    def _run_one(
        self,
        family: Any,
        run: LearnerRun,
        options: Any,
        episodes: int,
        max_steps: int,
        frames: int | None,
    ) -> tuple[EpisodeLog, OptionUsage]:
        from opt_suite.learners import ppo_parts

        env, agent, seed, fit = self._agent_on(family, run, options, max_steps, measure_fit=True)
        try:
            ppo_parts.learn(
                env, agent, self.params.ppo.steps_per_iteration, episodes, frames=frames, seed=seed
            )
        finally:
            env.close()
        records = list(zip(env.episodes, env.usage, strict=True))
        if frames is None:
            kept = records[:episodes]
        else:  # the episodes that ended within the budget (see the module docstring)
            kept = [(e, u) for e, u in records if e.frames <= frames]
        done = [e for e, _ in kept]
        log = EpisodeLog(
            np.array([e.ret for e in done]),
            np.array([e.steps for e in done], np.int64),
            np.array([e.frames for e in done], np.int64),
            cloning_fit=fit,
        )
        choices = env.num_actions + env.num_options
        names = tuple(f"a{a}" for a in range(env.num_actions)) + tuple(options.names)
        usage = OptionUsage(
            names,
            env.num_actions,
            np.array([u[0] for _, u in kept], np.int64).reshape(-1, choices),
            np.array([u[1] for _, u in kept], np.int64).reshape(-1, choices),
            np.array([u[2] for _, u in kept], np.int64).reshape(-1, choices),
        )
        return log, usage


def _children(seed: np.random.SeedSequence, count: int) -> list[np.random.SeedSequence]:
    """What ``seed.spawn(count)`` gives a fresh ``seed``, without spawning.

    ``spawn`` counts its children on the object: a second run on the same ``LearnerRun`` would
    get other children, so its numbers would depend on what ran before it.
    """
    return [
        np.random.SeedSequence(
            seed.entropy, spawn_key=(*seed.spawn_key, i), pool_size=seed.pool_size
        )
        for i in range(count)
    ]
