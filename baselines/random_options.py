"""Random options: the paper's "options before training" (Garcia, Nota & Thomas 2020, Sec. 5).

``count`` options whose networks are initialised exactly as Algorithm 1 initialises a newly
introduced option (line 6), tabulated over every state and never trained. The initialisation is the
one ``offline_options`` draws its options from (:mod:`opt_suite.option_networks.initial`, below
both methods), so the i-th option here is the i-th option offline_options would start from with the
same seed: the comparison isolates what training adds.

Params nest the offline_options Params rather than copying their fields: the network shape and state
features (``hidden_sizes``, ``features``) can then never drift from the method they stand in for.
Keep them equal to the ``offline_options`` entry of the same spec.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from opt_suite._tf import tensorflow
from opt_suite.families.base import TabularModelMixin
from opt_suite.families.capabilities import DISCRETE_ACTIONS, IMAGE_OBSERVATIONS
from opt_suite.methods.base import (
    Discovery,
    DiscoveryContext,
    Method,
    discrete_actions,
    observation_shape,
)
from opt_suite.methods.offline_options.params import Params as OfflineOptionsParams
from opt_suite.options import OptionSet
from opt_suite.params import param

__all__ = ["RandomOptions", "RandomOptionsParams"]


@dataclasses.dataclass(frozen=True)
class RandomOptionsParams:
    """How many untrained options, and the offline_options networks they are drawn from."""

    count: int = param(4, doc="number of options (offline_options' max_options: 4)", ge=1, le=1024)
    offline_options: OfflineOptionsParams = param(
        OfflineOptionsParams(),
        doc="the offline_options Params whose initialisation is copied (hidden_sizes and "
        "features matter); keep equal to the spec's offline_options entry",
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
    def requirements(cls, params: Any) -> frozenset[str]:
        """Image observations with ``offline_options.features: frames``, else discrete actions."""
        nested = getattr(params, "offline_options", None)
        if getattr(nested, "features", None) == "frames":
            return frozenset({DISCRETE_ACTIONS, IMAGE_OBSERVATIONS})
        return cls.requires

    def discover(self, context: DiscoveryContext) -> Discovery:
        """``count`` untrained options with this run's seed (TF loads here).

        With ``offline_options.features: frames`` they are offline_options' initial conv options.
        Otherwise, on a family without an exact model, they are untrained dense keras option
        networks over the observations (:func:`opt_suite.options.network.
        option_network`, ``offline_options.hidden_sizes`` wide), one seed per option.
        """
        tensorflow()  # quietly, before the module below imports it
        from opt_suite.option_networks.initial import initial_frame_options, initial_tabular_options

        nested = self.params.offline_options
        if nested.features == "frames":  # image observations: conv options
            if not context.train_tasks:
                raise ValueError(f"{self.name}: needs at least one train task, got none")
            return Discovery(
                initial_frame_options(
                    context.family, context.train_tasks[0], self.params.count, context.seed
                )
            )
        if not isinstance(context.family, TabularModelMixin):
            return Discovery(self._network_options(context))
        model = context.tabular_models(self.name)[0]
        options = initial_tabular_options(
            context.family, model, nested.features, nested.hidden_sizes, self.params.count,
            context.seed,
        )  # fmt: skip
        names = tuple(f"random-{i}" for i in range(len(options)))
        return Discovery(type(options)(options.mu, options.beta, names))

    def _network_options(self, context: DiscoveryContext) -> OptionSet:
        from opt_suite.options.network import NetworkOptionSet, option_network

        family = context.family
        num_actions = discrete_actions(family, self.name)
        shape = observation_shape(family, self.name)
        seeds = context.seed.generate_state(self.params.count)
        hidden = self.params.offline_options.hidden_sizes
        networks = [
            option_network(shape, num_actions, int(s), hidden_sizes=hidden, name=f"random-{i}")
            for i, s in enumerate(seeds)
        ]
        names = tuple(f"random-{i}" for i in range(len(networks)))
        return NetworkOptionSet(networks, num_actions, shape, names)
