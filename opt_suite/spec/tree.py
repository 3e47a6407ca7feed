"""The located YAML tree: plain values that remember the file, line and column they came from.

The YAML reader produces this tree, ``extends`` merges trees of several files, and the converter
turns it into the typed dataclasses. Keeping the marks on every node lets a problem found anywhere —
even in a file pulled in by ``extends`` — point at the exact line that caused it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from opt_suite.spec.errors import Mark

__all__ = ["Node", "Scalar", "Mapping", "Sequence", "Broken", "Entry", "describe"]


@dataclasses.dataclass(frozen=True, eq=False)
class Node:
    """Base of the tree; ``mark`` is where the value starts."""

    mark: Mark


@dataclasses.dataclass(frozen=True, eq=False)
class Scalar(Node):
    """A scalar value.

    Attributes:
      value: the Python value (None, bool, int, float, str, or a date for YAML timestamps).
      kind: the YAML type: ``null``, ``bool``, ``int``, ``float``, ``str`` or ``timestamp``.
      plain: whether it was written unquoted (unquoted ``1e-3`` is text in YAML 1.1, but is surely
        meant as a number).
    """

    value: Any
    kind: str
    plain: bool = True


@dataclasses.dataclass(frozen=True, eq=False)
class Entry:
    """One ``key: value`` of a mapping; ``key_mark`` is where the key is written."""

    key_mark: Mark
    node: Node


@dataclasses.dataclass(frozen=True, eq=False)
class Mapping(Node):
    """A mapping with text keys, in written order."""

    entries: dict[str, Entry]


@dataclasses.dataclass(frozen=True, eq=False)
class Sequence(Node):
    """A list."""

    items: tuple[Node, ...]


@dataclasses.dataclass(frozen=True, eq=False)
class Broken(Node):
    """A value that could not be read; its problem is already reported, so it is skipped quietly."""


def describe(node: Node) -> str:
    """What a node holds, for ``(expected …, got …)``: ``int 3``, ``str 'abc'``, ``a list``."""
    if isinstance(node, Mapping):
        return "a mapping"
    if isinstance(node, Sequence):
        return "a list"
    if isinstance(node, Scalar):
        if node.kind == "null":
            return "null"
        if node.kind == "bool":
            return f"bool {'true' if node.value else 'false'}"
        if node.kind == "str":
            text = node.value if len(node.value) <= 60 else node.value[:57] + "..."
            return f"str {text!r}"
        return f"{node.kind} {node.value}"
    return "an unreadable value"
