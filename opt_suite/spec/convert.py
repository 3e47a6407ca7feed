"""Converting a located YAML tree into frozen dataclasses, driven by their type annotations.

Supported annotations (see ``opt_suite.params``): ``int``, ``float`` (ints accepted), ``bool``
(ints refused), ``str``, ``Literal[...]``, ``X | None``, ``tuple[T, ...]``, fixed tuples such as
``tuple[int, int]``, nested dataclasses, ``FrozenDict[str, object]`` (any YAML values, read as
written, lists as tuples), and ``Any`` — whose type a resolver chooses from what was
read before it (``family.params`` becomes the named family's ``Params``). Ranges come from the
fields' ``param(ge=, gt=, le=, lt=)`` metadata; cross-field rules from a dataclass's ``check()``.

Nothing stops at the first problem: a bad value becomes :data:`INVALID`, its problem is recorded,
and conversion goes on so that every problem of the spec is reported at once.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
import types
import typing
from collections.abc import Callable
from typing import Any, Literal

from opt_suite import registry
from opt_suite.params import BOUNDS, FrozenDict, constraints
from opt_suite.spec.errors import KeyPath, Mark, Problems
from opt_suite.spec.extends import ADD, EDITABLE_LISTS, EXTENDS_KEY, REMOVE
from opt_suite.spec.sweep import SWEEP_KEY
from opt_suite.spec.tree import Broken, Mapping, Node, Scalar, Sequence, describe

__all__ = ["INVALID", "AnyResolver", "Converter", "label", "field_types", "within", "range_text"]

# Top-level keys read before conversion (merged or expanded away before the Spec is built): an
# unknown top-level key lists them with the Spec's fields, so the list is every key a spec takes.
TOP_LEVEL_KEYS = (
    EXTENDS_KEY,
    *(f"{key}{edit}" for key in EDITABLE_LISTS for edit in (ADD, REMOVE)),
    SWEEP_KEY,
)


class _Invalid:
    def __repr__(self) -> str:
        return "INVALID"


INVALID: Any = _Invalid()
"""Stands for a value that could not be converted (its problem is already recorded)."""

# (path, values of the enclosing dataclass read so far, mark) -> the dataclass to read the ``Any``
# field as, or None when it cannot be known (the resolver reports why, unless already reported).
AnyResolver = Callable[[KeyPath, dict[str, Any], Mark], "type | None"]

_NUMBER = re.compile(r"[-+]?(\d[\d_]*\.?\d*|\.\d+)([eE][-+]?\d+)?")


def label(tp: Any) -> str:
    """How a type is named in ``(expected …)``: ``int``, ``a list of float``, ``one of 'a'``."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        return " or ".join("null" if a is type(None) else label(a) for a in args)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            item = args[0]
            if isinstance(item, type) and dataclasses.is_dataclass(item):
                return f"a list of mappings ({item.__name__})"
            return f"a list of {label(item)}"
        return f"[{', '.join(label(a) for a in args)}]"  # a fixed-length list, e.g. [int, int]
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return f"a mapping ({tp.__name__})"
    if tp is Any:
        return "a mapping"
    if origin in (dict, FrozenDict):
        return f"a mapping of {label(args[0])} to {label(args[1])}"
    if tp is object:
        return "any YAML value"
    return getattr(tp, "__name__", str(tp))


def within(value: float, bounds: dict) -> bool:
    """Whether ``value`` satisfies a field's ``ge``/``gt``/``le``/``lt`` bounds (None: no bound)."""
    return all(ok(value, bounds[key]) for key, _, ok in BOUNDS if bounds.get(key) is not None)


def range_text(bounds: dict) -> str:
    """The bounds as text, e.g. ``>= 0 and < 1`` (empty when there are none)."""
    return " and ".join(
        f"{sign} {bounds[key]}" for key, sign, _ in BOUNDS if bounds.get(key) is not None
    )


@functools.cache
def field_types(cls: type) -> dict[str, Any]:
    """The resolved annotations of a dataclass (cached; raises if one cannot be resolved)."""
    return typing.get_type_hints(cls)


