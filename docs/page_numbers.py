"""Every number on a results page is checked: generated, copied from a generated table, or tied.

A results page (``docs/results/*/README.md``) states numbers three ways, and each is checked:

1. **Generated**: inside a ``<!-- NAME:begin -->`` ... ``<!-- NAME:end -->`` block that the
   folder's ``collect.py`` writes; ``tests/test_docs_results_numbers.py`` regenerates it from the
   committed data and compares byte for byte.
2. **Copied**: a table row whose first cell names a row of a table in a ``.md`` file the page
   links in its own folder (a generated table, or a run's leaderboard), and each of whose cells
   holding a digit is, verbatim, a cell of that row.
3. **Tied**: in prose, a marker ``<!-- n: KEY KEY ... -->`` right after the numbers it ties: its
   k keys tie, in order, the k numbers just before it (since the previous marker). A key names
   a value of the committed data (:mod:`page_keys`; ``<!-- n-alias: A=FILE:/path -->`` lets a
   page write ``A/rest``; ``{a,b}`` writes one key per alternative); the value, rounded to the
   digits the page prints, must be the printed number (:func:`page_keys.rounds_to`).

Numbers that name rather than measure (``issue 25``, ``Sec. 4.1``, ``(Kipf et al. 2019)``) are
not results and are left alone; every other number outside code is one of the three.
"""

from __future__ import annotations

import bisect
import csv
import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from page_keys import NUMBER, cells, plain, resolve, rounds_to

__all__ = [
    "Check",
    "NUMBER",
    "PageNumber",
    "page_checks",
    "plain",
    "resolve",
    "rounds_to",
]

MARKER = re.compile(r"<!-- n: (.*?) -->")
BLOCK = re.compile(r"<!-- (\w+):begin -->.*?<!-- \1:end -->", flags=re.DOTALL)
#: A number that names a thing (an issue, a section, a cited paper's year), not a result.
NAME = re.compile(
    r"(?:[Ii]ssues?|Secs?\.|Eqs?\.|Figs?\.|Theorems?|Appendix|Table|Algorithm|et al\.,?|\d{4};|"
    r"[Ii]tem|[Dd]eliverable|TensorFlow|gymnasium|[Pp]ython|numpy|ale-py|rliable)\s\(?$"
)

YEAR = re.compile(r"(?:19|20)\d\d")


def _blanked(text: str, pattern: str, flags: int = 0) -> str:
    """``text`` with every match of ``pattern`` blanked but its newlines (offsets hold)."""
    return re.sub(pattern, lambda m: re.sub(r"[^\n]", " ", m.group()), text, flags=flags)


def visible(text: str) -> str:
    """The page's prose and tables: code, link targets and markers blanked, offsets kept."""
    text = _blanked(plain(text), r"```.*?```", re.DOTALL)
    text = _blanked(text, r"(?<=\])\([^)]*\)")  # a link target such as lambda1=0.01/
    text = _blanked(text, r"`[^`]*`")  # inline code: spec names, settings, commands
    return _blanked(text, r"<!--.*?-->", re.DOTALL)


@dataclass(frozen=True)
class PageNumber:
    """One number of a page: where it is and as printed (ASCII minus)."""

    start: int
    printed: str
    line: int


@dataclass(frozen=True)
class Check:
    """How one number is checked: ``how`` is generated, copied, tied or untied."""

    number: PageNumber
    how: str
    key: str = ""
    row: tuple[str, ...] = ()
    cell: tuple[str, int] = ("", 0)  # a copied number's cell and where in it the number starts


def numbers(text: str) -> list[PageNumber]:
    """Every result number of a page's text, in order (names such as ``issue 25`` left out)."""
    seen = visible(text)
    found = []
    for m in NUMBER.finditer(seen):
        before = seen[max(0, m.start() - 12) : m.start()]
        cited = re.search(r"(?:after|since|[A-Z][A-Za-z]+,?) \(?$", before)  # 'Precup 2017'
        after = seen[m.end() : m.end() + 2]
        listed = (
            re.fullmatch(r"\d", m.group())
            and (  # (1) ... (2), or 1. at a line's start
                (before.endswith("(") and after[:1] == ")")
                or (before.endswith("\n") and after == ". ")
            )
        )
        if NAME.search(before) or (YEAR.fullmatch(m.group()) and cited) or listed:
            continue
        found.append(PageNumber(m.start(), m.group(), text.count("\n", 0, m.start()) + 1))
    return found


