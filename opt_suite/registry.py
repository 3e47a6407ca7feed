"""Finding task families, methods and learners by name, through Python entry points.

The built-ins register exactly like a third-party package would (``pyproject.toml``), so a plugin
adds a family with one module and one ``[project.entry-points."opt_suite.families"]`` line, without
touching opt_suite. Loading a class imports its module; registered modules must not import
TensorFlow at import time, so that ``opt-suite list`` and ``validate`` stay fast.
"""

from __future__ import annotations

import difflib
import functools
from importlib import metadata
from typing import Any

__all__ = [
    "FAMILIES",
    "METHODS",
    "LEARNERS",
    "DEMONSTRATION_SOURCES",
    "RegistryError",
    "names",
    "load",
    "suggest",
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


class RegistryError(LookupError):
    """An unknown name, or a registered entry point that fails to load."""


@functools.cache
def _entry_points(group: str) -> dict[str, metadata.EntryPoint]:
    return {ep.name: ep for ep in metadata.entry_points(group=group)}


def names(group: str) -> list[str]:
    """Registered names in ``group``, sorted."""
    return sorted(_entry_points(group))


def suggest(name: str, candidates: list[str]) -> str:
    """A ``did you mean 'x'?`` suffix, or an empty string."""
    close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


@functools.cache
def load(group: str, name: str) -> Any:
    """The class registered as ``name`` in ``group``.

    Raises:
      RegistryError: unknown name (with the known ones and a suggestion), or an import failure.
    """
    eps = _entry_points(group)
    if name not in eps:
        known = ", ".join(sorted(eps)) or "none"
        raise RegistryError(
            f"unknown {_KIND.get(group, group)} {name!r}{suggest(name, list(eps))} (known: {known})"
        )
    try:
        return eps[name].load()
    except Exception as exc:  # a broken plugin must not crash `opt-suite list`
        raise RegistryError(
            f"{_KIND.get(group, group)} {name!r} is registered as {eps[name].value} but failed to "
            f"load: {type(exc).__name__}: {exc}"
        ) from exc
