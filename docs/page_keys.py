"""Keys into the committed data beside a results page, and the numbers they name.

A key is ``FILE:/path`` (docs/results-and-gate.md, "Numbers on a results page"): FILE relative
to the page's folder, read by :func:`load` (JSON, YAML, CSV rows, a Markdown file's tables by
heading, a text file's lines by first word); the path a JSON pointer whose steps may select
(``[field=value]``) or fan out (``*``, ``*[field=value]``); ``;reducer`` and ``;per=N`` turn
what it reaches into one number (``;count<``, ``;where<`` and ``;per=`` may name a second pointer
into the same file: a comparison of two arrays, a ratio). :func:`rounds_to` says whether that
number is what a page printed. :mod:`page_numbers` finds the page's numbers and their keys.
"""

from __future__ import annotations

import csv
import io
import json
import operator
import re
from functools import cache
from pathlib import Path
from urllib.parse import unquote

import yaml

__all__ = [
    "COMPARISONS",
    "NUMBER",
    "REDUCERS",
    "cells",
    "compares",
    "markdown_tables",
    "plain",
    "resolve",
    "rounds_to",
]

#: A number as a page prints it: optional minus, thousands commas, decimals, percent. A size
#: written with its dimensions (13x13, 7×7×3) or a digit inside a name (keep-3) is a name.
NUMBER = re.compile(
    r"(?<![\w.×])(?<![A-Za-z]-)-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?%?(?![\w.×]?\d)"
)


def plain(text: str) -> str:
    """``text`` with the typographic minus and dashes as ASCII (same length: offsets hold)."""
    return text.replace("\u2212", "-").replace("\u2013", " ").replace("\u2014", " ")


def rounds_to(value: float, printed: str) -> bool:
    """Whether ``value`` shown at ``printed``'s digits is ``printed`` (a percentage: or x 100)."""
    core = printed.rstrip("%").replace(",", "")
    digits = len(core.split(".")[1]) if "." in core else 0
    for scaled in (value, value * 100) if printed.endswith("%") else (value,):
        shown = f"{scaled:.{digits}f}"
        if shown == core or (shown.lstrip("-") == core.lstrip("-") and float(core) == 0):
            return True
    return False


@cache
def _load(path: Path) -> object:
    text = path.read_text()
    if path.suffix == ".json":
        return json.loads(text)
    if path.suffix in (".yaml", ".yml"):
        return yaml.safe_load(text)
    if path.suffix == ".csv":
        return list(csv.DictReader(io.StringIO(text)))
    if path.suffix == ".md":
        return markdown_tables(text)
    if path.suffix == ".txt":  # a printed table: each line by its first word, read with ;nth=N
        return {line.split()[0]: line for line in text.splitlines() if line.strip()}
    raise ValueError(f"{path.name}: a key's file is JSON, CSV, YAML, Markdown or text")


def markdown_tables(text: str) -> dict[str, list[dict[str, str]]]:
    """A Markdown file's table rows by the heading above them: each row a dict of header: cell.

    The first cell is also under ``row`` (a table's first header is often empty), so a key reads
    ``option_usage.md:/offline-options/[row=decisions%20per%20episode]/all%20episodes``.
    """
    tables: dict[str, list[dict[str, str]]] = {}
    heading = ""
    header: list[str] = []
    for line in plain(text).splitlines():
        if line.startswith("#"):
            heading, header = line.lstrip("#").strip(), []
        elif not line.startswith("|"):
            header = []
        elif not header:
            header = cells(line)
        elif not set(line) <= set("|-: "):
            found = cells(line)
            row = dict(zip(header, found, strict=False))  # a short row leaves cells out
            tables.setdefault(heading, []).append({"row": found[0], **row})
    return tables


def _conditions(step: str) -> list[list[str]]:
    """``[a=1&b=x]`` as [[a, 1], [b, x]]."""
    select = re.fullmatch(r"\[(.+)\]", step)
    if select is None or any("=" not in c for c in select.group(1).split("&")):
        raise KeyError(f"{step}: a selector is [field=value], several joined by &")
    return [c.split("=", 1) for c in select.group(1).split("&")]


