"""``extends: base.yaml``: a spec inherits another spec's values and overrides some of them.

The parent path is resolved against the folder of the file that names it; a bare name with no such
file there (``extends: fourrooms-quick``) names a bundled spec. Parents may extend further files,
and a cycle is reported with the whole chain. Merging is deep for mappings (a child can change one
parameter of ``family.params``) and whole for lists and scalars (a child's ``methods`` list
replaces the parent's); of two alternative keys (``evaluation.frames`` replaces
``evaluation.episodes``) the one a child writes drops the one it inherits. Instead of replacing
the inherited methods, a child can edit them by their entry ``name``: ``methods-: [name, ...]``
drops entries, then ``methods+: [entry, ...]`` appends entries (written like ``methods`` items).
Every value keeps the mark of the file it was written in, so a problem in a parent file points at
the parent file's line (after the name of the file being validated, see ``Problems.root``).

When the parent cannot be read, the child is not checked further: its missing sections would only
be consequences, so the one problem reported is the cause.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import typing
from pathlib import Path

from opt_suite.registry import suggest
from opt_suite.spec.bundled import bundled_specs
from opt_suite.spec.errors import Problems
from opt_suite.spec.tree import Broken, Entry, Mapping, Node, Scalar, Sequence, describe
from opt_suite.spec.yaml_loader import parse_document, read_document

__all__ = ["EXTENDS_KEY", "read_spec_tree", "parse_spec_tree", "deep_merge"]

EXTENDS_KEY = "extends"
# Lists a child can edit by key instead of replacing: list key -> the key naming each item.
EDITABLE_LISTS = {"methods": "name"}
ADD, REMOVE = "+", "-"
MAX_EXTENDS = 32  # files in one chain of extends: a bound on the total bytes read per spec


def read_spec_tree(path: Path, problems: Problems) -> Mapping | None:
    """The located tree of the spec at ``path``, every ``extends`` merged in; None on failure."""
    path = Path(path)
    return _with_parents(read_document(path, problems), path, problems, chain=())


def parse_spec_tree(text: str, source: str, problems: Problems) -> Mapping | None:
    """Like :func:`read_spec_tree` for YAML text; ``extends`` is relative to ``source``'s folder."""
    return _with_parents(parse_document(text, source, problems), Path(source), problems, chain=())


def _with_parents(
    root: Node | None, path: Path, problems: Problems, chain: tuple[Path, ...]
) -> Mapping | None:
    if root is None:
        return None
    if not isinstance(root, Mapping):
        # A scalar's text is not quoted: a file that is not a spec (extends: ~/.netrc) may hold
        # a secret, and this line may end up in a CI log.
        got = describe(root)
        if isinstance(root, Scalar) and root.kind != "null":
            got = f"a {root.kind} (its text is not shown)"
        problems.add(root.mark, (), f"expected a mapping of spec sections, got {got}")
        return None
    entry = root.entries.get(EXTENDS_KEY)
    if entry is None:
        _no_list_edits(root, problems)
        return root
    own = Mapping(root.mark, {k: e for k, e in root.entries.items() if k != EXTENDS_KEY})
    parent_path = _parent_path(path, entry.node, problems)
    if parent_path is None:
        return None
    real = _real(parent_path)
    here = chain + (_real(path),)
    if len(here) >= MAX_EXTENDS:
        problems.add(
            entry.node.mark, (EXTENDS_KEY,), f"extends chain longer than {MAX_EXTENDS} files"
        )
        return None
    if real in here:
        cycle = " -> ".join(os.path.basename(p) for p in here[here.index(real) :] + (real,))
        problems.add(entry.node.mark, (EXTENDS_KEY,), f"extends cycle: {cycle}")
        return None
    parent_root = read_document(
        parent_path, problems, opened_from=entry.node.mark, via=(EXTENDS_KEY,)
    )
    parent = _with_parents(parent_root, parent_path, problems, here)
    if parent is None:  # the cause is reported; the child's missing sections would only follow
        return None
    return _edit_lists(_replace_alternatives(deep_merge(parent, own), own), own, problems)


