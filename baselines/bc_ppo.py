"""``bc_ppo``: the jump-start control — PPO whose policy starts from behaviour cloning.

The standard way to use demonstrations without options (e.g. the pre-training phase of DQfD,
Hester et al. 2018, or of AlphaStar's supervised start): clone the demonstrators into the agent's
policy, then learn by RL from there. Here the test-time ``tf_agents`` agent acts over the
primitives alone (no options, as with ``primitives``) and its actor is first trained by
cross-entropy on every demonstrated (observation, action) pair of the train tasks — the same
demonstrations ``offline_options`` learns its options from. If the learned options do not beat
this, their jump start is the demonstrators' policy, not the options.

The method only packs the pairs (:class:`~opt_suite.options.policy_start.PolicyStart`): the
learner owns its network, so the learner clones it (``Learner.clones_policy``). A tabular
Q-learner has no policy to initialise; ``validate`` refuses the pair at the method's key.

Defaults: 500 Adam steps on minibatches of 64 at step size 1e-3 (Kingma & Ba 2015's default) — the
suite's choice for a short supervised start, not tuned; set them per spec. A schedule in steps, not
epochs, so that a few short demonstrations still get a real start. The cloning runs in each
evaluation cell (the learner owns the network): 500 small-batch steps per test task and seed
(measured: 5.5-8.7 s with the agent's build, a 16-unit actor on PixelGrid's 20x20x2 frames).

Its fit (issue 35): the evaluation cell scores the cloned actor on the pairs it was cloned on
(accuracy of the most probable action, mean log-likelihood) and, with ``held_out`` > 0, a second
clone in the same cell — from the same initial weights, on the demonstrations outside a held-out
share drawn as ``bc_option`` draws it (``held_out_indices``, from the run's seed) — on the pairs
it did not see. The second clone doubles the cell's cloning time; the actor then goes back to the
first clone's weights, so the learning run's numbers are those without the measurement.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from opt_suite.families.capabilities import DISCRETE_ACTIONS
from opt_suite.methods.base import Discovery, DiscoveryContext, Method, discrete_actions
from opt_suite.methods.budget import DiscoveryBudget
from opt_suite.methods.offline_options.control import held_out_indices
from opt_suite.options.policy_start import PolicyStart
from opt_suite.params import param

__all__ = ["BCPPO", "BCPPOParams"]


@dataclasses.dataclass(frozen=True)
class BCPPOParams:
    """The behaviour-cloning schedule of the agent's actor."""

    steps: int = param(
        500,
        doc="Adam steps of cloning (suite's choice, not tuned: 500 x 64 pairs = 16 passes over "
        "2,000 demonstrated steps; a number of steps, so that a few demonstrations get as many)",
        ge=1,
        le=1_000_000,
    )
    batch_size: int = param(64, doc="pairs per Adam step (suite's choice)", ge=1, le=1_000_000)
    learning_rate: float = param(
        1e-3, doc="Adam's step size (Kingma & Ba 2015's default)", gt=0, le=1
    )
    held_out: float = param(
        0.25,
        doc="share of the demonstrations (whole trajectories, drawn from the run's seed as "
        "bc_option draws them) held out of a second clone in each evaluation cell, to score the "
        "fit on demonstrations it did not see; the policy itself is cloned on all of them. "
        "0: no held-out fit (and no second clone)",
        ge=0,
        lt=1,
        added_later=True,
    )


class BCPPO(Method):
    """No options; the learner's policy starts from behaviour cloning on the demonstrations."""

    name: ClassVar[str] = "bc_ppo"
    description: ClassVar[str] = (
        "control: no options, the tf_agents PPO policy starts from behaviour cloning on the "
        "demonstrations (the standard jump start); needs a learner with a policy to initialise"
    )
    Params: ClassVar[type] = BCPPOParams
    controls: ClassVar[str] = "offline_options"
    starts_policy: ClassVar[bool] = True
    requires: ClassVar[frozenset[str]] = frozenset({DISCRETE_ACTIONS})

    @classmethod
    def discovery_budget(cls, params: Any) -> DiscoveryBudget:
        """The demonstrations it clones, no env step."""
        return DiscoveryBudget(True, 0)

    @classmethod
    def option_count(cls, params: Any) -> int:
        """No options."""
        return 0

    def discover(self, context: DiscoveryContext) -> Discovery:
        """Every demonstrated (s_t, a_t) with the cloning schedule, for the learner."""
        p = self.params
        held = held_out_indices(len(context.demonstrations), p.held_out, context.seed)
        start = PolicyStart.of(
            context.demonstrations,
            discrete_actions(context.family, self.name),
            p.steps,
            p.batch_size,
            p.learning_rate,
            held,
        )
        info = {
            "demonstrations": len(context.demonstrations),
            "demonstrated_steps": len(start.actions),
            "held_out_demonstrations": len(held),
        }
        return Discovery(options=start, info=info)
