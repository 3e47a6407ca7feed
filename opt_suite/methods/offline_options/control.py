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
abstraction nor the options Ĵ chose. Index observations (with an exact model or without one)
get the option tabulated over every state (β exactly 0 or 1); vectors an MLP and images
(``features: frames``) a conv network, each with its β head replaced by a constant logit ∓100
(σ(100) = 1 exactly in float32; σ(−100) < 1e-43). Like offline_options, it needs no model.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, ClassVar, Literal

import numpy as np

from opt_suite._tf import tensorflow
from opt_suite.methods.base import Discovery, DiscoveryContext, Method, discrete_actions
from opt_suite.methods.offline_options.method import OfflineOptions, table_input
from opt_suite.methods.offline_options.params import Params
from opt_suite.option_networks.inputs import network_input
from opt_suite.params import param

__all__ = ["BCOption", "BCOptionParams", "BETA_LOGIT"]

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


class BCOption(Method):
    """One option behaviour-cloned from the demonstrations, never or always terminating."""

    name: ClassVar[str] = "bc_option"
    description: ClassVar[str] = (
        "control: one option behaviour-cloned on offline_options' demonstrations with its "
        "network, terminating never or after every step"
    )
    Params: ClassVar[type] = BCOptionParams
    uses_demonstrations: ClassVar[bool] = True
    controls: ClassVar[str] = "offline_options"
    requires: ClassVar[frozenset[str]] = OfflineOptions.requires

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

    def discover(self, context: DiscoveryContext) -> Discovery:
        """Clone one option on ``context.demonstrations``; β fixed by ``termination``.

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
        from opt_suite.option_networks.features import (
            StateFeatures,
        )
        from opt_suite.option_networks.initial import (
            frame_option_set,
            new_option,
            tabulate,
            task_actions,
        )
        from opt_suite.options import TabularOptionSet

        start = time.perf_counter()
        settings: Params = self.params.offline_options
        never = self.params.termination == "never"
        name = f"bc-{self.params.termination.replace('_', '-')}"
        kind: str | None = "frames"  # frames name their input; any other is the family's
        if settings.features != "frames":
            kind, problem = network_input(settings.features, context.family)
            if problem is not None:
                raise ValueError(f"{self.name}: offline_options.features: {problem}")
        if kind == "frames":
            if not context.train_tasks:
                raise ValueError(f"{self.name}: needs at least one train task, got none")
            actions = task_actions(context.family, context.train_tasks[0], self.name)
            demos, frames = frame_demo_batch(context.demonstrations, actions)
            features: Any = FrameFeatures.of(frames)
            coords: np.ndarray | None = frames
        elif kind == "vector":  # every demonstrated vector is its own state (on_vectors.py)
            actions = discrete_actions(context.family, self.name)
            demos, vectors = vector_demo_batch(context.demonstrations, actions)
            features = StateFeatures(len(vectors), use_index=False, coords=vectors)
            coords = vectors
        else:
            num_states, actions, features = table_input(context, kind, settings.features, self.name)
            demos = demo_batch(context.demonstrations, num_states, actions)
            coords = None if features.coords is None else features.coords[demos.states]
        # Algorithm 1's first option o' (line 6), from this run's seed.
        initial = new_option(features, actions, settings.hidden_sizes, context.seed, 0)
        weights, curve = clone_option(initial, demos, coords, settings)
        if kind in ("frames", "vector"):  # a network: β's head made a constant logit
            weights["beta_w"] = np.zeros_like(weights["beta_w"])
            weights["beta_b"] = np.full_like(
                weights["beta_b"], -BETA_LOGIT if never else BETA_LOGIT
            )
            if kind == "frames":
                options: Any = frame_option_set([weights], features.frame_shape, actions, name)
            else:
                assert coords is not None  # the vector branch above set it to the vectors
                options = vector_option_set([weights], actions, int(coords.shape[1]), name)
        else:
            mu, _ = tabulate(weights, features, np.arange(features.num_states, dtype=np.int32))
            beta = np.zeros((1, len(mu))) if never else np.ones((1, len(mu)))
            options = TabularOptionSet(mu[None], beta, (f"{name}-0",))
        info = {
            "demonstrations": len(context.demonstrations),
            "demonstrated_steps": int(demos.lengths.sum()),
            "likelihood_initial": float(curve[0]),
            "likelihood": float(curve[-1]),
            "wall_time_s": round(time.perf_counter() - start, 3),
        }
        return Discovery(options=options, curves={"likelihood": curve}, info=info)
