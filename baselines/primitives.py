"""Primitives: no options at all — the floor every method must beat.

The test-time learner always acts over the primitive actions (``TabularOptionSet`` holds only the
extra options), so an empty option set is exactly "Q-learning with primitives" in the paper's
Fig. 4.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from opt_suite.families.base import TabularModelMixin
from opt_suite.families.capabilities import DISCRETE_ACTIONS
from opt_suite.methods.base import (
    Discovery,
    DiscoveryContext,
    Method,
    discrete_actions,
    observation_shape,
)
from opt_suite.options import TabularOptionSet

__all__ = ["Primitives", "PrimitivesParams"]


@dataclasses.dataclass(frozen=True)
class PrimitivesParams:
    """No parameters: the primitives are fixed by the family."""


class Primitives(Method):
    """The empty option set; the learner uses the family's primitive actions alone."""

    name: ClassVar[str] = "primitives"
    description: ClassVar[str] = "no options: the test-time learner uses primitive actions only"
    Params: ClassVar[type] = PrimitivesParams
    requires: ClassVar[frozenset[str]] = frozenset({DISCRETE_ACTIONS})

    @classmethod
    def option_count(cls, params: Any) -> int:
        """No options."""
        return 0

    def discover(self, context: DiscoveryContext) -> Discovery:
        """An empty option set: tabular (shaped S x A) on tabular families, else network-backed."""
        family = context.family
        if isinstance(family, TabularModelMixin):
            model = context.tabular_models(self.name)[0]
            return Discovery(TabularOptionSet.empty(model.num_states, model.num_actions))
        from opt_suite.options.network import NetworkOptionSet

        num_actions = discrete_actions(family, self.name)
        shape = observation_shape(family, self.name)
        return Discovery(NetworkOptionSet.empty(num_actions, shape))
