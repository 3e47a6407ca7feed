"""Which method entries read the demonstrations: only then is the spec's source checked.

What a discovery reads is its method's ``discovery_budget(params)``
(:class:`~opt_suite.methods.base.Method`), per entry, as the runner plans it: ``covering_options``
with ``graph: known`` reads none, with ``graph: observed`` it reads them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from opt_suite.spec.convert import INVALID

__all__ = ["reads_demonstrations"]


def reads_demonstrations(entries: Iterable[tuple[Any, ...]]) -> bool:
    """Whether any ``(..., method class, params)`` entry's discovery reads the demonstrations.

    An entry whose class is unknown (None) reads nothing; one whose params were refused at their
    own keys (``INVALID``) counts as reading them, so that the source is checked too and every
    problem is named at once.
    """
    return any(
        cls is not None and (params is INVALID or bool(cls.discovery_budget(params).demonstrations))
        for *_, cls, params in entries
    )
