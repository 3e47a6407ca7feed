"""The one base of every plugin that runs in a cell: methods, learners and demonstration sources.

What the runner, ``validate``, ``list``, ``describe`` and the work estimate ask of a component is
declared here once — its name, one-line description, ``Params``, what it needs from the family
(``requires`` / :meth:`Component.requirements`), what in its params cannot work with a family
(:meth:`Component.check_family`) and the memory it builds (:meth:`Component.memory_estimate`).
The three group bases (:class:`~opt_suite.methods.base.Method`,
:class:`~opt_suite.learners.base.Learner`,
:class:`~opt_suite.demonstrations.base.DemonstrationSource`) add only their one entry point,
which takes one context object: a new capability is a new context field, never a new signature.

Plugins written against the old positional signatures (a learner's ``run(family, runs, options,
episodes, max_steps, frames=None)``, a source's ``collect(family, train_tasks,
trajectories_per_task, max_steps, seed)``) and the old memory hooks (``memory_hint``,
``network_memory``) keep working through :func:`adapt_entry` and :func:`adapt_memory`, with a
``DeprecationWarning`` when their class is defined; a plugin's own code may still call any
component's entry point (its own or a built-in's) the old way, with a ``DeprecationWarning`` at
the call.

This module imports nothing of the package: every layer may build on it.
"""

from __future__ import annotations

import abc
import dataclasses
import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any, ClassVar

__all__ = ["Component", "ProblemSize", "adapt_entry", "adapt_memory"]


@dataclasses.dataclass(frozen=True)
class ProblemSize:
    """What the work estimate knows of a family before anything runs.

    Attributes:
      num_actions: A, the primitive actions (1 for a non-discrete action space).
      observation_shape: one observation's shape (``()`` for state indices).
      num_states: S of the exact tabular model, or None when the family has none.
    """

    num_actions: int
    observation_shape: tuple[int, ...] = ()
    num_states: int | None = None


class Component(abc.ABC):
    """What every method, learner and demonstration source declares.

    Attributes:
      name: the spec name (``methods[].method``, ``evaluation.learner``, ``demonstrations.source``).
      description: one line for ``opt-suite list`` (default "": the docstring's first line).
      Params: frozen dataclass of its parameters (see :mod:`opt_suite.params`).
      requires: what it needs from the family (:mod:`opt_suite.families.capabilities`: an exact
        model, discrete actions, index or image observations); ``opt-suite validate`` rejects a
        spec that pairs it with a family lacking one.
    """

    name: ClassVar[str]
    description: ClassVar[str] = ""
    Params: ClassVar[type]
    requires: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, params: Any = None) -> None:
        self.params = self.Params() if params is None else params

    @classmethod
    def requirements(cls, params: Any) -> frozenset[str]:
        """What the component needs from the family with these params (default: ``requires``)."""
        return cls.requires

    @classmethod
    def check_family(cls, params: Any, family: Any) -> list[tuple[str, str]]:
        """What in ``params`` cannot work with ``family``, as (key below the params, message).

        ``opt-suite validate`` reports each at its spec key (e.g. ``methods[2].params.features``)
        instead of the generic capability message; default: nothing.
        """
        return []

    @classmethod
    def memory_estimate(cls, params: Any, size: ProblemSize) -> tuple[int, str] | None:
        """(bytes, what) of the largest array the component builds for a problem of ``size``.

        Only arrays beyond what the estimate counts itself (the learner's Q table, option sets,
        task models): eigenoptions' dense states x states Laplacian (it returns None when
        ``size.num_states`` is None), the PPO agents' networks with Adam's moments and one
        update's batch. The work estimate (:mod:`opt_suite.runner.estimate`) refuses, before
        running anything, a spec whose largest array cannot fit in memory. Default: None.
        """
        return None


def _legacy(function: Callable[..., Any]) -> bool:
    """Whether ``function(self, ...)`` takes the old positional arguments, not one ``context``.

    The old signatures all start ``(self, family, ...)``; a new one may add keywords after
    ``context`` without being mistaken for an old one.
    """
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    params = [p for p in inspect.signature(function).parameters.values() if p.kind in kinds]
    return len(params) > 2 and params[1].name != "context"