def _matches(item: dict, wanted: list[list[str]]) -> bool:
    return all(str(item.get(field)) == value for field, value in wanted)


def _step(node: object, step: str) -> object:
    select = re.fullmatch(r"\[(.+)\]", step)
    if select is not None:
        if not isinstance(node, list):
            raise KeyError(f"{step}: selects from a list, found {type(node).__name__}")
        wanted = _conditions(step)
        hits = [item for item in node if isinstance(item, dict) and _matches(item, wanted)]
        if len(hits) != 1:
            raise KeyError(f"{step}: {len(hits)} items match, expected exactly 1")
        return hits[0]
    if isinstance(node, list):
        return node[int(step)]
    if isinstance(node, dict):
        if step not in node:
            raise KeyError(f"{step}: no such key (keys: {', '.join(map(str, node))[:120]})")
        return node[step]
    raise KeyError(f"{step}: {type(node).__name__} has no steps")


def _walk(node: object, steps: list[str]) -> list[object]:
    """The nodes ``steps`` lead to from ``node`` (``*`` fans out over a list's or map's items)."""
    if not steps:
        return [node]
    # RFC 6901: ~1 is /, ~0 is ~; in a URI fragment %20 is a space (a marker's keys are words)
    step, rest = unquote(steps[0].replace("~1", "/").replace("~0", "~")), steps[1:]
    if step.startswith("*"):
        items = list(node.values()) if isinstance(node, dict) else node
        if not isinstance(items, list):
            raise KeyError(f"*: fans out over a list or map, found {type(node).__name__}")
        if step != "*":  # *[field=value]: only the items that match
            wanted = _conditions(step[1:])
            items = [i for i in items if isinstance(i, dict) and _matches(i, wanted)]
        return [leaf for item in items for leaf in _walk(item, rest)]
    return _walk(_step(node, step), rest)


def _number(node: object, key: str) -> float:
    if isinstance(node, bool) or not isinstance(node, int | float | str):
        raise KeyError(f"{key}: names a {type(node).__name__}, not a number")
    try:
        return float(str(node).replace(",", "").rstrip("%"))
    except ValueError:
        raise KeyError(f"{key}: {node!r} is not one number (;nth=N reads one of a text)") from None


#: What a ``;`` after a key does with the values its ``*`` steps fan out to. ``count``
#: and ``where`` take a comparison (:data:`COMPARISONS`) with a number or a second pointer.
REDUCERS = ("len", "sum", "mean", "min", "max", "count=", "count<", "where<", "nth=")

#: ``;count`` and ``;where``'s comparisons; :data:`_COMPARED` tries ``<=`` before ``<`` (so
#: ``<=3`` is no ``<`` with ``=3``).
COMPARISONS = {
    "<=": operator.le,
    ">=": operator.ge,
    "<": operator.lt,
    ">": operator.gt,
    "=": operator.eq,
}
_COMPARED = re.compile(r"(count|where)(<=|>=|<|>|=)(.+)")


def resolve(folder: Path, key: str) -> float:
    """The number ``key`` (``FILE:/path``, optionally ``;reducer``) names beside a page.

    A reducer turns the values of a key with ``*`` steps into one number: ``;len`` (how many),
    ``;sum``, ``;mean``, ``;min``, ``;max``, ``;count=V`` (how many equal V) — a step ``*``
    fans out over all items, ``*[field=value]`` over those that match; ``;nth=N`` reads
    the N-th number (from 0) of a sentence the data stores, such as a leaderboard's warning. A
    last ``;per=N`` divides (``;per=60``: seconds printed as minutes); ``;per=/pointer`` divides
    by the one value that pointer names in the same file (a cost as a multiple of another's).

    ``;count`` and ``;where`` compare each value with ``=``, ``<``, ``<=``, ``>`` or ``>=``:
    with a number (``;count<0``), or, when what follows starts with ``/``, with the value in
    the same place of a second pointer into the same file, fanned out alike
    (``expert/*/*;count</random/*/*``: on how many (seed, task) pairs the expert scores
    below random). ``;count`` says how many values compare so, ``;where`` where the one value
    that does is: its position (from 0) among the values the key fans out to.
    """
    if key.startswith("="):
        return float(key[1:])  # a definition the page states (0 = random), not a measurement
    key, _, reducer = key.partition(";")
    reducer, _, per = reducer.partition(";per=")
    if reducer.startswith("per="):
        reducer, per = "", reducer[4:]
    value = _reduce(key, reducer, folder)
    if per.startswith("/"):  # ;per=/pointer: a ratio of two values of the same file
        return value / _reduce(f"{key.partition(':')[0]}:{per}", "", folder)
    return value / float(per) if per else value  # ;per=60: seconds shown as minutes


