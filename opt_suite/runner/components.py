"""The registered classes a spec names, as one value the planner and the runner pass around.

Its own module so that what plans cells (:mod:`.planning`) and what measures reference returns
(:mod:`.references`) can both name it without importing each other.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from opt_suite.demonstrations.base import DemonstrationSource
    from opt_suite.families.base import TaskFamily
    from opt_suite.learners.base import Learner
    from opt_suite.methods.base import Method

__all__ = ["Components"]


@dataclasses.dataclass(frozen=True)
class Components:
    """The registered classes a spec names."""

    family: type[TaskFamily]
    methods: tuple[type[Method], ...]
    learner: type[Learner]
    demonstrations: type[DemonstrationSource]
