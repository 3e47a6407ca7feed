"""Propose, and with ``--write`` insert, the ``<!-- n: KEY -->`` markers of a results page.

    python docs/tie_numbers.py docs/results/field/README.md          # list what it would tie
    python docs/tie_numbers.py docs/results/field/README.md --write  # insert the markers

For every number of the page that is neither generated, copied nor tied
(:mod:`page_numbers`), the candidates are the values of the page's cited data (the JSON, CSV and
YAML files it links in its own folder, the files of a linked folder, the ``X.json``/``X.csv``
beside a linked ``X.md``) that round to it. One candidate: that key. Several: the one whose key
shares the most words with the number's sentence (ties between equals and keys sharing no word
are left for the author). A proposal is a suggestion: the author reads the key before committing.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from page_numbers import Check, cited_files, page_checks, plain, problem, rounds_to  # noqa: E402

DATA = {".json", ".csv", ".yaml", ".yml"}
#: A list of records is addressed by the first of these fields that tells its items apart.
NAMING_FIELDS = (
    "method",
    "entry",
    "name",
    "variant",
    "comparator",
    "domain",
    "setting",
    "label",
    "spec",
    "id",
)
#: Characters a key's step cannot hold (a marker's keys are words, braces expand, ``[`` selects).
_UNSAFE = re.compile(r"[\s\[\]{},]")
_UNSAFE_VALUE = re.compile(r"[\s/&\[\]{},=]")


def _selector(items: list, index: int) -> str:
    """A readable step for item ``index`` of a list: ``[field=value]`` when one field names it."""
    item = items[index]
    if isinstance(item, dict):
        for field in NAMING_FIELDS:
            value = item.get(field)
            if not isinstance(value, str) or _UNSAFE_VALUE.search(value):
                continue
            if sum(isinstance(x, dict) and x.get(field) == value for x in items) == 1:
                return f"[{field}={value}]"
    return str(index)


def leaves(node: object, path: str = "") -> Iterator[tuple[str, float]]:
    """Every number under ``node`` with its path (numbers in strings are not addressable)."""
    if isinstance(node, bool):
        return
    if isinstance(node, int | float):
        yield path, float(node)
    elif isinstance(node, str):
        try:
            yield path, float(node.replace(",", ""))
        except ValueError:
            return
    elif isinstance(node, dict):
        for key, value in node.items():
            step = str(key).replace("~", "~0").replace("/", "~1")
            if not _UNSAFE.search(step):
                yield from leaves(value, f"{path}/{step}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from leaves(value, f"{path}/{_selector(node, i)}")


def data_leaves(page: Path) -> list[tuple[str, float]]:
    """(key, value) of every number in the page's cited data."""
    folder = page.parent.resolve()
    found = []
    for path in (p for p in cited_files(page) if p.suffix in DATA):
        text = path.read_text()
        if path.suffix == ".json":
            node: object = json.loads(text)
        elif path.suffix == ".csv":
            node = list(csv.DictReader(io.StringIO(text)))
        else:
            node = yaml.safe_load(text)
        name = path.relative_to(folder).as_posix()
        if _UNSAFE.search(name) or ":" in name:
            continue  # a key is one word: a file name with a space cannot be named
        found += [(f"{name}:{key}", value) for key, value in leaves(node)]
    return found


def _words(text: str) -> set[str]:
    return {w.rstrip("s") for w in re.split(r"[^a-z0-9]+", text.lower()) if w and not w.isdigit()}


def _noun(text: str) -> set[str]:
    """The first three words after a number: what it counts ('5 seeds', '60 episodes')."""
    return _words(" ".join(re.findall(r"[A-Za-z][\w-]*", text)[:3]))


def _small_integer(printed: str) -> bool:
    return re.fullmatch(r"-?\d{1,3}", printed.rstrip("%")) is not None


