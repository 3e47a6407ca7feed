"""What a family offers and what methods, learners and demonstration sources need from it.

A family *offers* capabilities by what it is: an exact model when it mixes in
:class:`~opt_suite.families.base.TabularModelMixin`, discrete actions when its action space is
``Discrete``, index observations when its observation space is ``Discrete``, image observations when
it is a ``Box`` of rank 2 or 3, vector observations when it is a ``Box`` of rank 1, reference
options when it overrides
:meth:`~opt_suite.families.base.TaskFamily.reference_options`. A method, learner or demonstration
source *needs* some of them (its ``requires`` class attribute). ``opt-suite validate`` compares
the two and rejects an incompatible combination at the spec key that names the component, before
anything runs, naming what the family has instead (``smdp_q_learning needs a family with index
observations; gymnasium-cartpole-v1 has vector observations``) and, through :func:`able`, the
registered components that fit it. The generated table ``docs/compatibility.md``
(``docs/gen_compatibility.py``) is :func:`unfit` over every family kind and component.
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
    "able",
    "instance_label",
    "observation_kind",
    "offered",
    "unfit",
    "unfit_at_defaults",
    "unmet",
]

EXACT_MODEL = "an exact model"
DISCRETE_ACTIONS = "discrete actions"
INDEX_OBSERVATIONS = "index observations"
IMAGE_OBSERVATIONS = "image observations"
VECTOR_OBSERVATIONS = "vector observations"
REFERENCE_OPTIONS = "reference options"

#: The order in which missing capabilities are named.
_ORDER = (
    EXACT_MODEL,
    DISCRETE_ACTIONS,
    INDEX_OBSERVATIONS,
    IMAGE_OBSERVATIONS,
    VECTOR_OBSERVATIONS,
    REFERENCE_OPTIONS,
)
_OBSERVATION_KINDS = (INDEX_OBSERVATIONS, IMAGE_OBSERVATIONS, VECTOR_OBSERVATIONS)


def offered(family: Any) -> frozenset[str]:
    """The capabilities ``family`` (an instance) offers."""
    from gymnasium import spaces

    from opt_suite.families.base import TabularModelMixin

    found = set()
    if isinstance(family, TabularModelMixin):
        found.add(EXACT_MODEL)
    if family.offers_reference_options:
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


def observation_kind(family: Any) -> str:
    """What ``family``'s observations are, as a capability (``index observations``).

    Read from the task's observation space, not the family's name: FrozenLake through the
    ``gymnasium`` family has index observations, CartPole through it vector observations.
    """
    has = offered(family)
    for kind in _OBSERVATION_KINDS:
        if kind in has:
            return kind
    return f"observations of another kind ({family.observation_space})"


def instance_label(family: Any) -> str:
    """The family as the spec made it (``gymnasium-frozenlake-v1``), else its registered name."""
    try:
        return str(family.instance_name)
    except Exception:  # a plugin's instance_name that needs more than its params
        return str(family.name)


def _has_instead(need: str, family: Any) -> str:
    if need in _OBSERVATION_KINDS:
        return observation_kind(family)
    if need == DISCRETE_ACTIONS:
        return f"no discrete actions ({family.action_space})"
    return f"no {need.removeprefix('an ')}"


def unmet(who: str, requires: Iterable[str], family: Any) -> str | None:
    """A message when ``family`` lacks something ``who`` requires, else None.

    It names what the family has instead, e.g. ``eigenoptions needs a family with an exact model;
    atari-breakout has no exact model`` or ``smdp_q_learning needs a family with index
    observations; gymnasium-cartpole-v1 has vector observations``.
    """
    has, needs = offered(family), set(requires)
    missing = [need for need in [*_ORDER, *sorted(needs - set(_ORDER))] if need in needs - has]
    if not missing:
        return None
    instead = list(dict.fromkeys(_has_instead(need, family) for need in missing))
    return (
        f"{who} needs a family with {' and '.join(missing)}; {instance_label(family)} has "
        f"{' and '.join(instead)}"
    )


def unfit(cls: Any, params: Any, family: Any) -> str | None:
    """Why component class ``cls`` with ``params`` cannot run on ``family``, or None if it can.

    Its capabilities (:meth:`~opt_suite.component.Component.requirements`) first, then what its
    own :meth:`~opt_suite.component.Component.check_family` finds in the params
    (``picky: params.network: needs image observations``).
    """
    problem = unmet(cls.name, cls.requirements(params), family)
    if problem:
        return problem
    found = cls.check_family(params, family)
    if not found:
        return None
    return f"{cls.name}: " + "; ".join(f"params.{key}: {message}" for key, message in found)


def unfit_at_defaults(cls: Any, family: Any) -> str | None:
    """:func:`unfit` at the component's default params.

    A component whose params have no defaults (``minari``'s dataset: only the user can name it)
    is judged by its capabilities alone.
    """
    try:
        params = cls.Params()
    except TypeError:  # a required param
        return unmet(cls.name, cls.requires, family)
    return unfit(cls, params, family)


def able(group: str, family: Any) -> list[str]:
    """The registered names of ``group`` that can run on ``family`` at their defaults.

    One that fails to load, or whose check fails, is left out (``opt-suite list`` says why it
    fails to load).
    """
    from opt_suite import registry

    names = []
    for name in registry.names(group):
        try:
            fits = unfit_at_defaults(registry.load(group, name), family) is None
        except Exception:  # a broken plugin or a check that fails: not one that can
            continue
        if fits:
            names.append(name)
    return names
