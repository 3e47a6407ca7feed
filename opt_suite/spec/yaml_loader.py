"""Reading one YAML file into a located tree, safely.

Safety: the document is only *composed* into YAML nodes by ``yaml.SafeLoader``; no Python object is
ever constructed from a tag. The scalar tags of plain YAML (null, bool, int, float, str, timestamp)
are converted with the safe constructor; any other tag (``!!python/object:…``, ``!custom``) is a
problem, never executed. Aliases are expanded into the tree, so the expanded size is bounded first
(a "billion laughs" document composes small but expands exponentially) and self-containing aliases
are rejected. Merge keys (``<<: *defaults``) are supported; duplicate keys are not.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from opt_suite.files_guard import read_regular
from opt_suite.spec.errors import KeyPath, Mark, Problems
from opt_suite.spec.tree import Broken, Entry, Mapping, Node, Scalar, Sequence, describe

__all__ = ["MAX_BYTES", "MAX_NODES", "MAX_DEPTH", "read_document", "parse_document"]

MAX_BYTES = 1 << 20  # a spec is a few kilobytes; anything this big is a mistake
MAX_NODES = 100_000  # after alias expansion
MAX_DEPTH = 64  # nesting levels

_YAML = "tag:yaml.org,2002:"
_MAP, _SEQ, _MERGE = _YAML + "map", _YAML + "seq", _YAML + "merge"
# The only scalar tags we accept, and the safe constructor method that reads each.
_SCALARS = {
    _YAML + "null": ("null", "construct_yaml_null"),
    _YAML + "bool": ("bool", "construct_yaml_bool"),
    _YAML + "int": ("int", "construct_yaml_int"),
    _YAML + "float": ("float", "construct_yaml_float"),
    _YAML + "str": ("str", "construct_yaml_str"),
    _YAML + "timestamp": ("timestamp", "construct_yaml_timestamp"),
}


def _short_tag(tag: str) -> str:
    return "!!" + tag[len(_YAML) :] if tag.startswith(_YAML) else tag


def _mark(file: str, yaml_mark: yaml.Mark | None) -> Mark:
    if yaml_mark is None:
        return Mark(file, 1, 1)
    return Mark(file, yaml_mark.line + 1, yaml_mark.column + 1)


def read_document(
    path: Path, problems: Problems, *, opened_from: Mark | None = None, via: KeyPath = ()
) -> Node | None:
    """Read and parse ``path``; problems opening it are reported at ``opened_from`` (or its 1:1)."""
    file = str(path)
    where = opened_from or Mark(file, 1, 1)
    try:
        if path.is_dir():
            problems.add(where, via, f"{file!r} is a directory (expected a YAML file)")
            return None
        data = _read_regular_file(path)
        if data is None:
            problems.add(
                where,
                via,
                f"{file!r} is not a regular file (a device, FIFO or socket; expected a YAML file)",
            )
            return None
        if len(data) > MAX_BYTES:
            problems.add(where, via, f"file is too large (expected at most {MAX_BYTES} bytes)")
            return None
    except FileNotFoundError:
        problems.add(where, via, f"no such file {file!r}")
        return None
    except OSError as exc:
        problems.add(where, via, f"cannot read {file!r}: {exc.strerror or exc}")
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        col = len(data[line_start : exc.start].decode("utf-8", errors="replace")) + 1
        problems.add(
            Mark(file, line, col),
            (),
            f"file is not valid UTF-8 (expected UTF-8 text, got byte 0x{data[exc.start]:02x})",
        )
        return None
    return parse_document(text.removeprefix("\ufeff"), file, problems)


def _read_regular_file(path: Path) -> bytes | None:
    """At most ``MAX_BYTES + 1`` bytes of ``path``, or None when it is not a regular file."""
    return read_regular(path, MAX_BYTES)


def parse_document(text: str, file: str, problems: Problems) -> Node | None:
    """Parse YAML ``text`` (named ``file`` in problems) into a located tree; None on failure."""
    loader = None
    try:
        loader = yaml.SafeLoader(text)  # checks for unprintable characters first
        root = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        message = exc.problem or str(exc)
        if exc.context:
            line = f" at line {exc.context_mark.line + 1}" if exc.context_mark else ""
            message = f"{exc.context}{line}, {message}"
        problems.add(
            _mark(file, exc.problem_mark or exc.context_mark), (), f"invalid YAML: {message}"
        )
        return None
    except yaml.reader.ReaderError as exc:
        row = text.count("\n", 0, exc.position) + 1
        col = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        problems.add(
            Mark(file, row, col),
            (),
            f"invalid YAML: special characters are not allowed (got #x{exc.character:04x})",
        )
        return None
    except yaml.YAMLError as exc:
        problems.add(Mark(file, 1, 1), (), f"invalid YAML: {exc}")
        return None
    except RecursionError:
        problems.add(
            Mark(file, 1, 1), (), f"nested too deeply (expected at most {MAX_DEPTH} levels)"
        )
        return None
    finally:
        if loader is not None:
            loader.dispose()
    if root is None or (
        isinstance(root, yaml.ScalarNode) and root.tag == _YAML + "null" and not root.value
    ):
        problems.add(Mark(file, 1, 1), (), "file is empty (expected a mapping of spec sections)")
        return None
    try:
        size = _expanded_size(root, {}, set())
    except _SelfContaining as exc:
        problems.add(
            _mark(file, exc.node.start_mark), (), "an alias refers to a node that contains it"
        )
        return None
    if size > MAX_NODES:
        problems.add(
            _mark(file, root.start_mark),
            (),
            f"aliases expand the document too much "
            f"(expected at most {MAX_NODES} values, got {size})",
        )
        return None
    return _Builder(loader, file, problems).build(root, (), 0)


class _SelfContaining(Exception):
    def __init__(self, node: yaml.Node) -> None:
        self.node = node


def _expanded_size(node: yaml.Node, memo: dict[int, int], active: set[int]) -> int:
    """Number of values once every alias is expanded (the node graph is a DAG; memoised)."""
    key = id(node)
    if key in memo:
        return memo[key]
    if key in active:
        raise _SelfContaining(node)
    active.add(key)
    size = 1
    if isinstance(node, yaml.SequenceNode):
        size += sum(_expanded_size(child, memo, active) for child in node.value)
    elif isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            size += _expanded_size(k, memo, active) + _expanded_size(v, memo, active)
    active.discard(key)
    memo[key] = size
    return size


class _Builder:
    """Turns composed YAML nodes into the located tree, reporting problems as it goes."""

    def __init__(self, loader: yaml.SafeLoader, file: str, problems: Problems) -> None:
        self.loader = loader
        self.file = file
        self.problems = problems

    def build(self, node: yaml.Node, path: KeyPath, depth: int) -> Node:
        mark = _mark(self.file, node.start_mark)
        if depth > MAX_DEPTH:
            self.problems.add(
                mark, path, f"nested too deeply (expected at most {MAX_DEPTH} levels)"
            )
            return Broken(mark)
        if isinstance(node, yaml.ScalarNode):
            return self._scalar(node, path, mark)
        if isinstance(node, yaml.SequenceNode) and node.tag == _SEQ:
            return Sequence(
                mark, tuple(self.build(c, path + (i,), depth + 1) for i, c in enumerate(node.value))
            )
        if isinstance(node, yaml.MappingNode) and node.tag == _MAP:
            return self._mapping(node, path, mark, depth)
        return self._unsupported(node, path, mark)

    def _unsupported(self, node: yaml.Node, path: KeyPath, mark: Mark) -> Broken:
        self.problems.add(
            mark,
            path,
            f"unsupported YAML tag {_short_tag(node.tag)!r} "
            "(expected plain YAML values; tags are never executed)",
        )
        return Broken(mark)

    def _scalar(self, node: yaml.ScalarNode, path: KeyPath, mark: Mark) -> Node:
        if node.tag not in _SCALARS:
            return self._unsupported(node, path, mark)
        kind, method = _SCALARS[node.tag]
        try:
            value = getattr(self.loader, method)(node)
        except (ValueError, TypeError, yaml.YAMLError):
            self.problems.add(mark, path, f"cannot read {node.value!r} as {_short_tag(node.tag)}")
            return Broken(mark)
        return Scalar(mark, value, kind, plain=node.style is None)

    def _mapping(self, node: yaml.MappingNode, path: KeyPath, mark: Mark, depth: int) -> Node:
        entries: dict[str, Entry] = {}
        merged: list[Mapping] = []
        for key_node, value_node in node.value:
            key_mark = _mark(self.file, key_node.start_mark)
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag == _MERGE:
                merged.extend(self._merge_sources(value_node, path, depth))
                continue
            key = self._key(key_node, path, key_mark)
            if key is None:
                continue
            if key in entries:
                first = entries[key].key_mark
                self.problems.add(
                    key_mark, path + (key,), f"duplicate key (first written at line {first.line})"
                )
                continue
            entries[key] = Entry(key_mark, self.build(value_node, path + (key,), depth + 1))
        # YAML merge keys: written keys win, then earlier merged mappings over later ones.
        for source in merged:
            for key, entry in source.entries.items():
                entries.setdefault(key, entry)
        return Mapping(mark, entries)

    def _key(self, key_node: yaml.Node, path: KeyPath, key_mark: Mark) -> str | None:
        if isinstance(key_node, yaml.ScalarNode):
            if key_node.tag == _YAML + "str":
                return key_node.value
            got = self._scalar(key_node, path, key_mark)
            if isinstance(got, Broken):
                return None
            what = describe(got)
        else:
            what = "a list" if isinstance(key_node, yaml.SequenceNode) else "a mapping"
        self.problems.add(key_mark, path, f"keys must be text (expected str, got {what})")
        return None

    def _merge_sources(self, value: yaml.Node, path: KeyPath, depth: int) -> list[Mapping]:
        sources = value.value if isinstance(value, yaml.SequenceNode) else [value]
        out = []
        for source in sources:
            built = self.build(source, path, depth + 1)
            if isinstance(built, Mapping):
                out.append(built)
            elif not isinstance(built, Broken):
                self.problems.add(
                    built.mark, path, "'<<' merges mappings only (expected a mapping)"
                )
        return out