def _reduce(key: str, reducer: str, folder: Path) -> float:
    """The value of ``key`` (fanned out by ``*`` and reduced by ``reducer``, if any)."""
    name, _, pointer = key.partition(":")
    path = (folder / name).resolve()
    if not name or not path.is_file():
        raise KeyError(f"{name or key}: no such file beside the page")
    steps = pointer.strip("/").split("/") if pointer.strip("/") else []
    nodes = _walk(_load(path), steps)
    compared = _COMPARED.fullmatch(reducer)
    # ;count=V keeps its older sense below: a value equal to V as text or as a number
    equal_to_text = reducer.startswith("count=") and not reducer.startswith("count=/")
    if compared is not None and not equal_to_text:
        kind, sign, against = compared.groups()
        if against.startswith("/"):  # a second pointer into the same file, fanned out alike
            other = _walk(_load(path), against.strip("/").split("/"))
            paired: list[float] | float = [_number(n, against) for n in other]
        else:
            paired = _number(against, f"{key};{reducer}")
        holds = compares([_number(n, key) for n in nodes], sign, paired)
        return float(sum(holds)) if kind == "count" else float(_the_one(holds, key, reducer))
    if not reducer:
        if len(nodes) != 1:
            raise KeyError(f"{key}: {len(nodes)} values; a * needs a ;reducer ({REDUCERS})")
        return _number(nodes[0], key)
    if reducer == "len":
        return float(len(nodes))
    if reducer.startswith("nth=") and len(nodes) == 1 and isinstance(nodes[0], str):
        found = NUMBER.findall(plain(nodes[0]))  # a number inside a sentence, e.g. a warning
        return _number(found[int(reducer[4:])].rstrip("%"), key)
    if reducer.startswith("count="):
        return float(sum(str(n) == reducer[6:] or _same(n, reducer[6:]) for n in nodes))
    values = [_number(n, key) for n in nodes]
    if not values:
        raise KeyError(f"{key}: no values to reduce")
    if reducer in ("sum", "mean", "min", "max"):
        total = sum(values)
        return {"sum": total, "mean": total / len(values), "min": min(values), "max": max(values)}[
            reducer
        ]
    raise KeyError(f";{reducer}: not a reducer (one of {', '.join(REDUCERS)})")


def compares(values: list[float], sign: str, against: list[float] | float) -> list[bool]:
    """Whether each value compares by ``sign`` with ``against`` (one number, or one per value).

    Raises:
        KeyError: ``against`` is a list of another length (the two pointers fan out unalike).
    """
    if isinstance(against, list) and len(against) != len(values):
        raise KeyError(f"{sign}: {len(values)} values against {len(against)}; they pair in order")
    others = against if isinstance(against, list) else [against] * len(values)
    return [COMPARISONS[sign](a, b) for a, b in zip(values, others, strict=True)]


def _the_one(holds: list[bool], key: str, reducer: str) -> int:
    """The position of the one True in ``holds`` (``;where``: exactly one value compares so)."""
    where = [i for i, held in enumerate(holds) if held]
    if len(where) != 1:
        raise KeyError(f"{key};{reducer}: {len(where)} values compare so, expected exactly 1")
    return where[0]


def _same(node: object, text: str) -> bool:
    try:
        return not isinstance(node, bool) and float(str(node)) == float(text)
    except ValueError:
        return False


def cells(line: str) -> list[str]:
    """A Markdown table row's cells, stripped."""
    return [c.strip() for c in line.strip().strip("|").split("|")]
