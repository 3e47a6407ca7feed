"""``bc_option``: one behaviour-cloned option, the imitation control of ``offline_options``.

One option trained on exactly the demonstrations ``offline_options`` learns from, with its network
(or table over every state) and its feature handling — the ``offline_options`` section holds that
entry's params, so one YAML anchor serves both — but by behaviour cloning
(:mod:`.cloning`) instead of Ĵ, and with a fixed termination:

- ``termination: never`` — β ≡ 0: once called, the option runs until the learner cuts it (the
  termination bump of the SMDP learners, ``max_steps``); what Algorithm 1 converged to on 4 of 5
  MinAtar seeds (issue 25: one option, β ≈ 0);
- ``termination: every_step`` — β ≡ 1: the policy over options may switch at every step, so the
  option is one more action that imitates the demonstrators.

If the learned options beat neither, their gain over primitives is imitation, not temporal
abstraction nor the options Ĵ chose.

Issue 35's fairness settings (each ``added_later``: without them a spec keeps its hash and the
option its bytes): ``termination_probability`` (a constant β between the two, the cloned option's
length swept); ``cloned_pairs`` (the cloning budget in demonstrated pairs, e.g. ``bc_ppo``'s
steps × batch_size), with ``batch_size`` its minibatches of pairs (so ``cloned_pairs: 32000,
batch_size: 64`` and ``offline_options.learning_rate: 0.001`` are bc_ppo's 500 Adam steps of 64
pairs at 1e-3); ``initial_weights_of`` (the named offline_options entry's discovery seed, so
the option starts from the weights Algorithm 1 introduces first); and the fit the cell reports,
in sample and, with ``held_out``, of a second clone on demonstrations it did not see.

Index observations (with an exact model or without one)
get the option tabulated over every state (β exactly 0 or 1); vectors an MLP and images
(``features: frames``) a conv network, each with its β head replaced by a constant logit ∓100
(σ(100) = 1 exactly in float32; σ(−100) < 1e-43). Like offline_options, it needs no model.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any, ClassVar, Literal

import numpy as np

from opt_suite._tf import tensorflow
from opt_suite.methods.base import (
    FIT_ACCURACY,
    FIT_LOG_LIKELIHOOD,
    HELD_OUT_ACCURACY,
    HELD_OUT_LOG_LIKELIHOOD,
    Discovery,
    DiscoveryContext,
    Method,
    discrete_actions,
)
from opt_suite.methods.budget import DiscoveryBudget
from opt_suite.methods.offline_options.method import OfflineOptions, table_input
from opt_suite.methods.offline_options.params import Params
from opt_suite.option_networks.inputs import network_input
from opt_suite.params import param

__all__ = ["BCOption", "BCOptionParams", "BETA_LOGIT", "beta_logit", "held_out_indices"]

#: The constant β logit of a cloned conv option: σ(±100) is 1 (float32) or below 1e-43.
BETA_LOGIT = 100.0


@dataclasses.dataclass(frozen=True)
class BCOptionParams:
    """How the cloned option terminates, and the offline_options entry whose network it shares."""

    termination: Literal["never", "every_step"] = param(
        "never",
        doc="never: beta = 0, the option runs until the learner cuts it (the default: what "
        "Algorithm 1 converged to on 4 of 5 MinAtar seeds, issue 25); every_step: beta = 1, "
        "the policy over options chooses again after every step",
    )
    offline_options: Params = param(
        Params(),
        doc="the offline_options params whose option network, features, learning_rate, "
        "epochs and steps_per_epoch the control uses (one anchor with the offline_options "
        "entry); it trains epochs x steps_per_epoch full-batch Adam steps",
    )
    termination_probability: float | None = param(
        None,
        doc="a constant beta in [0, 1] instead of termination's 0 or 1 (0: never, 1: every "
        "step; between them a mean call of 1/beta steps): the cloned option's length, swept "
        "(issue 35's factorial); unset: termination decides",
        ge=0,
        le=1,
        added_later=True,
    )
    cloned_pairs: int | None = param(
        None,
        doc="the cloning budget in demonstrated (s, a) pairs: ceil(cloned_pairs / demonstrated "
        "steps) full-batch Adam steps (with batch_size: ceil(cloned_pairs / batch_size) "
        "minibatch steps) instead of epochs x steps_per_epoch; bc_ppo's budget is its "
        "steps x batch_size (32,000 at its defaults), so setting that here budget-matches them",
        ge=1,
        le=10**9,
        added_later=True,
    )
    batch_size: int | None = param(
        None,
        doc="pairs per Adam step, drawn without replacement from the demonstrated pairs by a "
        "stream of the run's seed (bc_ppo's minibatches; with cloned_pairs the steps are "
        "ceil(cloned_pairs / batch_size), so cloned_pairs 32000 and batch_size 64 are bc_ppo's "
        "500 steps); unset: full-batch steps",
        ge=1,
        le=10**9,
        added_later=True,
    )
    held_out: float = param(
        0.25,
        doc="share of the demonstrations (whole trajectories, drawn from the run's seed) held out "
        "of a second clone to score its fit on demonstrations it did not see; the option itself "
        "is cloned on all of them. 0: no held-out fit",
        ge=0,
        lt=1,
        added_later=True,
    )
    initial_weights_of: str | None = param(
        None,
        doc="the offline_options entry (by name) whose first option's initial weights the "
        "cloned option starts from: the discovery seed of that entry instead of this one's "
        "(issue 35: the control differs from the method's first option in its training alone)",
        added_later=True,
    )


class BCOption(Method):
    """One option behaviour-cloned from the demonstrations, never or always terminating."""

    name: ClassVar[str] = "bc_option"
    description: ClassVar[str] = (
        "control: one option behaviour-cloned on offline_options' demonstrations with its "
        "network, terminating never or after every step"
    )
    Params: ClassVar[type] = BCOptionParams
    controls: ClassVar[str] = "offline_options"
    requires: ClassVar[frozenset[str]] = OfflineOptions.requires

    @classmethod
    def discovery_budget(cls, params: Any) -> DiscoveryBudget:
        """The demonstrations it clones, no env step."""
        return DiscoveryBudget(True, 0)

    @classmethod
    def option_count(cls, params: Any) -> int:
        """One option."""
        return 1

    @classmethod
    def requirements(cls, params: Any) -> frozenset[str]:
        """offline_options' with the same ``features``."""
        return OfflineOptions.requirements(params.offline_options)

    @classmethod
    def check_family(cls, params: Any, family: Any) -> list[tuple[str, str]]:
        """offline_options' check of its ``features``, at ``offline_options.<key>``."""
        found = OfflineOptions.check_family(params.offline_options, family)
        return [(f"offline_options.{key}" if key else "offline_options", m) for key, m in found]

    @classmethod
    def seed_entry(cls, params: Any) -> tuple[str, str] | None:
        """``initial_weights_of``: the offline_options entry whose first option it starts from."""
        name = params.initial_weights_of
        return None if name is None else ("initial_weights_of", name)

    @classmethod
    def seed_entry_problems(cls, params: Any, entry_params: Any) -> list[tuple[str, str]]:
        """Its network must be the entry's (features, hidden_sizes) for the weights to match."""
        problems = []
        for key in ("features", "hidden_sizes"):
            mine, theirs = getattr(params.offline_options, key), getattr(entry_params, key)
            if mine != theirs:
                problems.append(
                    (
                        f"offline_options.{key}",
                        f"initial_weights_of {params.initial_weights_of!r} needs the same network "
                        f"(expected {key} {theirs!r} as that entry, got {mine!r})",
                    )
                )
        return problems

    def discover(self, context: DiscoveryContext) -> Discovery:
        """Clone one option on ``context.demonstrations``; a constant β (see the params).

        The option reads the family's observations as offline_options' would
        (:func:`network_input`): a table over every state (an exact model's, or a ``Discrete``
        space's indices without one), an MLP on vectors, or a conv network on frames.
        """
        tensorflow()  # quietly, before the modules below import it
        from opt_suite.methods.offline_options.cloning import clone_option
        from opt_suite.methods.offline_options.demos import (
            demo_batch,
            frame_demo_batch,
            vector_demo_batch,
        )
        from opt_suite.methods.offline_options.on_vectors import vector_option_set
        from opt_suite.option_networks.conv import FrameFeatures
        from opt_suite.option_networks.features import StateFeatures
        from opt_suite.option_networks.initial import (
            frame_option_set,
            new_option,
            tabulate,
            task_actions,
        )
        from opt_suite.options import TabularOptionSet

        start = time.perf_counter()
        settings: Params = self.params.offline_options
        beta = self.beta()
        name = self.option_name()
        kind: str | None = "frames"  # frames name their input; any other is the family's
        if settings.features != "frames":
            kind, problem = network_input(settings.features, context.family)
            if problem is not None:
                raise ValueError(f"{self.name}: offline_options.features: {problem}")
        if kind == "frames":
            if not context.train_tasks:
                raise ValueError(f"{self.name}: needs at least one train task, got none")
            actions = task_actions(context.family, context.train_tasks[0], self.name)

            def batch(trajectories):
                return frame_demo_batch(trajectories, actions)

            demos, coords = batch(context.demonstrations)
            features: Any = FrameFeatures.of(coords)
        elif kind == "vector":  # every demonstrated vector is its own state (on_vectors.py)
            actions = discrete_actions(context.family, self.name)

            def batch(trajectories):
                return vector_demo_batch(trajectories, actions)

            demos, coords = batch(context.demonstrations)
            features = StateFeatures(len(coords), use_index=False, coords=coords)
        else:
            num_states, actions, features = table_input(context, kind, settings.features, self.name)

            def batch(trajectories):
                demos = demo_batch(trajectories, num_states, actions)
                coords = None if features.coords is None else features.coords[demos.states]
                return demos, coords

            demos, coords = batch(context.demonstrations)
        # Algorithm 1's first option o' (line 6), from this run's seed.
        initial = new_option(features, actions, settings.hidden_sizes, context.seed, 0)
        steps = self.cloning_steps(int(demos.lengths.sum()))
        minibatches = self.minibatches(context.seed, _MINIBATCH_STREAM)
        weights, curve = clone_option(initial, demos, coords, settings, steps, minibatches)
        fit = self.fit_info(weights, demos, coords)
        fit.update(self.held_out_fit(context, initial, batch, steps))
        if kind in ("frames", "vector"):  # a network: β's head made a constant logit
            weights["beta_w"] = np.zeros_like(weights["beta_w"])
            weights["beta_b"] = np.full_like(weights["beta_b"], beta_logit(beta))
            if kind == "frames":
                options: Any = frame_option_set([weights], features.frame_shape, actions, name)
            else:
                assert coords is not None  # the vector branch above set it to the vectors
                options = vector_option_set([weights], actions, int(coords.shape[1]), name)
        else:
            mu, _ = tabulate(weights, features, np.arange(features.num_states, dtype=np.int32))
            options = TabularOptionSet(mu[None], np.full((1, len(mu)), beta), (f"{name}-0",))
        info = {
            "demonstrations": len(context.demonstrations),
            "demonstrated_steps": int(demos.lengths.sum()),
            "likelihood_initial": float(curve[0]),
            "likelihood": float(curve[-1]),
            **fit,
            "wall_time_s": round(time.perf_counter() - start, 3),
        }
        return Discovery(options=options, curves={"likelihood": curve}, info=info)

    def beta(self) -> float:
        """The cloned option's constant termination probability."""
        if self.params.termination_probability is not None:
            return float(self.params.termination_probability)
        return 0.0 if self.params.termination == "never" else 1.0

    def option_name(self) -> str:
        """bc-never / bc-every-step, or bc-beta-P for a swept termination probability."""
        if self.params.termination_probability is not None:
            return f"bc-beta-{self.params.termination_probability:g}"
        return f"bc-{self.params.termination.replace('_', '-')}"

    def cloning_steps(self, demonstrated_steps: int) -> int | None:
        """Adam steps for ``cloned_pairs`` (None: epochs x steps_per_epoch).

        Full-batch steps, or of ``batch_size`` pairs (all of them when there are fewer).
        """
        pairs = self.params.cloned_pairs
        if pairs is None:
            return None
        per_step = max(demonstrated_steps, 1)
        if self.params.batch_size is not None:
            per_step = min(per_step, self.params.batch_size)
        return max(1, math.ceil(pairs / per_step))

    def minibatches(
        self, seed: np.random.SeedSequence, stream: int
    ) -> tuple[int, np.random.Generator] | None:
        """(batch_size, its draws from child ``stream`` of the run's seed); None: full batch."""
        if self.params.batch_size is None:
            return None
        return self.params.batch_size, np.random.default_rng(_child(seed, stream))

    @staticmethod
    def fit_info(weights: Any, demos: Any, coords: Any) -> dict[str, float]:
        """The cloned μ's fit on the demonstrations it was cloned on (in-sample)."""
        from opt_suite.methods.offline_options.cloning import demonstration_fit

        fit = demonstration_fit(weights, demos, coords)
        return {FIT_ACCURACY: fit.accuracy, FIT_LOG_LIKELIHOOD: fit.log_likelihood}

    def held_out_fit(
        self, context: DiscoveryContext, initial: Any, batch: Any, steps: int | None
    ) -> dict[str, Any]:
        """A second clone on a seeded share of the demonstrations, scored on the rest.

        The option itself is cloned on every demonstration (its numbers do not depend on the
        split); this clone, from the same initial weights and schedule, measures how well
        cloning generalises to demonstrations it did not see.
        """
        from opt_suite.methods.offline_options.cloning import clone_option, demonstration_fit

        count = len(context.demonstrations)
        held = held_out_indices(count, self.params.held_out, context.seed)
        if not held:
            why = "held_out: 0" if self.params.held_out == 0 else f"{count} demonstration(s)"
            return {"held_out_note": f"no held-out fit ({why})"}
        kept = [t for i, t in enumerate(context.demonstrations) if i not in held]
        scored = [context.demonstrations[i] for i in sorted(held)]
        demos, coords = batch(kept)
        minibatches = self.minibatches(context.seed, _HELD_OUT_MINIBATCH_STREAM)
        weights, _ = clone_option(
            initial, demos, coords, self.params.offline_options, steps, minibatches
        )
        test_demos, test_coords = batch(scored)
        fit = demonstration_fit(weights, test_demos, test_coords)
        return {
            HELD_OUT_ACCURACY: fit.accuracy,
            HELD_OUT_LOG_LIKELIHOOD: fit.log_likelihood,
            "held_out_demonstrations": len(scored),
        }


