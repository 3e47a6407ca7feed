"""What a Params dataclass accepts, as rows for ``opt-suite list --params`` and documentation.

Each row is one spec key: its name, the type as the validator names it, the default (``required``
when there is none), the allowed range, and the field's doc.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import yaml

from opt_suite.params import constraints
from opt_suite.spec.canonical import to_plain
from opt_suite.spec.convert import field_types, label, range_text

__all__ = ["param_rows", "yaml_value"]


def yaml_value(value: Any) -> str:
    """A value as written in a spec, on one line: ``0.1``, ``[32, 32]``, ``null``."""
    text = yaml.safe_dump(to_plain(value), default_flow_style=True, width=10**6).strip()
    return text.removesuffix("\n...").removesuffix("...").strip()


def param_rows(cls: type) -> list[dict[str, Any]]:
    """One dict per init field of the dataclass ``cls``: key, type, default, range, doc."""
    types = field_types(cls)
    rows = []
    for field in dataclasses.fields(cls):
        if not field.init:
            continue
        if field.default is not dataclasses.MISSING:
            default = yaml_value(field.default)
        elif field.default_factory is not dataclasses.MISSING:
            default = yaml_value(field.default_factory())
        else:
            default = None
        info = constraints(field)
        rows.append(
            {
                "key": field.name,
                "type": label(types[field.name]),
                "default": default,
                "range": range_text(info),
                "doc": info["doc"] or "",
            }
        )
    return rows
