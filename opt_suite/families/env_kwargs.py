"""Turning ``gymnasium.make``'s flat keyword arguments into a family's frozen params dataclasses."""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

from opt_suite.params import BOUNDS, constraints

__all__ = ["params_from_kwargs"]


def params_from_kwargs(kwargs: dict[str, Any], *classes: type) -> list[Any]:
    """Split flat keyword arguments over frozen dataclasses, one instance per class.

    Each dataclass gets the keys that name its fields (the others keep their defaults). Lists
    become tuples (JSON and YAML give lists). ``Literal`` choices, the numeric bounds declared with
    :func:`opt_suite.params.param` and the dataclass's ``check()`` rules are enforced, because an
    env made directly with ``gymnasium.make`` has not been through the spec validator.

    Raises:
      TypeError: a key that names no field of any class.
      ValueError: a value outside its choices or bounds, or a failed ``check()`` rule.
    """
    fields = {cls: {f.name: f for f in dataclasses.fields(cls)} for cls in classes}
    known = sorted(name for by_name in fields.values() for name in by_name)
    unknown = sorted(set(kwargs) - set(known))
    if unknown:
        raise TypeError(f"unknown keyword(s) {unknown} (expected some of {known})")
    instances = []
    for cls, by_name in fields.items():
        values = {k: _tuples(v) for k, v in kwargs.items() if k in by_name}
        hints = typing.get_type_hints(cls)
        problems = [(k, _problem(by_name[k], hints[k], v)) for k, v in values.items()]
        problems = [(k, message) for k, message in problems if message]
        instance = cls(**values)
        problems += list(getattr(instance, "check", list)())
        if problems:
            raise ValueError("; ".join(f"{cls.__qualname__}.{k}: {m}" for k, m in problems))
        instances.append(instance)
    return instances


def _tuples(value: Any) -> Any:
    return tuple(_tuples(v) for v in value) if isinstance(value, list | tuple) else value


def _problem(field: dataclasses.Field, hint: Any, value: Any) -> str:
    if typing.get_origin(hint) is typing.Literal and value not in typing.get_args(hint):
        return f"expected one of {list(typing.get_args(hint))}, got {value!r}"
    bounds = constraints(field)
    for element in value if isinstance(value, tuple) else (value,):
        if isinstance(element, bool) or not isinstance(element, int | float):
            continue
        for key, words, ok in BOUNDS:
            if bounds[key] is not None and not ok(element, bounds[key]):
                return f"expected a value {words} {bounds[key]}, got {element!r}"
    return ""