def _parent_path(path: Path, node: Node, problems: Problems) -> Path | None:
    if isinstance(node, Broken):  # already reported
        return None
    if not (isinstance(node, Scalar) and node.kind == "str" and node.value.strip()):
        problems.add(
            node.mark,
            (EXTENDS_KEY,),
            f"expected the path of a spec file or a bundled spec's name (str), got "
            f"{describe(node)}",
        )
        return None
    written = node.value.strip()
    local = Path(os.path.normpath(path.parent / written))
    if local.exists() or os.sep in written or "/" in written:
        return local
    bundled = {p.stem: p for p in bundled_specs()}
    name = written.removesuffix(".yaml").removesuffix(".yml")
    if name in bundled:
        return bundled[name]
    if written == name:  # a bare name: neither a file here nor a bundled spec
        known = ", ".join(sorted(bundled)) or "none"
        problems.add(
            node.mark,
            (EXTENDS_KEY,),
            f"no such file {str(local)!r} and no bundled spec named {name!r}"
            f"{suggest(name, list(bundled))} (bundled: {known})",
        )
        return None
    return local  # a file name: reading it reports the missing file


def _edit_key(name: str) -> tuple[str, str] | None:
    """``("methods", "+")`` for ``methods+``; None for an ordinary key."""
    if name[-1:] in (ADD, REMOVE) and name[:-1] in EDITABLE_LISTS:
        return name[:-1], name[-1]
    return None


def _no_list_edits(root: Mapping, problems: Problems) -> None:
    for key, entry in root.entries.items():
        if _edit_key(key):
            problems.add(
                entry.key_mark,
                (key,),
                f"{key} edits an inherited list: it needs 'extends' (write the whole "
                f"{key[:-1]} list here instead)",
            )


def _edit_lists(merged: Mapping, own: Mapping, problems: Problems) -> Mapping:
    """Apply the child's ``methods-`` (drop by name) then ``methods+`` (append) to the parent's."""
    entries = {k: e for k, e in merged.entries.items() if not _edit_key(k)}
    edits: dict[str, dict[str, Entry]] = {}
    for key, entry in own.entries.items():
        parsed = _edit_key(key)
        if parsed:
            edits.setdefault(parsed[0], {})[parsed[1]] = entry
    for list_key, ops in edits.items():
        first = next(iter(ops.values()))
        if list_key in own.entries:
            problems.add(
                first.key_mark,
                (list_key + next(iter(ops)),),
                f"give either {list_key} (replacing the inherited list) or {list_key}+ / "
                f"{list_key}- (editing it), not both",
            )
            continue
        inherited = entries.get(list_key)
        if inherited is None or not isinstance(inherited.node, Sequence):
            problems.add(
                first.key_mark,
                (list_key + next(iter(ops)),),
                f"the parent spec has no {list_key} list to edit",
            )
            continue
        items = _remove(inherited.node.items, ops.get(REMOVE), list_key, problems)
        items += _added(ops.get(ADD), list_key, problems)
        entries[list_key] = Entry(inherited.key_mark, Sequence(inherited.node.mark, items))
    return Mapping(merged.mark, entries)


def _item_name(item: Node, list_key: str) -> str | None:
    if isinstance(item, Mapping):
        named = item.entries.get(EDITABLE_LISTS[list_key])
        if named is not None and isinstance(named.node, Scalar):
            return str(named.node.value)
    return None


