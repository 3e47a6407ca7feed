"""Reference options: the family's hand-designed options, as an independent check of learned ones.

A family may offer options designed by hand (:meth:`~opt_suite.families.base.TaskFamily.
reference_options`): four rooms offers the hallway options of Sutton, Precup & Singh (1999, Sec. 3,
Fig. 2), with their initiation sets. This method hands them to the test-time learner unchanged, so
that "do options help here at all?" has an answer that does not depend on any discovery method. It
learns nothing and uses neither the demonstrations nor any interaction.

The family's reference options must not depend on the task: the method takes those of the first
train task and checks that every train task has the same ones.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from opt_suite.families.capabilities import DISCRETE_ACTIONS, REFERENCE_OPTIONS
from opt_suite.methods.base import Discovery, DiscoveryContext, Method
from opt_suite.options import to_bytes

__all__ = ["ReferenceOptions", "ReferenceOptionsParams"]


@dataclasses.dataclass(frozen=True)
class ReferenceOptionsParams:
    """No parameters: the options are fixed by the family."""


class ReferenceOptions(Method):
    """The family's hand-designed options (four rooms: hallway options), unchanged."""

    name: ClassVar[str] = "reference_options"
    description: ClassVar[str] = (
        "the family's hand-designed options (four rooms: Sutton et al. 1999's hallway options)"
    )
    Params: ClassVar[type] = ReferenceOptionsParams
    requires: ClassVar[frozenset[str]] = frozenset({DISCRETE_ACTIONS, REFERENCE_OPTIONS})

    @classmethod
    def option_count(cls, params: Any) -> int | None:
        """Unknown from the params: the family decides (four rooms: 8 hallway options)."""
        return None

    def discover(self, context: DiscoveryContext) -> Discovery:
        """``family.reference_options`` of the train tasks (one set: they ignore the goal).

        Raises:
          ValueError: no train tasks, a family without reference options, or train tasks whose
            reference options differ.
        """
        family = context.family
        if not context.train_tasks:
            raise ValueError(f"{self.name}: needs at least one train task, got none")
        sets = [family.reference_options(task) for task in context.train_tasks]
        first = sets[0]
        if first is None:
            raise ValueError(f"{self.name}: family {family.name!r} has no reference options")
        files = {to_bytes(s) if s is not None else b"" for s in sets if s is not first}
        if files - {to_bytes(first)}:
            raise ValueError(
                f"{self.name}: family {family.name!r} gives different reference options to "
                "different train tasks; expected one set for all"
            )
        return Discovery(first, info={"options": len(first)})
