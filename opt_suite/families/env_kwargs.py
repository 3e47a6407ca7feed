"""Checking the params of an env made outside the spec loader: the one way, for every family.

``gymnasium.make("opt_suite/FourRooms-v0", ...)``, ``gymnasium.make("opt_suite/Atari-v0", ...)``
and the ``gymnasium`` family's wrapper take their params as keyword arguments that have not been
through the spec validator. Each family checks them here, with the rules ``validate`` applies:
``Literal`` choices, the numeric bounds declared with :func:`opt_suite.params.param` (the implicit
upper bound :data:`opt_suite.params.MAX_INT` of integers included), finite numbers, and the
dataclass's own ``check()`` rules.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from typing import Any

from opt_suite.params import BOUNDS, constraints

__all__ = ["check_params", "field_problems", "params_from_kwargs"]


def params_from_kwargs(kwargs: dict[str, Any], *classes: type) -> list[Any]:
    """Split flat keyword arguments over frozen dataclasses, one checked instance per class.

    Each dataclass gets the keys that name its fields (the others keep their defaults). Lists
    become tuples (JSON and YAML give lists).

    Raises:
      TypeError: a key that names no field of any class.
      ValueError: a value outside its choices or bounds, or a failed ``check()`` rule.
    """
    fields = {cls: {f.name for f in dataclasses.fields(cls)} for cls in classes}
    known = sorted(name for names in fields.values() for name in names)
    unknown = sorted(set(kwargs) - set(known))
    if unknown:
        raise TypeError(f"unknown keyword(s) {unknown} (expected some of {known})")
    instances = [
        cls(**{k: _tuples(v) for k, v in kwargs.items() if k in names})
        for cls, names in fields.items()
    ]
    check_params(*instances)
    return instances


def check_params(*instances: Any, rules: bool = True) -> None:
    """Raise ``ValueError`` naming every bad field of these params dataclass instances.

    Args:
      instances: frozen params dataclasses (a family's ``Params``, ``TaskParams``, ...).
      rules: also run each instance's ``check()`` (off where it would build the env it checks).
    """
    problems = []
    for instance in instances:
        found = field_problems(instance)
        if rules:
            found += list(getattr(instance, "check", list)())
        problems += [(type(instance).__qualname__, key, message) for key, message in found]
    if problems:
        raise ValueError("; ".join(f"{cls}.{key}: {message}" for cls, key, message in problems))


def field_problems(instance: Any) -> list[tuple[str, str]]:
    """(field, why) for each field outside its ``Literal`` choices, bounds or the finite numbers."""
    hints = typing.get_type_hints(type(instance))
    problems = []
    for field in dataclasses.fields(instance):
        message = _problem(field, hints[field.name], getattr(instance, field.name))
        if message:
            problems.append((field.name, message))
    return problems


def _tuples(value: Any) -> Any:
    return tuple(_tuples(v) for v in value) if isinstance(value, list | tuple) else value


def _problem(field: dataclasses.Field, hint: Any, value: Any) -> str:
    if typing.get_origin(hint) is typing.Literal and value not in typing.get_args(hint):
        return f"expected one of {list(typing.get_args(hint))}, got {value!r}"
    bounds = constraints(field)
    for element in value if isinstance(value, tuple) else (value,):
        if isinstance(element, bool) or not isinstance(element, int | float):
            continue
        if isinstance(element, float) and not math.isfinite(element):
            return f"expected a finite number, got {element!r}"
        for key, words, ok in BOUNDS:
            if bounds[key] is not None and not ok(element, bounds[key]):
                return f"expected a value {words} {bounds[key]}, got {element!r}"
    return ""
