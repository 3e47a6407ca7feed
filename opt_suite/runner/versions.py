"""Which installed package provides a registered class, and at which version.

A cell's id includes the versions of the packages that provide its family, method, learner and
demonstration source (:func:`provider`), so that a plugin released (or reinstalled) at a new
version gets new cells instead of silently reusing what its old code computed.
"""

from __future__ import annotations

import functools
from importlib import metadata

__all__ = ["provider"]


@functools.cache
def _distributions() -> dict[str, list[str]]:
    return dict(metadata.packages_distributions())


def provider(cls: type | None) -> str | None:
    """``"<distribution> <version>"`` of the package whose module defines ``cls``.

    None for None; ``"unpackaged"`` for a class defined outside any installed distribution
    (e.g. in a test file).
    """
    if cls is None:
        return None
    top = cls.__module__.split(".")[0]
    names = sorted(_distributions().get(top, []))
    if not names:
        return "unpackaged"
    return ", ".join(f"{name} {metadata.version(name)}" for name in names)
