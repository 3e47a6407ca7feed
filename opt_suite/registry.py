"""Finding task families, methods and learners by name, through Python entry points.

The built-ins register exactly like a third-party package would (``pyproject.toml``), so a plugin
adds a family with one module and one ``[project.entry-points."opt_suite.families"]`` line, without
touching opt_suite. Loading a class imports its module; registered modules must not import
TensorFlow at import time, so that ``opt-suite list`` and ``validate`` stay fast.

A registered class must subclass its group's contract (:data:`CONTRACTS`: ``TaskFamily``,
``Method``, ``Learner``, ``DemonstrationSource``) and implement every abstract member; one that
does not fails to load with a message naming its entry point and what is missing, so every caller
(``list``, ``validate``, ``run``) says the same, and a spec that does not use it is unaffected.

Entry points come only from installed distributions, and a module is imported only when
:func:`opt_suite.installed.refusal` finds nothing against it (see that module: a ``*.dist-info``
folder or a ``.py`` beside the spec registers and runs nothing).
"""

from __future__ import annotations

import difflib
import functools
import importlib
import inspect
from importlib import metadata
from typing import Any

from opt_suite import installed

__all__ = [
    "FAMILIES",
    "METHODS",
    "LEARNERS",
    "DEMONSTRATION_SOURCES",
    "CONTRACTS",
    "RegistryError",
    "entry_point",
    "names",
    "load",
    "suggest",
    "contract_problem",
]

FAMILIES = "opt_suite.families"
METHODS = "opt_suite.methods"
LEARNERS = "opt_suite.learners"
DEMONSTRATION_SOURCES = "opt_suite.demonstration_sources"

_KIND = {
    FAMILIES: "task family",
    METHODS: "method",
    LEARNERS: "learner",
    DEMONSTRATION_SOURCES: "demonstration source",
}


#: The base class (module, name) every class of a group must subclass.
CONTRACTS = {
    FAMILIES: ("opt_suite.families.base", "TaskFamily"),
    METHODS: ("opt_suite.methods.base", "Method"),
    LEARNERS: ("opt_suite.learners.base", "Learner"),
    DEMONSTRATION_SOURCES: ("opt_suite.demonstrations.base", "DemonstrationSource"),
}


class RegistryError(LookupError):
    """An unknown name, or a registered entry point that fails to load."""


@functools.cache
def _entry_points(group: str) -> dict[str, metadata.EntryPoint]:
    # Installed distributions only: a *.dist-info folder beside the spec (the current folder is
    # first on sys.path under `python -m opt_suite`) registers nothing (opt_suite/installed.py).
    return {ep.name: ep for ep in installed.entry_points(group)}


def names(group: str) -> list[str]:
    """Registered names in ``group``, sorted."""
    return sorted(_entry_points(group))


def entry_point(group: str, name: str) -> str:
    """Where ``name`` is registered in ``group`` (``module:Class``), or ``""`` if it is not."""
    ep = _entry_points(group).get(name)
    return "" if ep is None else ep.value


def suggest(name: str, candidates: list[str]) -> str:
    """A ``did you mean 'x'?`` suffix, or an empty string."""
    close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


@functools.cache
def load(group: str, name: str) -> Any:
    """The class registered as ``name`` in ``group``.

    Raises:
      RegistryError: unknown name (with the known ones and a suggestion), an import failure, or a
        class that breaks its group's contract (not a subclass, abstract members left).
    """
    eps = _entry_points(group)
    if name not in eps:
        known = ", ".join(sorted(eps)) or "none"
        raise RegistryError(
            f"unknown {_KIND.get(group, group)} {name!r}{suggest(name, list(eps))} (known: {known})"
        )
    # A distribution's entry point names a module; one that a file beside the spec would shadow
    # is refused before it runs. (Entry points made in code, with no distribution, name no file.)
    why = None if eps[name].dist is None else installed.refusal(eps[name].module)
    if why is not None:
        raise RegistryError(
            f"{_KIND.get(group, group)} {name!r} is registered as {eps[name].value} but its module "
            f"is not imported: {why}"
        )
    try:
        cls = eps[name].load()
    except (Exception, SystemExit) as exc:  # a broken plugin must not crash `opt-suite list`
        # SystemExit too: a plugin calling sys.exit(0) on import made `list` print nothing and
        # exit 0. (KeyboardInterrupt is left alone: it is the user's Ctrl-C.)
        raise RegistryError(
            f"{_KIND.get(group, group)} {name!r} is registered as {eps[name].value} but failed to "
            f"load: {type(exc).__name__}: {exc}"
        ) from exc
    problem = contract_problem(group, cls)
    if problem is not None:
        raise RegistryError(
            f"{_KIND.get(group, group)} {name!r} (entry point {eps[name].value}) {problem}"
        )
    return cls


def contract_problem(group: str, cls: Any) -> str | None:
    """Why ``cls`` cannot serve as a class of ``group``, or None when it can.

    E.g. ``does not implement: make_env, sample_tasks`` (abstract members left, so it cannot be
    instantiated) or ``is not a subclass of opt_suite.methods.base.Method``.
    """
    if group not in CONTRACTS:
        return None
    module, base_name = CONTRACTS[group]
    base = getattr(importlib.import_module(module), base_name)
    if not (isinstance(cls, type) and issubclass(cls, base)):
        return f"is not a subclass of {module}.{base_name} (got {cls!r})"
    if inspect.isabstract(cls):
        missing: frozenset[str] = cls.__abstractmethods__  # type: ignore[attr-defined]
        return f"does not implement: {', '.join(sorted(missing))}"
    return None
