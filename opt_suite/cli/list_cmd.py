"""``opt-suite list [--json] [--params]``: registered components and bundled specs.

Everything registered is shown, including third-party plugins; an entry point that fails to load, or
whose class cannot be instantiated (abstract members left, not a subclass of its contract), is
listed with its entry point and the reason instead of stopping the command. ``--params`` adds every
spec key each one accepts (type, range, default, doc) as a YAML template to copy. Nothing here
imports TensorFlow.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from opt_suite import registry
from opt_suite.spec import bundled_specs
from opt_suite.spec.errors import Problems
from opt_suite.spec.extends import read_spec_tree
from opt_suite.spec.reference import param_rows
from opt_suite.spec.tree import Scalar

_GROUPS = {
    "families": (registry.FAMILIES, "Task families"),
    "methods": (registry.METHODS, "Methods"),
    "learners": (registry.LEARNERS, "Test-time learners"),
    "demonstration_sources": (registry.DEMONSTRATION_SOURCES, "Demonstration sources"),
}


# Where each dataclass of a registered class goes in a spec.
SPEC_SECTIONS = {
    registry.FAMILIES: {
        "family.params": "Params",
        "tasks.vary": "Variation",
        "tasks.list[]": "TaskParams",
    },
    registry.METHODS: {"methods[].params": "Params"},
    registry.LEARNERS: {"evaluation.params": "Params"},
    registry.DEMONSTRATION_SOURCES: {"demonstrations.params": "Params"},
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the command's arguments."""
    parser.add_argument("--json", action="store_true", help="print one JSON object instead")
    parser.add_argument(
        "--params",
        action="store_true",
        help="also show every spec key each family, method and learner accepts, with defaults",
    )


def run(args: argparse.Namespace) -> int:
    """Print the listing; always 0 (broken entries are listed, not fatal)."""
    listing = collect(with_params=args.params)
    if args.json:
        json.dump(listing, sys.stdout, indent=2)
        print()
    else:
        print(render(listing), end="")
    return 0


def _first_line(text: Any, limit: int = 100) -> str:
    """The first line, cut at a word to at most ``limit`` characters (a folded paragraph is one)."""
    lines = str(text or "").strip().splitlines()
    line = lines[0].strip() if lines else ""
    if len(line) <= limit:
        return line
    return line[: limit - 3].rsplit(" ", 1)[0].rstrip(",;:") + "..."


def describe_entry(group: str, name: str, with_params: bool = False) -> dict[str, Any]:
    """What ``list`` shows about one registered name (``error`` is None when it loads)."""
    entry: dict[str, Any] = {"name": name}
    try:
        # The registry refuses a class that breaks its contract (import error, not a subclass of
        # the group's base class, abstract members left), so the attributes below exist.
        cls = registry.load(group, name)
        entry["description"] = _first_line(cls.description or cls.__doc__)
        if group == registry.FAMILIES:
            entry["env_id"] = cls.env_id
        if group == registry.METHODS:
            entry.update(_reads_at_defaults(cls))
    except Exception as exc:  # RegistryError, or a class attribute the plugin left out
        message = str(exc) if isinstance(exc, registry.RegistryError) else f"{exc!r}"
        return {"name": name, "description": "", "error": message}
    if with_params:
        entry["params"] = _params(cls, SPEC_SECTIONS[group])
    return {**entry, "error": None}


def _reads_at_defaults(cls: Any) -> dict[str, bool]:
    """What a method's discovery reads at its default params (``discovery_budget``).

    Other params may read otherwise (``covering_options``' ``graph``). Empty for a plugin whose
    params have no defaults: nothing to say, and nothing wrong with it.
    """
    try:
        params = cls.Params()
    except Exception:  # noqa: BLE001 - required params: list the method all the same
        return {}
    declared = cls.discovery_budget(params)
    return {
        "uses_demonstrations": bool(declared.demonstrations),
        "uses_interaction": declared.interacts,
    }


