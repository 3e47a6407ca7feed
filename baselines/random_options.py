"""Random options: the paper's "options before training" (Garcia, Nota & Thomas 2020, Sec. 5).

``count`` options whose networks are initialised exactly as Algorithm 1 initialises a newly
introduced option (line 6), tabulated over every state and never trained. The initialisation is the
one ``offline_options`` draws its options from (:mod:`opt_suite.option_networks.initial`, below
both methods), so the i-th option here is the i-th option offline_options would start from with the
same seed: the comparison isolates what training adds.

The ``offline_options`` section of the params holds the settings of the offline_options entry it
stands in for: specs share one YAML anchor between the two entries, so the section accepts every key
of offline_options' Params, with the same defaults and bounds (and so the same spec hashes). Only
the network shape and state input (``hidden_sizes``, ``features``) are used here. The section is
this baseline's own dataclass, so that a baseline does not import another method's internals; a
test keeps its keys, defaults and bounds equal to offline_options'.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, Literal

from opt_suite._tf import tensorflow
from opt_suite.families.capabilities import DISCRETE_ACTIONS, IMAGE_OBSERVATIONS
from opt_suite.methods.base import (
    Discovery,
    DiscoveryContext,
    Method,
    discrete_actions,
    observation_shape,
)
from opt_suite.options import OptionSet
from opt_suite.params import param

__all__ = ["OfflineOptionsSettings", "RandomOptions", "RandomOptionsParams"]


def _unused(default: Any, name: str, **bounds: Any) -> Any:
    """A key of offline_options' Params that this baseline accepts (one anchor) but ignores."""
    return param(
        default,
        doc=f"offline_options' {name}; unused here (accepted so that one YAML anchor serves both "
        "entries)",
        **bounds,
    )


@dataclasses.dataclass(frozen=True)
class OfflineOptionsSettings:
    """The offline_options settings whose initial option networks are drawn.

    ``hidden_sizes`` and ``features`` are used; the other keys are accepted, with offline_options'
    defaults and bounds, and ignored.
    """

    lambda1: float = _unused(0.0, "lambda1", ge=0)
    lambda2: float = _unused(100.0, "lambda2", ge=0)
    lambda2_auto: bool = _unused(False, "lambda2_auto")
    delta: float = _unused(0.1, "delta", ge=0)
    epochs: int = _unused(50, "epochs", ge=1, le=100_000)
    max_epochs: int = _unused(200, "max_epochs", ge=1, le=100_000)
    plateau_window: int = _unused(10, "plateau_window", ge=1)
    plateau_tolerance: float = _unused(0.01, "plateau_tolerance", ge=0)
    warm_start: bool = _unused(True, "warm_start")
    steps_per_epoch: int = _unused(10, "steps_per_epoch", ge=1, le=100_000)
    max_options: int = _unused(4, "max_options", ge=1, le=64)
    learning_rate: float = _unused(0.01, "learning_rate", gt=0)
    hidden_sizes: tuple[int, ...] = param(
        (32, 32),
        doc="hidden layers of every option network (offline_options' hidden_sizes)",
        ge=1,
        le=4096,
    )
    likelihood: Literal["prob", "log_prob_per_step"] = _unused("log_prob_per_step", "likelihood")
    policy_features: Literal["options", "onehot"] = _unused(
        "options", "policy_features", added_later=True
    )
    features: Literal["onehot", "coords", "both", "frames"] = param(
        "coords",
        doc="input of the option networks (offline_options' features): coords (default) fits "
        "every family (on images: its initial convolutional options, as frames)",
    )
    keep_options: int | None = _unused(None, "keep_options", ge=1, le=64, added_later=True)
    termination_term: bool = _unused(True, "termination_term", added_later=True)
    kl_term: bool = _unused(True, "kl_term", added_later=True)

    def check(self) -> list[tuple[str, str]]:
        """As offline_options' Params: the same values are rejected in both entries."""
        problems: list[tuple[str, str]] = []
        if self.max_epochs < self.epochs:
            problems.append(
                ("max_epochs", f"must be >= epochs ({self.epochs}), got {self.max_epochs}")
            )
        if not self.hidden_sizes:
            problems.append(("hidden_sizes", "needs at least one hidden layer (paper: (32, 32))"))
        return problems


@dataclasses.dataclass(frozen=True)
class RandomOptionsParams:
    """How many untrained options, and the offline_options networks they are drawn from."""

    count: int = param(4, doc="number of options (offline_options' max_options: 4)", ge=1, le=1024)
    offline_options: OfflineOptionsSettings = param(
        OfflineOptionsSettings(),
        doc="the offline_options Params whose initialisation is copied (hidden_sizes and "
        "features matter); keep equal to the spec's offline_options entry",
    )
    count_of: str | None = param(
        None,
        doc="a method entry (by name, earlier in methods): as many options as it discovered on "
        "the same seed instead of count (K-matched untrained options; count then only bounds "
        "the work estimate)",
        added_later=True,
    )


