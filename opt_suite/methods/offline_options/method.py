"""``offline_options``: the method contract around Algorithm 1 (no TensorFlow at import time).

Given the train tasks' demonstrations and a seed, :class:`OfflineOptions` learns options with
Algorithm 1. On index observations it returns them tabulated over *every* state (the exact model's
states, or the ``Discrete`` space's indices when the family has no model), so the test-time learner
acts by lookup; on vectors and images, as keras networks (``on_vectors.py``, ``on_frames.py``).
No exact model is needed: see :mod:`opt_suite.option_networks.inputs`. TensorFlow is imported
inside :meth:`OfflineOptions.discover` and :func:`initial_options` only: ``opt-suite list`` and
``validate`` import this module.
"""

from __future__ import annotations

import dataclasses
import io
import time
from typing import Any, ClassVar

import numpy as np

from opt_suite._tf import tensorflow
from opt_suite.families.base import TabularModel, TaskFamily
from opt_suite.families.capabilities import DISCRETE_ACTIONS, IMAGE_OBSERVATIONS
from opt_suite.methods.base import Discovery, DiscoveryContext, Method, discrete_actions
from opt_suite.methods.budget import DiscoveryBudget, DiscoverySteps
from opt_suite.methods.offline_options.params import Params
from opt_suite.option_networks.inputs import index_count, network_input
from opt_suite.options import TabularOptionSet

__all__ = ["OfflineOptions", "POLICY_FILE", "initial_options", "load_policy", "policy_file"]

#: The discovery cell's file holding π as Algorithm 1 trained it with the kept options, tabulated
#: over every state: the policy under which the reported Ĵ was reached (``opt-suite diagnose``).
POLICY_FILE = "policy.npz"


class OfflineOptions(Method):
    """Offline option learning from demonstrations (Garcia, Nota & Thomas 2020, Algorithm 1)."""

    name: ClassVar[str] = "offline_options"
    description: ClassVar[str] = (
        "Algorithm 1 of Garcia, Nota & Thomas (2020): options learned one at a time from "
        "demonstrations by maximising J-hat (Eq. 2)"
    )
    Params: ClassVar[type] = Params
    # No exact model: Algorithm 1 needs only demonstrations (see check_family for the inputs).
    requires: ClassVar[frozenset[str]] = frozenset({DISCRETE_ACTIONS})

    @classmethod
    def discovery_budget(cls, params: Any) -> DiscoveryBudget:
        """The demonstrations (Algorithm 1 learns from them alone), no env step."""
        return DiscoveryBudget(True, 0)

    @classmethod
    def option_count(cls, params: Any) -> int:
        """At most ``max_options`` options."""
        return int(params.max_options)

    @classmethod
    def discovery_steps(cls, params: Any) -> DiscoverySteps:
        """At most ``max_options`` rounds of ``max_epochs`` x ``steps_per_epoch`` Adam steps."""
        steps = int(params.max_options) * int(params.max_epochs) * int(params.steps_per_epoch)
        return DiscoverySteps(steps, "max_epochs")

    @classmethod
    def requirements(cls, params: Any) -> frozenset[str]:
        """Image observations for ``features: frames`` (conv options), else discrete actions."""
        if getattr(params, "features", None) == "frames":
            return frozenset({DISCRETE_ACTIONS, IMAGE_OBSERVATIONS})
        return cls.requires

    @classmethod
    def check_family(cls, params: Any, family: Any) -> list[tuple[str, str]]:
        """``features`` must read the family's observations (:func:`network_input`).

        Reported at ``params.features`` with the value that fits, rather than as a missing
        capability of the family: the family is fine, the option networks' input is not.
        """
        _, problem = network_input(getattr(params, "features", "coords"), family)
        return [] if problem is None else [("features", problem)]

    def discover(self, context: DiscoveryContext) -> Discovery:
        """Run Algorithm 1 on ``context.demonstrations``; options tabulated over all states.

        Curves (one point per epoch, every round in order): ``jhat``; ``prob``, the mean Pr(h);
        ``log_prob``, the mean log Pr(h); ``terminations``, the mean E[#terminations] / |h| (Theorem
        1, normalised by |h| as in Eq. 2); ``kl``, the mean g(h, O_O); ``option_round``.
        """
        tensorflow()  # quietly, before the modules below import it
        from opt_suite.methods.offline_options.algorithm import learn_options
        from opt_suite.methods.offline_options.demos import demo_batch

        params: Params = self.params
        # frames name their input; any other is the family's
        kind: str | None = "frames"
        problem: str | None = None
        if params.features != "frames":
            kind, problem = network_input(params.features, context.family)
        if problem is not None:
            raise ValueError(f"{self.name}: features: {problem}")
        if kind == "frames":  # image observations: conv options (on_frames.py)
            from opt_suite.methods.offline_options.on_frames import discover_on_frames

            return discover_on_frames(context, params, self.name)
        if kind == "vector":  # vector observations: MLP options on the vectors (on_vectors.py)
            from opt_suite.methods.offline_options.on_vectors import discover_on_vectors

            return discover_on_vectors(context, params, self.name)
        start = time.perf_counter()
        num_states, num_actions, features = table_input(context, kind, params.features, self.name)
        demos = demo_batch(context.demonstrations, num_states, num_actions)
        learned = learn_options(demos, features, num_actions, params, context.seed)
        options = TabularOptionSet(learned.mu, learned.beta)
        found = learned.discovery(
            options, len(context.demonstrations), start, demonstrated_states=len(demos.states)
        )
        if learned.policy is None:
            return found
        pi = policy_table(learned.policy, features)  # π's own input: policy_features
        return dataclasses.replace(found, files={POLICY_FILE: policy_file(pi)})