def _remove(
    items: tuple[Node, ...], entry: Entry | None, list_key: str, problems: Problems
) -> tuple[Node, ...]:
    if entry is None:
        return items
    key = f"{list_key}{REMOVE}"
    if not isinstance(entry.node, Sequence):
        problems.add(
            entry.node.mark,
            (key,),
            f"expected a list of {list_key} entry names, got {describe(entry.node)}",
        )
        return items
    present = [_item_name(item, list_key) for item in items]
    drop = set()
    for index, node in enumerate(entry.node.items):
        if not (isinstance(node, Scalar) and node.kind == "str"):
            problems.add(node.mark, (key, index), f"expected an entry name, got {describe(node)}")
        elif node.value not in present:
            known = ", ".join(repr(n) for n in present if n is not None) or "none"
            hint = suggest(node.value, [n for n in present if n is not None])
            problems.add(
                node.mark,
                (key, index),
                f"no inherited {list_key} entry is named {node.value!r}{hint} (inherited: {known})",
            )
        else:
            drop.add(node.value)
    return tuple(item for item, name in zip(items, present, strict=True) if name not in drop)


def _added(entry: Entry | None, list_key: str, problems: Problems) -> tuple[Node, ...]:
    if entry is None:
        return ()
    if not isinstance(entry.node, Sequence):
        problems.add(
            entry.node.mark,
            (f"{list_key}{ADD}",),
            f"expected a list of {list_key} entries, got {describe(entry.node)}",
        )
        return ()
    return entry.node.items


@functools.cache
def _alternatives() -> dict[str, tuple[tuple[str, str], ...]]:
    """Per spec section, its alternative keys: ``{"evaluation": (("frames", "episodes"),)}``.

    Read from the schema's ``param(replaces=...)`` declarations, so a new alternative is inherited
    the same way without a change here.
    """
    from opt_suite.spec.schema import Spec

    hints = typing.get_type_hints(Spec)
    out = {}
    for field in dataclasses.fields(Spec):
        section = hints[field.name]
        if dataclasses.is_dataclass(section):
            pairs = tuple(
                (f.name, f.metadata["replaces"])
                for f in dataclasses.fields(section)
                if f.metadata.get("replaces")
            )
            if pairs:
                out[field.name] = pairs
    return out


def _replace_alternatives(merged: Mapping, own: Mapping) -> Mapping:
    """A child that writes one of two alternative keys drops the other one it inherits.

    ``evaluation.frames`` stands in for ``evaluation.episodes``: a child of a spec with an episode
    budget that writes ``frames`` switches the budget to frames (and back), instead of inheriting
    both — which the rules refuse. A child that writes both keeps both (and is refused).
    """
    entries = dict(merged.entries)
    for section, pairs in _alternatives().items():
        mine, merged_section = own.entries.get(section), entries.get(section)
        if not (
            mine is not None
            and merged_section is not None
            and isinstance(mine.node, Mapping)
            and isinstance(merged_section.node, Mapping)
        ):
            continue
        written = mine.node.entries
        drop = set()
        for one, other in pairs:
            for key, inherited in ((one, other), (other, one)):
                if key in written and not _is_null(written[key].node) and inherited not in written:
                    drop.add(inherited)
        if drop:
            node = merged_section.node
            kept = {k: e for k, e in node.entries.items() if k not in drop}
            entries[section] = Entry(merged_section.key_mark, Mapping(node.mark, kept))
    return Mapping(merged.mark, entries)


def _is_null(node: Node) -> bool:
    return isinstance(node, Scalar) and node.kind == "null"


def _real(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:  # e.g. a symlink loop: compare the path as written
        return path.absolute()


def deep_merge(base: Mapping, override: Mapping) -> Mapping:
    """``override`` on top of ``base``: mappings merge key by key, anything else is replaced."""
    entries: dict[str, Entry] = dict(base.entries)
    for key, entry in override.entries.items():
        below = entries.get(key)
        if (
            below is not None
            and isinstance(below.node, Mapping)
            and isinstance(entry.node, Mapping)
        ):
            entry = Entry(entry.key_mark, deep_merge(below.node, entry.node))
        entries[key] = entry
    return Mapping(override.mark, entries)