def _params(cls: type, sections: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for section, attr in sections.items():
        try:
            out[section] = param_rows(getattr(cls, attr))
        except Exception as exc:  # a plugin without that dataclass, or with odd annotations
            out[section] = f"cannot be described: {exc!r}"
    return out


def describe_spec(path: Any) -> dict[str, Any]:
    """Name and first description line of a bundled spec (read, not validated: that is fast)."""
    problems = Problems()
    tree = read_spec_tree(path, problems)
    values = {}
    for key in ("name", "description"):
        entry = tree.entries.get(key) if tree is not None else None
        if entry is not None and isinstance(entry.node, Scalar):
            values[key] = entry.node.value
    return {
        "name": str(values.get("name", path.stem)),
        "file": str(path),
        "description": _first_line(values.get("description")),
        "error": problems.lines()[0] if len(problems) else None,
    }


def collect(with_params: bool = False) -> dict[str, list[dict[str, Any]]]:
    """The whole listing as plain data (what ``--json`` prints)."""
    listing = {
        key: [describe_entry(group, name, with_params) for name in registry.names(group)]
        for key, (group, _) in _GROUPS.items()
    }
    listing["specs"] = [describe_spec(path) for path in bundled_specs()]
    return listing


def _learns_from(entry: dict[str, Any]) -> str:
    sources = [
        word
        for word, used in (
            ("demonstrations", entry.get("uses_demonstrations")),
            ("interaction", entry.get("uses_interaction")),
        )
        if used
    ]
    return " + ".join(sources) or "-"


def _table(title: str, header: list[str], rows: list[list[str]], notes: list[list[str]]) -> str:
    """Aligned columns; ``notes[i]`` are extra lines printed under row i."""
    if not rows:
        return f"{title}\n  (none)\n\n"
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]
    lines = [title]
    for row, extra in zip([header, *rows], [[], *notes], strict=True):
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        lines.append(("  " + "  ".join([*cells, row[-1]])).rstrip())
        lines.extend(extra)
    return "\n".join(lines) + "\n\n"


def _param_lines(entry: dict[str, Any]) -> list[str]:
    """``--params``: each section as a YAML template, the type, range and doc as comments."""
    lines = []
    for section, rows in entry.get("params", {}).items():
        if isinstance(rows, str):
            lines.append(f"      {section}: {rows}")
            continue
        lines.append(f"      {section}:" + ("" if rows else " {}   # no parameters"))
        keys = [
            f"{r['key']}: {r['default'] if r['default'] is not None else '(required)'}"
            for r in rows
        ]
        width = max((len(k) for k in keys), default=0)
        for key, row in zip(keys, rows, strict=True):
            kind = row["type"] + (f", {row['range']}" if row["range"] else "")
            doc = f" - {row['doc']}" if row["doc"] else ""
            lines.append(f"        {key.ljust(width)}  # {kind}{doc}")
    return lines


def render(listing: dict[str, list[dict[str, Any]]]) -> str:
    """The listing as aligned text tables."""

    def about(entry: dict[str, Any]) -> str:
        return f"ERROR: {entry['error']}" if entry.get("error") else entry["description"]

    families, methods, learners = listing["families"], listing["methods"], listing["learners"]
    out = _table(
        _GROUPS["families"][1],
        ["NAME", "GYMNASIUM ID", "DESCRIPTION"],
        [[e["name"], e.get("env_id", ""), about(e)] for e in families],
        [_param_lines(e) for e in families],
    )
    out += _table(
        _GROUPS["methods"][1],
        ["NAME", "LEARNS FROM", "DESCRIPTION"],
        [[e["name"], _learns_from(e), about(e)] for e in methods],
        [_param_lines(e) for e in methods],
    )
    out += _table(
        _GROUPS["learners"][1],
        ["NAME", "DESCRIPTION"],
        [[e["name"], about(e)] for e in learners],
        [_param_lines(e) for e in learners],
    )
    sources = listing["demonstration_sources"]
    out += _table(
        _GROUPS["demonstration_sources"][1],
        ["NAME", "DESCRIPTION"],
        [[e["name"], about(e)] for e in sources],
        [_param_lines(e) for e in sources],
    )
    out += _table(
        "Bundled specs (opt-suite validate NAME / opt-suite run NAME)",
        ["NAME", "DESCRIPTION"],
        [[e["name"], about(e)] for e in listing["specs"]],
        [[] for _ in listing["specs"]],
    )
    return out