def policy_table(policy: dict[str, np.ndarray], features: Any) -> np.ndarray:
    """π(s, ·) over every state, float64 [S, A + m] (primitives first), from π's weights."""
    import tensorflow as tf

    from opt_suite.option_networks.networks import policy_probs

    states = np.arange(features.num_states, dtype=np.int32)
    coords = None if features.coords is None else tf.constant(features.coords)
    return policy_probs(policy, tf.constant(states), coords, tf.float64).numpy()


def policy_file(pi: np.ndarray) -> bytes:
    """The bytes of :data:`POLICY_FILE`: an ``.npz`` holding ``pi`` [S, A + m]."""
    buffer = io.BytesIO()
    np.savez_compressed(buffer, pi=np.asarray(pi, np.float64))
    return buffer.getvalue()


def load_policy(path: Any) -> np.ndarray:
    """π [S, A + m] from a :data:`POLICY_FILE`; raises ValueError on a file that is not one."""
    try:
        with np.load(path, allow_pickle=False) as data:
            pi = np.asarray(data["pi"], np.float64)
    except Exception as exc:  # OSError, BadZipFile, KeyError: not a policy file
        raise ValueError(f"{path}: not a readable policy file ({exc})") from None
    if pi.ndim != 2 or not np.all(np.isfinite(pi)):
        raise ValueError(f"{path}: expected a finite [S, A + m] table 'pi', got shape {pi.shape}")
    return pi


def initial_options(
    family: TaskFamily,
    model: TabularModel,
    params: Params,
    count: int,
    seed: np.random.SeedSequence,
) -> TabularOptionSet:
    """``count`` untrained options, initialised exactly as Algorithm 1 line 6 does, tabulated.

    :func:`opt_suite.option_networks.initial.initial_tabular_options` with these Params' features
    and hidden sizes: the i-th option here is bit-for-bit the i-th option Algorithm 1 would
    introduce with the same ``seed`` before any training (the paper's "options before training").

    Args:
      family: the family ``model`` belongs to (named in errors).
      model: any task's exact model of the family (gives the states and their features).
      params: the offline_options Params (hidden sizes and features matter).
      count: number of options, >= 0.
      seed: the seed a ``discover`` run would get.
    """
    tensorflow()  # quietly, before the module below imports it
    from opt_suite.option_networks.initial import initial_tabular_options

    return initial_tabular_options(family, model, params.features, params.hidden_sizes, count, seed)


def table_input(
    context: DiscoveryContext, kind: str | None, features: Any, name: str
) -> tuple[int, int, Any]:
    """(S, A, the networks' input over the S states) of a table of states.

    ``kind`` "model": the family's exact model gives the states (and a grid's cells, for
    ``coords``); otherwise the observations are a Discrete space's indices, without a model.
    The one place offline_options and its controls (bc_option) read a tabular family's states.
    """
    from opt_suite.option_networks.features import index_features, state_features

    if kind == "model":
        model = context.tabular_models(name)[0]
        return model.num_states, model.num_actions, state_features(model, features)
    num_states = index_count(context.family)
    return (
        num_states,
        discrete_actions(context.family, name),
        index_features(num_states, features),
    )