def _expand(key: str) -> list[str]:
    m = re.search(r"\{([^{}]*)\}", key)
    if m is None:
        return [key]
    return [
        k for alt in m.group(1).split(",") for k in _expand(key[: m.start()] + alt + key[m.end() :])
    ]


def marker_keys(marker: str) -> list[str]:
    """The keys of one marker's text, braces expanded."""
    return [k for word in marker.split() for k in _expand(word)]


ALIAS = re.compile(r"<!-- n-alias: (\w[\w-]*)=(\S+) -->")


def aliases(text: str) -> dict[str, str]:
    """A page's key abbreviations: ``<!-- n-alias: FR=field.json:/studies/0/methods -->``."""
    return dict(ALIAS.findall(text))


def _linked_tables(page: Path, text: str) -> dict[str, list[tuple[str, ...]]]:
    """First cell -> the rows of the tables in ``.md`` files the page links in its folder."""
    folder = page.parent.resolve()
    rows: dict[str, list[tuple[str, ...]]] = {}
    for link in set(re.findall(r"\]\(([^)#:]+\.md)\)", text)):
        target = (folder / link).resolve()
        if folder not in target.parents or not target.is_file():
            continue
        for line in plain(target.read_text()).splitlines():
            if line.startswith("|"):
                found = cells(line)
                rows.setdefault(found[0], []).append(tuple(found[1:]))
    return rows


def copied_row(cells: list[str], tables: dict[str, list[tuple[str, ...]]]) -> tuple[str, ...]:
    """The linked table row a page row copies (every cell with a digit verbatim), or ()."""
    numeric = [c for c in cells[1:] if re.search(r"\d", c)]
    for row in tables.get(cells[0], []):
        if numeric and all(c in row for c in numeric):
            return row
    return ()


def page_checks(page: Path, text: str | None = None) -> Iterator[Check]:
    """How every result number of ``page`` (or of ``text`` standing for it) is checked."""
    text = page.read_text() if text is None else text
    blocks = [m.span() for m in BLOCK.finditer(text)]
    tables = _linked_tables(page, text)
    seen = visible(text)
    lines = [line + "\n" for line in seen.split("\n")]
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    pending: list[PageNumber] = []
    short = aliases(text)
    markers = iter(MARKER.finditer(text))
    marker = next(markers, None)
    for number in numbers(text):
        while marker is not None and marker.start() < number.start:
            yield from _tie(short, pending, marker)
            pending, marker = [], next(markers, None)
        if any(a <= number.start < b for a, b in blocks):
            yield Check(number, "generated")
            continue
        line = lines[number.line - 1]
        if line.startswith("|"):
            row = copied_row(cells(line), tables)
            if row:
                at = number.start - starts[number.line - 1]
                left, right = line.rfind("|", 0, at) + 1, line.find("|", at)
                raw = line[left:right]
                cell = (raw.strip(), at - left - (len(raw) - len(raw.lstrip())))
                yield Check(number, "copied", row=row, cell=cell)
                continue
        pending.append(number)
    while marker is not None:
        yield from _tie(short, pending, marker)
        pending, marker = [], next(markers, None)
    for number in pending:
        yield Check(number, "untied")


def _tie(short: dict[str, str], pending: list[PageNumber], marker: re.Match) -> Iterator[Check]:
    keys = [_unalias(k, short) for k in marker_keys(marker.group(1))]
    if len(keys) > len(pending):
        line = marker.string.count("\n", 0, marker.start()) + 1
        raise ValueError(
            f"line {line}: a marker of {len(keys)} keys follows {len(pending)} untied numbers"
        )
    for number in pending[: len(pending) - len(keys)]:
        yield Check(number, "untied")
    for number, key in zip(pending[len(pending) - len(keys) :], keys, strict=True):
        yield Check(number, "tied", key=key)


#: The files a page can cite as data; numbers in .md/.txt are found by reading, not by key.
DATA_SUFFIXES = {".json", ".csv", ".md", ".txt", ".yaml", ".yml"}
_ANY_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def cited_files(page: Path) -> list[Path]:
    """The data files a page cites: linked files in its folder (and the data beside them)."""
    folder = page.parent.resolve()
    found: set[Path] = set()
    for link in re.findall(r"\]\(([^)#:]+)\)", page.read_text()):
        target = (folder / link).resolve()
        if folder not in target.parents:
            continue  # another page of the docs, not this study's data
        if target.is_dir():
            found.update(p for p in target.rglob("*") if p.suffix in DATA_SUFFIXES)
        elif target.suffix in DATA_SUFFIXES:
            found.add(target)
            found.update(target.with_suffix(s) for s in (".json", ".csv"))
    return sorted(p for p in found if p.is_file())


