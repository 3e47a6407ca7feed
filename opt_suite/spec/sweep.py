"""``sweep:`` — one spec file, many named variants: grid and zip axes over any spec key.

    sweep:
      grid:                                       # every combination of these axes
        evaluation.params.alpha: [0.1, 0.5, 1.0]
        methods.offline-options.params.lambda2: [10, 100]
      zip:                                        # groups of axes that move together
        - evaluation.episodes: [200, 1000]
          evaluation.max_steps: [1000, 2000]

An axis key is a dotted path into the spec (``family.params.layout``, ``tasks.vary.goal_region``,
``evaluation.episodes``); ``methods.<entry name>`` picks a method entry by its ``name``. A block's
variants are the product of its grid axes and of its zip groups (a zip group contributes its common
length). ``sweep:`` may also be a *list* of blocks: their variants are concatenated, which writes a
fractional design such as one factor at a time (say which design in the spec's description).

Each variant is the base spec with the variant's values written in, converted and checked like any
spec, so a bad value (wrong type, out of range, unknown key) is reported at the sweep's line. Its
name, used for its results folder and its leaderboard rows, is ``key=value`` per axis joined by
``,`` (``key`` is the path's last part, or the whole path where two axes share it and take
different values; axes that share a last part and take the same value, such as a zip group setting
one parameter of several methods, are written once as ``key=value``), with
characters outside ``A-Za-z0-9._=,+-`` turned into ``_``. A sweep has at most
:data:`MAX_VARIANTS` variants.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
from typing import Any

from opt_suite.spec.errors import KeyPath, Mark, Problems
from opt_suite.spec.tree import Broken, Entry, Mapping, Node, Scalar, Sequence, describe

__all__ = ["MAX_VARIANTS", "SWEEP_KEY", "VariantTree", "expand_sweep"]

SWEEP_KEY = "sweep"

#: The most variants one sweep may expand into: each variant is a whole protocol (its own cells);
#: more than this is almost surely a grid written by mistake, where a fractional design was meant.
MAX_VARIANTS = 64

# Keys a sweep may not change: they say what the file is, not what it measures.
_FIXED_KEYS = ("name", "extends", SWEEP_KEY)
_UNSAFE = re.compile(r"[^A-Za-z0-9._=,+-]")


@dataclasses.dataclass(frozen=True, eq=False)
class VariantTree:
    """One expanded variant: its name, its values by axis path, and the spec tree to convert."""

    name: str
    values: dict[str, Any]
    tree: Mapping


@dataclasses.dataclass(frozen=True, eq=False)
class _Axis:
    path: tuple[str, ...]
    key_mark: Mark
    values: tuple[Node, ...]


def expand_sweep(root: Mapping, problems: Problems) -> tuple[Mapping, list[VariantTree]]:
    """Split ``root`` into its base tree (without ``sweep``) and the variant trees.

    Problems (bad axes, unequal zip groups, colliding names, too many variants) are added to
    ``problems``; the variants are then empty. Without a ``sweep`` key: ``(root, [])``.
    """
    entry = root.entries.get(SWEEP_KEY)
    if entry is None:
        return root, []
    base = Mapping(root.mark, {k: e for k, e in root.entries.items() if k != SWEEP_KEY})
    before = len(problems)
    node = entry.node
    if isinstance(node, Broken):
        return base, []
    blocks = list(node.items) if isinstance(node, Sequence) else [node]
    if isinstance(node, Sequence) and not blocks:
        problems.add(node.mark, (SWEEP_KEY,), "expected at least one sweep block, got none")
    designs: list[list[list[tuple[_Axis, Node]]]] = []
    for i, block in enumerate(blocks):
        where: KeyPath = (SWEEP_KEY, i) if isinstance(node, Sequence) else (SWEEP_KEY,)
        design = _block(block, where, base, problems)
        if design is not None:
            designs.append(design)
    count = sum(len(d) for d in designs)
    if count > MAX_VARIANTS:
        problems.add(node.mark, (SWEEP_KEY,), _too_many(count))
    if len(problems) > before:
        return base, []
    variants: list[VariantTree] = []
    seen: dict[str, Mark] = {}
    for design in designs:
        paths = [axis.path for axis, _ in design[0]] if design else []
        labels = _labels(paths)
        for choice in design:
            name = _UNSAFE.sub("_", _variant_name(choice, labels))
            mark = choice[0][1].mark
            if name in seen:
                problems.add(
                    mark,
                    (SWEEP_KEY,),
                    f"variant name {name!r} collides with the variant at {seen[name]}: two "
                    "variants would share one results folder (make their values differ)",
                )
                continue
            seen[name] = mark
            tree = base
            for axis, value in choice:
                tree = _with_entry(tree, axis.path, value, axis.key_mark)
            values = {".".join(a.path): _plain(v) for a, v in choice}
            variants.append(VariantTree(name, values, tree))
    return base, variants


def _block(
    block: Node, where: KeyPath, base: Mapping, problems: Problems
) -> list[list[tuple[_Axis, Node]]] | None:
    """The variants of one block, each a list of (axis, value); None after a problem."""
    if not isinstance(block, Mapping):
        got = describe(block)
        problems.add(block.mark, where, f"expected a mapping with grid and/or zip, got {got}")
        return None
    unknown = [k for k in block.entries if k not in ("grid", "zip")]
    for key in unknown:
        problems.add(
            block.entries[key].key_mark, (*where, key), "unknown sweep key (expected grid or zip)"
        )
    factors: list[list[list[tuple[_Axis, Node]]]] = []
    ok = not unknown
    grid = block.entries.get("grid")
    if grid is not None:
        axes = _axes(grid.node, (*where, "grid"), base, problems)
        if axes is None:
            ok = False
        else:
            factors += [[[(axis, v)] for v in axis.values] for axis in axes]
    zips = block.entries.get("zip")
    if zips is not None:
        node = zips.node
        groups = node.items if isinstance(node, Sequence) else None
        if groups is None:
            problems.add(
                node.mark, (*where, "zip"), f"expected a list of axis groups, got {describe(node)}"
            )
            ok = False
        for j, group in enumerate(groups or ()):
            axes = _axes(group, (*where, "zip", j), base, problems)
            if axes is None:
                ok = False
                continue
            lengths = {len(a.values) for a in axes}
            if len(lengths) > 1:
                sizes = ", ".join(f"{'.'.join(a.path)}: {len(a.values)}" for a in axes)
                problems.add(
                    group.mark,
                    (*where, "zip", j),
                    f"zip axes must have equal lengths, got {sizes}",
                )
                ok = False
                continue
            rows = zip(*(a.values for a in axes), strict=True)
            factors.append([list(zip(axes, row, strict=True)) for row in rows])
    if grid is None and zips is None and not unknown:
        problems.add(block.mark, where, "a sweep block needs grid and/or zip axes")
        ok = False
    if not ok:
        return None
    paths = [a.path for f in factors for a, _ in f[0]]
    for path in {p for p in paths if paths.count(p) > 1}:
        problems.add(block.mark, where, f"axis {'.'.join(path)} appears more than once")
        return None
    # Counted from the axis lengths before anything is built: a 0.6 KB grid of 10**9 variants
    # must be an error, not 4 GB of combinations and a MemoryError.
    size = math.prod(len(f) for f in factors)
    if size > MAX_VARIANTS:
        problems.add(block.mark, where, _too_many(size))
        return None
    return [sum(choice, []) for choice in itertools.product(*factors)]


def _too_many(count: int) -> str:
    return (
        f"expands into {count} variants, more than the maximum of {MAX_VARIANTS}: use a "
        "fractional design (a list of smaller blocks, or zip groups) instead of a full grid"
    )


def _axes(node: Node, where: KeyPath, base: Mapping, problems: Problems) -> list[_Axis] | None:
    """The axes of a ``key: [values]`` mapping, each checked against the base spec."""
    if not isinstance(node, Mapping) or not node.entries:
        problems.add(
            node.mark, where, f"expected a mapping of 'dotted.key: [values]', got {describe(node)}"
        )
        return None
    axes, ok = [], True
    for key, entry in node.entries.items():
        here = (*where, key)
        path = tuple(key.split("."))
        values = entry.node
        if not all(path) or path[0] in _FIXED_KEYS:
            problems.add(
                entry.key_mark,
                here,
                f"cannot sweep {key!r} (expected a dotted path to a spec value other than "
                f"{', '.join(_FIXED_KEYS)})",
            )
            ok = False
            continue
        problem = _check_path(base, path)
        if problem:
            problems.add(entry.key_mark, here, problem)
            ok = False
            continue
        if not isinstance(values, Sequence):
            problems.add(values.mark, here, f"expected a list of values, got {describe(values)}")
            ok = False
            continue
        if not values.items:
            problems.add(values.mark, here, "empty axis: expected at least one value")
            ok = False
            continue
        axes.append(_Axis(path, entry.key_mark, values.items))
    return axes if ok else None


def _check_path(tree: Node, path: tuple[str, ...]) -> str | None:
    """Why ``path`` cannot be set in ``tree`` (None: it can; missing mappings are created).

    Whether the last key is one the section accepts is the converter's question: it checks each
    variant like any spec, and reports an unknown key at the sweep's line.
    """
    node: Node | None = tree
    for depth, part in enumerate(path[:-1]):
        if node is None:  # created on the way
            continue
        if isinstance(node, Sequence):
            if ".".join(path[:depth]) != "methods":
                where = ".".join(path[:depth])
                return f"{where} is a list: only method entries can be picked by name"
            names = [_entry_name(item) for item in node.items]
            if part not in names:
                return f"no method entry named {part!r} (entries: {', '.join(map(str, names))})"
            node = node.items[names.index(part)]
        elif isinstance(node, Mapping):
            child = node.entries.get(part)
            node = None if child is None else child.node
        else:
            return f"{'.'.join(path[:depth])} is {describe(node)}, not a section with keys"
    if path[0] == "methods" and len(path) < 3:
        return "expected methods.<entry name>.<key> (a method entry's key, e.g. its params)"
    if isinstance(node, Scalar):
        return f"{'.'.join(path[:-1])} is {describe(node)}, not a section with keys"
    return None


def _entry_name(item: Node) -> Any:
    if isinstance(item, Mapping) and "name" in item.entries:
        name = item.entries["name"].node
        return name.value if isinstance(name, Scalar) else None
    return None


def _with_value(node: Node | None, path: tuple[str, ...], value: Node, key_mark: Mark) -> Node:
    """``node`` with ``value`` at ``path`` (new nodes; missing mappings are created at the axis)."""
    if not path:
        return value
    part, rest = path[0], path[1:]
    if isinstance(node, Sequence):  # methods: pick the entry by name (checked before)
        items = list(node.items)
        index = [_entry_name(item) for item in items].index(part)
        items[index] = _with_value(items[index], rest, value, key_mark)
        return Sequence(node.mark, tuple(items))
    mapping = node if isinstance(node, Mapping) else Mapping(key_mark, {})
    return _with_entry(mapping, path, value, key_mark)


def _with_entry(node: Mapping, path: tuple[str, ...], value: Node, key_mark: Mark) -> Mapping:
    """The mapping ``node`` with ``value`` at the non-empty ``path`` (see :func:`_with_value`)."""
    part, rest = path[0], path[1:]
    below = node.entries.get(part)
    entries = dict(node.entries)
    entries[part] = Entry(
        key_mark if below is None or not rest else below.key_mark,
        _with_value(None if below is None else below.node, rest, value, key_mark),
    )
    return Mapping(node.mark, entries)


def _variant_name(choice: list[tuple[_Axis, Node]], labels: dict[tuple[str, ...], str]) -> str:
    """``key=value`` per axis; axes sharing a last key and a value are written once."""
    texts: dict[str, set[str]] = {}
    for axis, value in choice:
        texts.setdefault(axis.path[-1], set()).add(_text(value))
    parts: list[str] = []
    for axis, value in choice:
        leaf = axis.path[-1]
        if len(texts[leaf]) > 1:
            parts.append(f"{labels[axis.path]}={_text(value)}")
        elif f"{leaf}={_text(value)}" not in parts:
            parts.append(f"{leaf}={_text(value)}")
    return ",".join(parts)


def _labels(paths: list[tuple[str, ...]]) -> dict[tuple[str, ...], str]:
    """Each axis's name in variant names: its last key, or its whole path when that is shared."""
    leaves = [p[-1] for p in paths]
    return {p: p[-1] if leaves.count(p[-1]) == 1 else ".".join(p) for p in paths}


def _plain(node: Node) -> Any:
    if isinstance(node, Scalar):
        return node.value if node.kind != "timestamp" else str(node.value)
    if isinstance(node, Sequence):
        return [_plain(item) for item in node.items]
    if isinstance(node, Mapping):
        return {k: _plain(e.node) for k, e in node.entries.items()}
    return None


def _text(node: Node) -> str:
    value = _plain(node)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, list):
        return "[" + ",".join(_text_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{_text_value(v)}" for k, v in value.items()) + "}"
    return str(value)


def _text_value(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