class Converter:
    """Reads located nodes as typed values, remembering every value and mark by key path.

    Attributes:
      values: every converted value (or INVALID) by key path — spec-level rules read them even when
        an enclosing dataclass could not be built.
      marks: where each key path's value was written.
    """

    def __init__(self, problems: Problems, resolve_any: AnyResolver) -> None:
        self.problems = problems
        self.resolve_any = resolve_any
        self.values: dict[KeyPath, Any] = {}
        self.marks: dict[KeyPath, Mark] = {}
        self._scopes: list[dict[str, Any]] = [{}]

    def mark_of(self, path: KeyPath) -> Mark:
        """Where ``path`` was written, or its nearest written ancestor."""
        path = tuple(path)
        while path and path not in self.marks:
            path = path[:-1]
        return self.marks.get(path, Mark("<unknown>", 1, 1))

    def convert(self, node: Node, tp: Any, path: KeyPath, bounds: dict | None = None) -> Any:
        """``node`` read as ``tp``; INVALID (problem recorded) when it is not one."""
        self.marks[path] = node.mark
        value = self._convert(node, tp, path, bounds or {})
        self.values[path] = value
        return value

    def _convert(self, node: Node, tp: Any, path: KeyPath, bounds: dict) -> Any:
        if isinstance(node, Broken):
            return INVALID
        origin = typing.get_origin(tp)
        if tp is Any:
            cls = self.resolve_any(path, self._scopes[-1], node.mark)
            return INVALID if cls is None else self._convert(node, cls, path, bounds)
        if origin is Literal:
            return self._literal(node, tp, path)
        if origin in (typing.Union, types.UnionType):
            return self._optional(node, tp, path, bounds)
        if origin is tuple:
            return self._tuple(node, tp, path, bounds)
        if origin in (dict, FrozenDict):
            return self._mapping(node, tp, path)
        if tp is object:
            return self._plain(node, path)
        if isinstance(tp, type) and dataclasses.is_dataclass(tp):
            return self._dataclass(node, tp, path)
        if tp in (int, float, bool, str):
            return self._scalar(node, tp, path, bounds, label(tp))
        self.problems.add(
            node.mark, path, f"cannot be read: the declared type {tp!r} is not supported by specs"
        )
        return INVALID

    def _mismatch(self, node: Node, path: KeyPath, expected: str, hint: str = "") -> Any:
        self.problems.add(
            node.mark, path, f"wrong type (expected {expected}, got {describe(node)}){hint}"
        )
        return INVALID

    def _scalar(self, node: Node, tp: type, path: KeyPath, bounds: dict, expected: str) -> Any:
        kind = node.kind if isinstance(node, Scalar) else None
        value: Any = node.value if isinstance(node, Scalar) else None
        if tp is str:
            if kind == "str":
                return value
            hint = (
                "; quote it to make it text"
                if kind in ("int", "float", "bool", "timestamp")
                else ""
            )
            return self._mismatch(node, path, expected, hint)
        if tp is bool:
            return value if kind == "bool" else self._mismatch(node, path, expected)
        if tp is int:
            if kind != "int":
                return self._mismatch(node, path, expected)
        elif kind == "float" or kind == "int":
            value = float(value) if abs(value) < 1e308 else math.inf
        elif kind == "str" and isinstance(node, Scalar) and node.plain and _NUMBER.fullmatch(value):
            value = float(value.replace("_", ""))  # YAML 1.1 reads unquoted 1e-3 as text
        else:
            return self._mismatch(node, path, expected)
        if tp is float and not math.isfinite(value):
            return self._mismatch(node, path, f"a finite {expected}")
        return self._bounded(value, node, path, bounds)

    def _bounded(self, value: float, node: Node, path: KeyPath, bounds: dict) -> Any:
        if within(value, bounds):
            return value
        self.problems.add(
            node.mark, path, f"out of range (expected {range_text(bounds)}, got {value})"
        )
        return INVALID

    def _literal(self, node: Node, tp: Any, path: KeyPath) -> Any:
        choices = typing.get_args(tp)
        if isinstance(node, Scalar):
            for choice in choices:
                if type(node.value) is type(choice) and node.value == choice:
                    return choice
        hint = ""
        if isinstance(node, Scalar) and node.kind == "str":
            hint = registry.suggest(node.value, [c for c in choices if isinstance(c, str)])
        return self._mismatch(node, path, label(tp), hint)

    def _optional(self, node: Node, tp: Any, path: KeyPath, bounds: dict) -> Any:
        arms = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(arms) != 1 or len(arms) == len(typing.get_args(tp)):
            self.problems.add(
                node.mark, path, f"cannot be read: unions like {tp!r} are unsupported"
            )
            return INVALID
        if isinstance(node, Scalar) and node.kind == "null":
            return None
        if arms[0] in (int, float, bool, str):
            return self._scalar(node, arms[0], path, bounds, label(tp))
        return self._convert(node, arms[0], path, bounds)

    def _tuple(self, node: Node, tp: Any, path: KeyPath, bounds: dict) -> Any:
        args = typing.get_args(tp)
        if not isinstance(node, Sequence):
            return self._mismatch(node, path, label(tp))
        if len(args) == 2 and args[1] is Ellipsis:
            element_types = [args[0]] * len(node.items)
        elif len(node.items) != len(args):
            count = f"{len(node.items)} item{'s' if len(node.items) != 1 else ''}"
            self.problems.add(node.mark, path, f"wrong length (expected {label(tp)}, got {count})")
            return INVALID
        else:
            element_types = list(args)
        items = [
            self.convert(item, t, path + (i,), bounds)
            for i, (item, t) in enumerate(zip(node.items, element_types, strict=True))
        ]
        return INVALID if any(v is INVALID for v in items) else tuple(items)

    def _mapping(self, node: Node, tp: Any, path: KeyPath) -> Any:
        """A ``FrozenDict[str, V]``: text keys (any), each value read as V."""
        key_type, value_type = typing.get_args(tp)
        if isinstance(node, Scalar) and node.kind == "null":
            return FrozenDict()
        if key_type is not str or not isinstance(node, Mapping):
            return self._mismatch(node, path, label(tp))
        values = {
            key: self.convert(entry.node, value_type, path + (key,))
            for key, entry in node.entries.items()
        }
        return INVALID if any(v is INVALID for v in values.values()) else FrozenDict(values)

    def _plain(self, node: Node, path: KeyPath) -> Any:
        """Any YAML value as written (lists as tuples, mappings as FrozenDicts); no dates."""
        if isinstance(node, Sequence):
            items = [self.convert(item, object, path + (i,)) for i, item in enumerate(node.items)]
            return INVALID if any(v is INVALID for v in items) else tuple(items)
        if isinstance(node, Mapping):
            return self._mapping(node, FrozenDict[str, object], path)
        if isinstance(node, Scalar) and node.kind != "timestamp":
            return node.value
        return self._mismatch(node, path, "a number, text, true/false, null, a list or a mapping")

    def _dataclass(self, node: Node, cls: type, path: KeyPath) -> Any:
        if isinstance(node, Scalar) and node.kind == "null":  # `key:` with nothing: the defaults
            node = Mapping(node.mark, {})
        if not isinstance(node, Mapping):
            return self._mismatch(node, path, label(cls))
        try:
            hints = field_types(cls)
        except Exception as exc:  # a plugin's unresolvable annotation
            self.problems.add(
                node.mark, path, f"cannot read the fields of {cls.__qualname__}: {exc}"
            )
            return INVALID
        fields = [f for f in dataclasses.fields(cls) if f.init]
        names = [f.name for f in fields]
        shown = names + list(TOP_LEVEL_KEYS) if path == () else names
        for key, entry in node.entries.items():
            if key not in names:
                known = f"expected one of: {', '.join(shown)}" if shown else "it takes no keys"
                self.problems.add(
                    entry.key_mark,
                    path + (key,),
                    f"unknown key{registry.suggest(key, shown)} ({known})",
                )
        values: dict[str, Any] = {}
        self._scopes.append(values)
        try:
            for field in fields:
                values[field.name] = self._field(
                    node, field, hints[field.name], path + (field.name,)
                )
        finally:
            self._scopes.pop()
        if any(v is INVALID for v in values.values()):
            return INVALID
        try:
            obj = cls(**values)
        except Exception as exc:  # a __post_init__ that rejects the combination
            self.problems.add(node.mark, path, f"invalid {cls.__name__}: {exc}")
            return INVALID
        self._check(obj, path)
        return obj

    def _field(self, node: Mapping, field: dataclasses.Field, tp: Any, path: KeyPath) -> Any:
        entry = node.entries.get(field.name)
        if entry is not None:
            return self.convert(entry.node, tp, path, constraints(field))
        if tp is Any:  # a missing ``params``: the resolved dataclass with its defaults
            cls = self.resolve_any(path, self._scopes[-1], node.mark)
            return INVALID if cls is None else self.convert(Mapping(node.mark, {}), cls, path)
        if dataclasses.is_dataclass(field.default) and Any in field_types(tp).values():
            # A missing section with ``params`` is read as an empty one, so that its params
            # resolve exactly as when the section is written: one spec, one canonical form.
            return self.convert(Mapping(node.mark, {}), tp, path)
        if field.default is not dataclasses.MISSING:
            value = field.default
        elif field.default_factory is not dataclasses.MISSING:
            value = field.default_factory()
        else:
            doc = field.metadata.get("doc")
            self.problems.add(
                node.mark,
                path,
                f"missing required key (expected {label(tp)}{': ' + doc if doc else ''})",
            )
            value = INVALID
        self.values[path] = value
        return value

    def _check(self, obj: Any, path: KeyPath) -> None:
        check = getattr(obj, "check", None)
        if not callable(check):
            return
        name = type(obj).__name__
        try:
            found = [(str(field), str(message)) for field, message in check()]
        except (Exception, SystemExit) as exc:  # a plugin's sys.exit(0) is a failed check too
            self.problems.add(self.mark_of(path), path, f"{name}.check() failed: {exc!r}")
            return
        for field, message in found:
            where = path + (field,) if field else path
            self.problems.add(self.mark_of(where), where, message)