#: The child of the run's seed that draws the held-out demonstrations (the option streams of
#: ``option_networks.initial`` are 0 and 1).
_HELD_OUT_STREAM = 7
#: The children that draw the minibatches of the option's clone and of the held-out clone.
_MINIBATCH_STREAM, _HELD_OUT_MINIBATCH_STREAM = 8, 9


def _child(seed: np.random.SeedSequence, stream: int) -> np.random.SeedSequence:
    """Child ``stream`` of ``seed``, whatever ``seed`` spawned before (no ``spawn`` counter)."""
    return np.random.SeedSequence(seed.entropy, spawn_key=(*seed.spawn_key, stream))


def held_out_indices(count: int, share: float, seed: np.random.SeedSequence) -> frozenset[int]:
    """round(share x count) demonstrations (at least 1, at most count - 1) drawn from ``seed``.

    Empty when ``share`` is 0 or there are fewer than 2 demonstrations (nothing to hold out
    that leaves one to clone on).
    """
    if share == 0 or count < 2:
        return frozenset()
    size = min(count - 1, max(1, round(share * count)))
    rng = np.random.default_rng(_child(seed, _HELD_OUT_STREAM))
    return frozenset(int(i) for i in rng.choice(count, size=size, replace=False))


def beta_logit(beta: float) -> float:
    """The constant β logit of a cloned network option: ∓BETA_LOGIT at 0 and 1, logit(β) between.

    σ(±100) is 1 (float32) or below 1e-43, so 0 and 1 are as exact as in a table.
    """
    if beta <= 0:
        return -BETA_LOGIT
    if beta >= 1:
        return BETA_LOGIT
    return float(np.clip(math.log(beta) - math.log1p(-beta), -BETA_LOGIT, BETA_LOGIT))