def propose(page: Path, check: Check, text: str, data: list[tuple[str, float]]) -> str:
    """The key to tie ``check``'s number to, or '' when none or no single best.

    A small integer (no thousands comma) is tied only to a key whose last step names what the
    page says it counts; any other number to the candidate sharing most words with its
    sentence, a key in a subfolder only when the sentence names the subfolder.
    """
    candidates = [key for key, value in data if rounds_to(value, check.number.printed)]
    at, end = check.number.start, check.number.start + len(check.number.printed)
    plain_text = plain(text)
    context = _words(plain_text[max(0, at - 160) : end + 60])
    wide = _words(plain_text[max(0, at - 600) : end + 200])
    noun = _noun(plain_text[end : end + 40])

    raw = plain_text[max(0, at - 160) : end + 60].lower()

    def score(key: str) -> tuple[int, int, int, int]:
        name, pointer = key.split(":", 1)
        folder = _words(name.rsplit("/", 1)[0]) if "/" in name else set()
        if folder and not folder & wide:
            return -9, 0, 0, 0
        named = len(_words(pointer.rsplit("/", 1)[-1]) & noun)
        entities = _entities(pointer)
        about = sum(1 if e.lower() in raw else -1 for e in entities)
        shared = len(_words(pointer) & context)
        return about, named, shared, -len(re.findall(r"/\d+(?=/|$)", pointer))

    ranked = sorted(candidates, key=score, reverse=True)
    if not ranked or score(ranked[0])[0] < 0:
        return ""  # a key about a method the sentence does not name
    best = score(ranked[0])
    if _small_integer(check.number.printed) and best[1] == 0:
        return ""
    if len(ranked) > 1 and (best[2] == 0 or best[:3] <= score(ranked[1])[:3]):
        return ""
    return ranked[0]


def _entities(pointer: str) -> list[str]:
    """The named things a key is about: selected items and the entries of a ``methods`` map."""
    steps = pointer.strip("/").split("/")
    named = [v for s in steps for v in re.findall(r"=([^&\]]+)", s) if s.startswith("[")]
    return named + [
        step for before, step in zip(steps, steps[1:], strict=False) if before == "methods"
    ]


def _compact(keys: list[str]) -> str:
    """Keys sharing all but their last step written once with braces."""
    heads = {k.rsplit("/", 1)[0] for k in keys}
    if len(keys) > 1 and len(heads) == 1:
        head = heads.pop()
        return f"{head}/{{{','.join(k.rsplit('/', 1)[1] for k in keys)}}}"
    return " ".join(keys)


def tie(page: Path, write: bool) -> tuple[int, int]:
    """Propose a key for every untied number; with ``write`` insert the markers. (tied, left)."""
    text = page.read_text()
    data = data_leaves(page)
    runs: list[list[tuple[Check, str]]] = []
    left = 0
    for check in page_checks(page, text):
        if check.how != "untied":
            if runs and runs[-1]:
                runs.append([])
            continue
        key = propose(page, check, text, data)
        same_line = runs and runs[-1] and runs[-1][-1][0].number.line == check.number.line
        if key and same_line:
            runs[-1].append((check, key))
        elif key:
            runs.append([(check, key)])
        else:
            left += 1
            runs.append([])
            print(f"{page}:{check.number.line}: {check.number.printed}: no single key")
    inserts = []
    for run in (r for r in runs if r):
        last = run[-1][0].number
        inserts.append((last.start + len(last.printed), _compact([k for _, k in run])))
        for check, key in run:
            print(f"{page}:{check.number.line}: {check.number.printed} <- {key}")
    if write:
        for at, keys in sorted(inserts, reverse=True):
            text = f"{text[:at]}<!-- n: {keys} -->{text[at:]}"
        page.write_text(text)
        wrong = [problem(page.parent, c) for c in page_checks(page)]
        assert not [w for w in wrong if w and "neither" not in w], wrong
    return sum(len(r) for r in runs), left


def main(argv: list[str] | None = None) -> int:
    """List the proposals for a page, or insert them with ``--write``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("page", type=Path)
    parser.add_argument("--write", action="store_true", help="insert the proposed markers")
    args = parser.parse_args(argv)
    tied, left = tie(args.page, args.write)
    print(f"{tied} numbers tied, {left} left for the author", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
