"""Declaring typed, validated parameters for families, methods and learners.

Every configurable thing in opt_suite (a task family, one task's variation, a method, a learner)
declares its parameters as a *frozen dataclass* whose fields are made with :func:`param`. The spec
loader (`opt_suite.spec`) maps YAML onto these dataclasses: it rejects unknown keys, converts and
checks types from the annotations, and checks the ranges and choices given here — so code that
receives a params object can trust it.

Supported annotations: ``int``, ``float``, ``bool``, ``str``, ``typing.Literal[...]``, ``X | None``,
``tuple[T, ...]``, fixed tuples such as ``tuple[int, int]``, nested frozen dataclasses, and
``FrozenDict[str, object]`` — a mapping of any YAML values, read as written (lists as tuples), for
keyword arguments passed through to third-party code (e.g. a gymnasium env's kwargs).

Every integer parameter has an upper bound: its own ``le``/``lt``, else :data:`MAX_INT` (a count
typed with extra zeros must be an error at its line, not a run that exhausts the machine).

Cross-field rules go in an optional ``check(self) -> list[tuple[str, str]]`` method on the
dataclass, returning ``(field_name, message)`` pairs; the loader reports them at that field's
position.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, TypeVar

__all__ = ["param", "constraints", "BOUNDS", "FrozenDict", "MAX_INT"]

#: The upper bound of an integer parameter that declares none: above every budget a benchmark
#: uses (10 billion frames or steps), exact in float64 and far from int64 overflow.
MAX_INT = 10**10

# Annotations whose numbers are integers: ``int``, ``tuple[int, ...]``, ``tuple[int, int]``, each
# optionally ``| None`` (as text under ``from __future__ import annotations``, or as types).
_INTEGER = re.compile(r"(int|tuple\[int(, int)*(, \.\.\.)?\])( \| None)?")

#: The numeric bounds :func:`param` takes: (key, sign, holds(value, bound)).
BOUNDS: tuple[tuple[str, str, Any], ...] = (
    ("ge", ">=", lambda v, b: v >= b),
    ("gt", ">", lambda v, b: v > b),
    ("le", "<=", lambda v, b: v <= b),
    ("lt", "<", lambda v, b: v < b),
)


def param(
    default: Any = dataclasses.MISSING,
    *,
    doc: str = "",
    ge: float | None = None,
    gt: float | None = None,
    le: float | None = None,
    lt: float | None = None,
    added_later: bool = False,
    replaces: str | None = None,
) -> Any:
    """A dataclass field carrying a docstring and numeric bounds for the spec validator.

    Args:
      default: the default value; omit to make the key required. Mutable defaults are not allowed
        (use tuples).
      doc: one-line description shown by ``opt-suite list`` and in error messages.
      ge: inclusive lower bound (bounds also apply to every element of a tuple).
      gt: exclusive lower bound.
      le: inclusive upper bound.
      lt: exclusive upper bound.
      added_later: a key added after specs were already hashed: left out of the canonical form
        while it holds its default, so that every spec written before it keeps its hash (and its
        stored runs and CI baselines stay comparable).
      replaces: the name of a sibling field this one stands in for when it is set (``frames``
        replaces ``episodes``): the canonical form then leaves that sibling out, so that reading
        it back does not see both.
    """
    meta = {
        "doc": doc,
        "ge": ge,
        "gt": gt,
        "le": le,
        "lt": lt,
        "added_later": added_later,
        "replaces": replaces,
    }
    return dataclasses.field(default=default, metadata=meta)


def constraints(field: dataclasses.Field) -> dict[str, Any]:
    """The bounds and doc of a field made by :func:`param` (empty bounds for plain fields).

    An integer field without an upper bound gets ``le`` :data:`MAX_INT`.
    """
    meta = dict(field.metadata)
    found = {k: meta.get(k) for k in ("doc", "ge", "gt", "le", "lt")}
    if found["le"] is None and found["lt"] is None and _is_integer(field.type):
        found["le"] = MAX_INT
    return found


def _is_integer(annotation: Any) -> bool:
    text = annotation.__name__ if isinstance(annotation, type) else str(annotation)
    return _INTEGER.fullmatch(text.replace("typing.", "")) is not None


K = TypeVar("K")
V = TypeVar("V")


class FrozenDict(dict[K, V]):
    """A read-only, hashable ``dict``: a mapping a frozen params dataclass can hold and default to.

    A plain ``dict`` field would make the dataclass unhashable and cannot be a field default;
    this one can (``param(FrozenDict())``). Its values must be hashable (the spec reader gives
    scalars and tuples). It is still a ``dict``, so it is written into specs and JSON as one.
    """

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(frozenset(self.items()))

    def __repr__(self) -> str:
        return f"FrozenDict({dict.__repr__(self)})"

    def __reduce__(self) -> tuple[type, tuple[dict[K, V]]]:
        # Pickle (worker processes) and deepcopy rebuild it from a plain dict: their default
        # item-by-item rebuild would call the blocked __setitem__.
        return (FrozenDict, (dict(self),))

    def _read_only(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("FrozenDict is read-only")

    __setitem__ = __delitem__ = _read_only
    clear = pop = popitem = setdefault = update = _read_only  # type: ignore[assignment]
    __ior__ = _read_only  # type: ignore[assignment]
