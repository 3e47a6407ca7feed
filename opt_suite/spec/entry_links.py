"""Method entries that name another entry: the one named must exist and be able to serve.

Two method hooks let an entry lean on another (``opt_suite.methods.base.Method``):

- ``seed_entry``: discovery takes the named entry's seed (``bc_option``'s ``initial_weights_of``:
  the same initial weights as that entry's first option) — the entry must be of the method the
  control stands in for (``Method.controls``), and ``seed_entry_problems`` names whatever else
  must agree (e.g. the same network);
- ``count_entry``: discovery takes the named entry's option count on the same seed
  (``random_options``' ``count_of``) — the runner reads that discovery first, so it must be an
  earlier entry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from opt_suite.methods.base import Method
from opt_suite.spec.convert import INVALID
from opt_suite.spec.errors import KeyPath

__all__ = ["entry_link_problems"]

Found = list[tuple[KeyPath, str]]


def entry_link_problems(
    values: Mapping[KeyPath, Any], classes: Mapping[KeyPath, Any], names: Sequence[str] | None
) -> Found:
    """(path, message) per entry whose ``seed_entry`` or ``count_entry`` cannot be served.

    Args:
      values: the converter's values by key path (``INVALID`` where unreadable).
      classes: the class loaded for each component section, e.g. ``("methods", 2)``.
      names: the method entry names in order (None when one is unreadable: nothing checked).
    """
    found: Found = []
    if names is None:
        return found
    for i in range(len(names)):
        cls = classes.get(("methods", i))
        params = values.get(("methods", i, "params"), INVALID)
        if not (isinstance(cls, type) and issubclass(cls, Method)) or params is INVALID:
            continue
        found += _seed_entry(cls, params, i, names, values, classes)
        found += _count_entry(cls, params, i, names)
    return found


def _seed_entry(
    cls: type[Method],
    params: Any,
    i: int,
    names: Sequence[str],
    values: Mapping[KeyPath, Any],
    classes: Mapping[KeyPath, Any],
) -> Found:
    link = cls.seed_entry(params)
    if link is None:
        return []
    key, name = link
    path: KeyPath = ("methods", i, "params", key)
    if name not in names:
        return [(path, f"no method entry named {name!r} (expected one of {list(names)})")]
    j = names.index(name)
    other = classes.get(("methods", j))
    if getattr(other, "name", None) != cls.controls:
        shown = getattr(other, "name", "?")
        return [
            (
                path,
                f"entry {name!r} is {shown}, expected an entry of {cls.controls} (the method "
                "this control stands in for)",
            )
        ]
    entry_params = values.get(("methods", j, "params"), INVALID)
    if entry_params is INVALID:
        return []  # reported where it is written
    return [
        (("methods", i, "params", *sub.split(".")), message)
        for sub, message in cls.seed_entry_problems(params, entry_params)
    ]


def _count_entry(cls: type[Method], params: Any, i: int, names: Sequence[str]) -> Found:
    link = cls.count_entry(params)
    if link is None or link[1] in names[:i]:
        return []
    key, name = link
    where = "a later one" if name in names else "none"
    return [
        (
            ("methods", i, "params", key),
            f"expected the name of an earlier method entry (its discovery is counted first; one "
            f"of {list(names[:i])}), got {name!r} ({where})",
        )
    ]
