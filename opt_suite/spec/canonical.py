"""The canonical form of a spec: plain values, one YAML text, and a hash that names it.

The canonical form has every default filled in, ``extends`` resolved away and keys sorted, so
two specs that mean the same thing — whatever their key order, inherited files or omitted
defaults — have the same canonical YAML and the same :func:`spec_hash`. Reading the canonical YAML
back gives an equal ``Spec``.

Hashes are SHA-256 of compact JSON with sorted keys (``json`` writes floats with Python's shortest
round-trip ``repr``), so they are the same across runs, machines and PyYAML versions.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any

import yaml

__all__ = ["to_plain", "canonical_yaml", "content_hash", "spec_hash"]


def to_plain(obj: Any) -> Any:
    """A dataclass (or tuple, dict, scalar) as plain YAML-able values: dicts, lists and scalars.

    Dataclasses become dicts of their init fields (but a ``param(added_later=True)`` field left at
    its default, so that adding it changed no existing spec's hash, and a field that a set
    ``param(replaces=...)`` field stands in for), tuples become lists, numpy scalars become Python
    scalars.

    Raises:
      TypeError: for values a spec cannot hold (sets, arrays, arbitrary objects).
    """
    if obj is None or isinstance(obj, bool | int | float | str):
        return obj
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        fields = dataclasses.fields(obj)
        replaced = {
            f.metadata["replaces"]
            for f in fields
            if f.metadata.get("replaces") and getattr(obj, f.name) is not None
        }
        return {
            f.name: to_plain(getattr(obj, f.name))
            for f in fields
            if f.init
            and f.name not in replaced
            and not (f.metadata.get("added_later") and getattr(obj, f.name) == f.default)
        }
    if isinstance(obj, tuple | list):
        return [to_plain(item) for item in obj]
    if isinstance(obj, dict):
        return {str(key): to_plain(value) for key, value in obj.items()}
    if type(obj).__module__ == "numpy" and hasattr(obj, "item") and getattr(obj, "ndim", 1) == 0:
        return obj.item()
    raise TypeError(f"cannot write a {type(obj).__name__} into a spec: {obj!r}")


class _Dumper(yaml.SafeDumper):
    """Lists of scalars on one line (``[3, 4]``), text paragraphs as ``|`` blocks; no anchors."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _represent_list(dumper: yaml.SafeDumper, data: list) -> yaml.Node:
    flat = all(not isinstance(item, dict | list) for item in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flat)


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    style = "|" if "\n" in data else None  # paragraphs stay readable
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(list, _represent_list)
_Dumper.add_representer(str, _represent_str)


def canonical_yaml(spec: Any) -> str:
    """The spec as YAML with sorted keys and every default written out."""
    return yaml.dump(
        to_plain(spec),
        Dumper=_Dumper,
        sort_keys=True,
        default_flow_style=False,
        allow_unicode=True,
        width=100,
    )


def content_hash(plain: Any) -> str:
    """Hex SHA-256 of a plain value (dicts, lists, scalars), independent of dict key order."""
    text = json.dumps(
        to_plain(plain), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def spec_hash(spec: Any) -> str:
    """Hex SHA-256 of the spec's canonical form (see the module docstring)."""
    return content_hash(to_plain(spec))