def adapt_entry(
    cls: type,
    entry: str,
    call_old: Callable[[Callable[..., Any], Any, Any], Any],
    context_type: type,
) -> None:
    """Let ``entry`` of a subclass be called both ways: with one context, or positionally.

    Called by a group base's ``__init_subclass__`` for every subclass that defines ``entry``.
    The old positional arguments are the context's fields in order (a source's ``collect(family,
    train_tasks, trajectories_per_task, max_steps, seed)`` is ``SourceContext``'s), so:

    - a subclass whose ``entry`` takes them (an old plugin) is called by the runner with a
      context through ``call_old(old_function, self, context)``, with a ``DeprecationWarning``
      when the class is defined; its own code keeps calling it positionally, unchanged;
    - a subclass whose ``entry`` takes a context (every built-in) may still be called the old way
      from a plugin's own code: the arguments become ``context_type(*args, **kwargs)``, with a
      ``DeprecationWarning`` at the call.
    """
    own = cls.__dict__.get(entry)
    if own is None or getattr(own, "__isabstractmethod__", False):
        return
    where = f"{cls.__module__}.{cls.__qualname__}.{entry}"
    migration = f"take one context object ({entry}(self, context), see docs/plugins.md)"

    def one_context(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any | None:
        """The context when the call passes exactly one, else None (an old-style call)."""
        if len(args) == 1 and not kwargs and isinstance(args[0], context_type):
            return args[0]
        if not args and list(kwargs) == ["context"]:
            return kwargs["context"]
        return None

    if _legacy(own):
        warnings.warn(
            f"{where}: positional arguments are deprecated; {migration}",
            DeprecationWarning,
            stacklevel=3,
        )

        @functools.wraps(own)
        def from_either(self: Any, *args: Any, **kwargs: Any) -> Any:
            context = one_context(args, kwargs)
            if context is None:  # the plugin's own code, calling its method as it wrote it
                return own(self, *args, **kwargs)
            return call_old(own, self, context)

    else:
        fields = {field.name for field in dataclasses.fields(context_type)}

        @functools.wraps(own)
        def from_either(self: Any, *args: Any, **kwargs: Any) -> Any:
            # The old form passes the context's fields: two or more positionally, or by name.
            if len(args) < 2 and not fields & set(kwargs):
                return own(self, *args, **kwargs)  # the context (and any keywords of its own)
            warnings.warn(
                f"calling {where} with positional arguments is deprecated; pass one "
                f"{context_type.__name__} ({entry}(context), see docs/plugins.md)",
                DeprecationWarning,
                stacklevel=2,
            )
            return own(self, context_type(*args, **kwargs))

    setattr(cls, entry, from_either)


def adapt_memory(cls: type[Any], hook: str) -> None:
    """Give a subclass that defines the old memory hook ``hook`` a ``memory_estimate`` calling it.

    ``memory_hint(params, num_states, num_actions)`` (methods, tabular families only) and
    ``network_memory(params, observation_shape, num_actions)`` (learners and sources) were the
    two names of :meth:`Component.memory_estimate`; a ``DeprecationWarning`` names the migration.
    """
    if hook not in cls.__dict__ or "memory_estimate" in cls.__dict__:
        return
    warnings.warn(
        f"{cls.__module__}.{cls.__qualname__}.{hook} is deprecated; define"
        " memory_estimate(cls, params, size: ProblemSize) (see docs/plugins.md)",
        DeprecationWarning,
        stacklevel=3,
    )
    old = getattr(cls, hook)

    def memory_estimate(_cls: type, params: Any, size: ProblemSize) -> tuple[int, str] | None:
        if hook == "network_memory":
            return old(params, size.observation_shape, size.num_actions)
        if size.num_states is None:  # memory_hint was asked on tabular families only
            return None
        return old(params, size.num_states, size.num_actions)

    cls.memory_estimate = classmethod(memory_estimate)