def _json_numbers(value: object) -> list[float]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int | float):
        return [float(value)]
    if isinstance(value, dict):
        return [x for v in value.values() for x in _json_numbers(v)]
    if isinstance(value, list):
        return [x for v in value for x in _json_numbers(v)]
    if isinstance(value, str):
        return [float(x) for x in _ANY_NUMBER.findall(plain(value))]
    return []


@cache
def data_numbers(files: tuple[Path, ...]) -> list[float]:
    """Every number in the files, sorted (JSON values and numbers inside its strings too)."""
    values: list[float] = []
    for path in files:
        text = path.read_text(errors="replace")
        if path.suffix == ".json":
            try:
                values += _json_numbers(json.loads(text))
                continue
            except ValueError:
                pass
        if path.suffix == ".csv":  # commas separate cells there
            cells = (c for row in csv.reader(io.StringIO(text)) for c in row)
            values += [float(x) for c in cells for x in _ANY_NUMBER.findall(plain(c))]
            continue
        thousands = re.sub(r"(?<=\d),(?=\d{3}\b)", "", plain(text))  # 1,000,000 in prose
        values += [float(x) for x in _ANY_NUMBER.findall(thousands)]
    return sorted(values)


def backed(printed: str, values: list[float]) -> bool:
    """The weak check of an untied number: some cited value rounds to it at its digits."""
    number = printed.rstrip("%").replace(",", "")
    digits = len(number.split(".")[1]) if "." in number else 0
    target, half = float(number), 0.5 * 10.0**-digits + 1e-9
    for scale in (1.0, 100.0) if printed.endswith("%") else (1.0,):
        low, high = (target - half) / scale, (target + half) / scale
        i = bisect.bisect_left(values, low)
        if i < len(values) and values[i] <= high:
            return True
    return False


def _unalias(key: str, short: dict[str, str]) -> str:
    head = re.split(r"[/;]", key, maxsplit=1)[0]
    return short[head] + key[len(head) :] if head in short else key


def problem(folder: Path, check: Check) -> str:
    """What is wrong with one number's check ('' when it holds)."""
    where = f"line {check.number.line}: {check.number.printed}"
    if check.how == "untied":
        return f"{where} is neither generated, copied nor tied (add <!-- n: FILE:/key -->)"
    if check.how == "tied":
        try:
            value = resolve(folder, check.key)
        except (KeyError, ValueError, IndexError) as error:
            return f"{where}: key {check.key}: {error}"
        if not rounds_to(value, check.number.printed):
            return f"{where}: key {check.key} holds {value!r}"
    return ""


def caught(folder: Path, check: Check, moved: str, values: list[float]) -> bool:
    """Whether the page's checks fail when the number of ``check`` is printed as ``moved``.

    ``values``: the cited data's numbers, the weak check an untied number still gets.
    """
    if check.how == "generated":
        return True  # the byte-for-byte regeneration rewrites it
    if check.how == "copied":
        cell, at = check.cell
        edited = cell[:at] + moved + cell[at + len(check.number.printed) :]
        return edited not in check.row
    if check.how == "tied":
        try:
            return not rounds_to(resolve(folder, check.key), moved)
        except (KeyError, ValueError, IndexError):
            return True  # a broken key fails the page whatever it prints
    return not backed(moved, values)


def perturbations(printed: str) -> list[str]:
    """``printed`` with its last digit one up and one down (no carry); an integer +-1."""
    core, suffix = printed.rstrip("%"), "%" if printed.endswith("%") else ""
    if "." not in core:
        value = int(core.replace(",", ""))
        return [(f"{value + d:,}" if "," in core else str(value + d)) + suffix for d in (1, -1)]
    last = int(core[-1])
    return [core[:-1] + str(last + d) + suffix for d in (1, -1) if 0 <= last + d <= 9]


def power(page: Path) -> tuple[int, int]:
    """(perturbations the checks catch, perturbations made) over every result number of a page."""
    made = hit = 0
    values = data_numbers(tuple(cited_files(page)))
    for check in page_checks(page):
        for moved in perturbations(check.number.printed):
            made += 1
            hit += caught(page.parent, check, moved, values)
    return hit, made
