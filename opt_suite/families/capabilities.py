"""What a family offers and what methods, learners and demonstration sources need from it.

A family *offers* capabilities by what it is: an exact model when it mixes in
:class:`~opt_suite.families.base.TabularModelMixin`, discrete actions when its action space is
``Discrete``, index observations when its observation space is ``Discrete``, image observations when
it is a ``Box`` of rank 2 or 3, vector observations when it is a ``Box`` of rank 1, reference
options when it overrides
:meth:`~opt_suite.families.base.TaskFamily.reference_options`. A method, learner or demonstration
source *needs* some of them (its ``requires`` class attribute). ``opt-suite validate`` compares
the two and rejects an incompatible combination at the spec key that names the component, before
anything runs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = [
    "EXACT_MODEL",
    "DISCRETE_ACTIONS",
    "INDEX_OBSERVATIONS",
    "IMAGE_OBSERVATIONS",
    "VECTOR_OBSERVATIONS",
    "REFERENCE_OPTIONS",
    "offered",
    "unmet",
]

EXACT_MODEL = "an exact model"
DISCRETE_ACTIONS = "discrete actions"
INDEX_OBSERVATIONS = "index observations"
IMAGE_OBSERVATIONS = "image observations"
VECTOR_OBSERVATIONS = "vector observations"
REFERENCE_OPTIONS = "reference options"


def offered(family: Any) -> frozenset[str]:
    """The capabilities ``family`` (an instance) offers."""
    from gymnasium import spaces

    from opt_suite.families.base import TabularModelMixin, TaskFamily

    found = set()
    if isinstance(family, TabularModelMixin):
        found.add(EXACT_MODEL)
    if type(family).reference_options is not TaskFamily.reference_options:
        found.add(REFERENCE_OPTIONS)
    if isinstance(family.action_space, spaces.Discrete):
        found.add(DISCRETE_ACTIONS)
    observation_space = family.observation_space
    if isinstance(observation_space, spaces.Discrete):
        found.add(INDEX_OBSERVATIONS)
    if isinstance(observation_space, spaces.Box) and len(observation_space.shape) in (2, 3):
        found.add(IMAGE_OBSERVATIONS)
    if isinstance(observation_space, spaces.Box) and len(observation_space.shape) == 1:
        found.add(VECTOR_OBSERVATIONS)
    return frozenset(found)


def unmet(who: str, requires: Iterable[str], family: Any) -> str | None:
    """A message when ``family`` lacks something ``who`` requires, else None.

    E.g. ``eigenoptions needs a family with an exact model; atari has none``.
    """
    has, needs = offered(family), set(requires)
    order = [
        EXACT_MODEL,
        DISCRETE_ACTIONS,
        INDEX_OBSERVATIONS,
        IMAGE_OBSERVATIONS,
        VECTOR_OBSERVATIONS,
        REFERENCE_OPTIONS,
    ]
    missing = [need for need in order + sorted(needs - set(order)) if need in needs - has]
    if not missing:
        return None
    return f"{who} needs a family with {' and '.join(missing)}; {family.name} has none"
