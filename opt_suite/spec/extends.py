"""``extends: base.yaml``: a spec inherits another spec's values and overrides some of them.

The parent path is resolved against the folder of the file that names it, parents may extend
further files, and a cycle is reported with the whole chain. Merging is deep for mappings (a child
can change one parameter of ``family.params``) and whole for lists and scalars (a child's
``methods`` list replaces the parent's). Every value keeps the mark of the file it was written in,
so a problem in a parent file points at the parent file's line.
"""

from __future__ import annotations

import os
from pathlib import Path

from opt_suite.spec.errors import Problems
from opt_suite.spec.tree import Broken, Entry, Mapping, Node, Scalar, describe
from opt_suite.spec.yaml_loader import parse_document, read_document

__all__ = ["EXTENDS_KEY", "read_spec_tree", "parse_spec_tree", "deep_merge"]

EXTENDS_KEY = "extends"
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
        problems.add(root.mark, (), f"expected a mapping of spec sections, got {describe(root)}")
        return None
    entry = root.entries.get(EXTENDS_KEY)
    if entry is None:
        return root
    own = Mapping(root.mark, {k: e for k, e in root.entries.items() if k != EXTENDS_KEY})
    parent_path = _parent_path(path, entry.node, problems)
    if parent_path is None:
        return own
    real = _real(parent_path)
    here = chain + (_real(path),)
    if len(here) >= MAX_EXTENDS:
        problems.add(
            entry.node.mark, (EXTENDS_KEY,), f"extends chain longer than {MAX_EXTENDS} files"
        )
        return own
    if real in here:
        cycle = " -> ".join(os.path.basename(p) for p in here[here.index(real) :] + (real,))
        problems.add(entry.node.mark, (EXTENDS_KEY,), f"extends cycle: {cycle}")
        return own
    parent_root = read_document(
        parent_path, problems, opened_from=entry.node.mark, via=(EXTENDS_KEY,)
    )
    parent = _with_parents(parent_root, parent_path, problems, here)
    return own if parent is None else deep_merge(parent, own)


def _parent_path(path: Path, node: Node, problems: Problems) -> Path | None:
    if isinstance(node, Broken):  # already reported
        return None
    if not (isinstance(node, Scalar) and node.kind == "str" and node.value.strip()):
        problems.add(
            node.mark,
            (EXTENDS_KEY,),
            f"expected the path of a spec file (str), got {describe(node)}",
        )
        return None
    return Path(os.path.normpath(path.parent / node.value))


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