class RandomOptions(Method):
    """Untrained options initialised as offline_options initialises its options."""

    name: ClassVar[str] = "random_options"
    description: ClassVar[str] = (
        "options before training: offline_options' initial networks, untrained"
    )
    Params: ClassVar[type] = RandomOptionsParams
    requires: ClassVar[frozenset[str]] = frozenset({DISCRETE_ACTIONS})

    @classmethod
    def option_count(cls, params: Any) -> int:
        """``count`` options (with ``count_of``: the estimate's bound)."""
        return int(params.count)

    @classmethod
    def count_entry(cls, params: Any) -> tuple[str, str] | None:
        """``count_of``: the entry whose option count on the same seed this one takes."""
        return None if params.count_of is None else ("count_of", params.count_of)

    @classmethod
    def requirements(cls, params: Any) -> frozenset[str]:
        """Image observations with ``offline_options.features: frames``, else discrete actions."""
        if params.offline_options.features == "frames":
            return frozenset({DISCRETE_ACTIONS, IMAGE_OBSERVATIONS})
        return cls.requires

    @classmethod
    def check_family(cls, params: Any, family: Any) -> list[tuple[str, str]]:
        """``offline_options.features`` must read the family's observations, as offline_options'.

        Except on observations no offline_options network reads at all: generic dense networks
        stand in there (see :meth:`discover`).
        """
        from opt_suite.option_networks.inputs import network_input, readable

        _, problem = network_input(params.offline_options.features, family)
        if problem is None or not readable(family):
            return []
        return [("offline_options.features", problem)]

    def discover(self, context: DiscoveryContext) -> Discovery:
        """``count`` untrained options with this run's seed (TF loads here).

        Whatever the observations, they are the options offline_options would start from with
        the same seed (:mod:`opt_suite.option_networks.inputs` says which networks): tables over
        a model's states or a ``Discrete`` space's indices, keras MLPs on vectors, conv networks
        on images. Only on observations no offline_options network reads (a ``Box`` of rank 4+)
        are they generic dense keras networks (:func:`opt_suite.options.network.option_network`,
        ``offline_options.hidden_sizes`` wide), one seed per option.
        """
        tensorflow()  # quietly, before the module below imports it
        from opt_suite.option_networks.features import index_features
        from opt_suite.option_networks.initial import (
            initial_frame_options,
            initial_options_over,
            initial_tabular_options,
            initial_vector_options,
        )
        from opt_suite.option_networks.inputs import index_count, network_input, readable

        nested = self.params.offline_options
        count, seed = self._count(context), context.seed
        kind: str | None = "frames"
        problem: str | None = None
        if nested.features != "frames":
            kind, problem = network_input(nested.features, context.family)
        if problem is not None and readable(context.family):
            raise ValueError(f"{self.name}: offline_options.features: {problem}")
        if kind == "frames":  # image observations: conv options
            if not context.train_tasks:
                raise ValueError(f"{self.name}: needs at least one train task, got none")
            return Discovery(
                initial_frame_options(context.family, context.train_tasks[0], count, seed)
            )
        if kind == "vector":  # offline_options' initial MLP options on the vectors
            actions = discrete_actions(context.family, self.name)
            (dim,) = observation_shape(context.family, self.name)
            return Discovery(initial_vector_options(dim, actions, nested.hidden_sizes, count, seed))
        if kind == "index":  # over the Discrete space's indices, as offline_options tabulates
            actions = discrete_actions(context.family, self.name)
            state_input = index_features(index_count(context.family), nested.features)
            options = initial_options_over(state_input, actions, nested.hidden_sizes, count, seed)
        elif kind == "model":
            model = context.tabular_models(self.name)[0]
            options = initial_tabular_options(
                context.family, model, nested.features, nested.hidden_sizes, count, seed
            )
        else:  # observations no offline_options network reads: generic dense keras networks
            return Discovery(self._network_options(context, count))
        names = tuple(f"random-{i}" for i in range(len(options)))
        return Discovery(type(options)(options.mu, options.beta, names))

    def _count(self, context: DiscoveryContext) -> int:
        """``count``, or the option count of the ``count_of`` entry's discovery on this seed."""
        if self.params.count_of is None:
            return int(self.params.count)
        matched = context.matched_count
        if matched is None or matched < 1:
            raise ValueError(
                f"{self.name}: count_of {self.params.count_of!r}: expected that entry's option "
                f"count on this seed (at least 1), got {matched}"
            )
        return matched

    def _network_options(self, context: DiscoveryContext, count: int) -> OptionSet:
        from opt_suite.options.network import NetworkOptionSet, option_network

        family = context.family
        num_actions = discrete_actions(family, self.name)
        shape = observation_shape(family, self.name)
        seeds = context.seed.generate_state(count)
        hidden = self.params.offline_options.hidden_sizes
        networks = [
            option_network(shape, num_actions, int(s), hidden_sizes=hidden, name=f"random-{i}")
            for i, s in enumerate(seeds)
        ]
        names = tuple(f"random-{i}" for i in range(len(networks)))
        return NetworkOptionSet(networks, num_actions, shape, names)
