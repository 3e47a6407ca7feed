"""Every result a results page states is in the committed data it cites (issue 25, item 4).

A page (``docs/results/*/README.md``) is written by hand from the files ``collect.py`` copies
next to it. Its *cited data* are the files it links to in its own folder (a linked folder: every
file in it), and for a linked ``X.md`` also the ``X.json`` / ``X.csv`` beside it (the same table
as data). Every decimal number on the page outside code blocks (``−930.7``, ``0.33``, ``73.1%``)
must be one of those files' numbers rounded to the digits the page shows (a percentage may also be a
stored fraction x 100). Integers are left alone: they are settings (seeds, tasks, episodes), not
results.

Numbers that no committed file backs yet are listed in :data:`NOT_YET_BACKED`, page by page: the
test fails when a page gains an unbacked number *and* when a listed number becomes backed (or
leaves the page), so the list is always exactly what a reader cannot check.
"""

from __future__ import annotations

import bisect
import csv
import io
import json
import re
from pathlib import Path

import pytest

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"
PAGES = sorted(RESULTS.glob("*/README.md"))
DATA_SUFFIXES = {".json", ".csv", ".md", ".txt"}

#: page folder -> numbers on it that no cited file holds (as printed, minus signs as "-").
NOT_YET_BACKED: dict[str, set[str]] = {}

_NUMBER = re.compile(r"(?<![\w.])-?\d[\d,]*\.\d+%?")
_ANY_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def _plain(text: str) -> str:
    return text.replace("\u2212", "-").replace("\u2013", " ").replace("\u2014", " ")


def page_numbers(page: Path) -> list[str]:
    """The decimal numbers of a page outside code blocks and link targets, as printed."""
    text = re.sub(r"```.*?```", " ", page.read_text(), flags=re.DOTALL)
    text = re.sub(r"\]\([^)]*\)", "]", text)  # a file name such as lambda1=0.01/ is no result
    text = re.sub(r"`[^`]*`", " ", text)  # inline code: spec names, settings, commands
    return [m.replace(",", "") for m in _NUMBER.findall(_plain(text))]


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
            found.update(
                target.with_suffix(s) for s in (".json", ".csv") if target.with_suffix(s).exists()
            )
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
        return [float(x) for x in _ANY_NUMBER.findall(_plain(value))]
    return []


def data_numbers(files: list[Path]) -> list[float]:
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
            values += [float(x) for c in cells for x in _ANY_NUMBER.findall(_plain(c))]
            continue
        thousands = re.sub(r"(?<=\d),(?=\d{3}\b)", "", _plain(text))  # 1,000,000 in prose
        values += [float(x) for x in _ANY_NUMBER.findall(thousands)]
    return sorted(values)


def backed(printed: str, values: list[float]) -> bool:
    """Whether some value rounds to ``printed`` at its digits (a percentage: also value x 100)."""
    percent = printed.endswith("%")
    number = printed.rstrip("%")
    digits = len(number.split(".")[1])
    target, half = float(number), 0.5 * 10.0**-digits + 1e-9
    for scale in (1.0, 100.0) if percent else (1.0,):
        low, high = (target - half) / scale, (target + half) / scale
        i = bisect.bisect_left(values, low)
        if i < len(values) and values[i] <= high:
            return True
    return False


def unbacked(page: Path) -> set[str]:
    """The page's numbers that no cited file backs."""
    values = data_numbers(cited_files(page))
    return {n for n in page_numbers(page) if not backed(n, values)}


@pytest.mark.parametrize("page", PAGES, ids=[p.parent.name for p in PAGES])
def test_every_number_on_a_results_page_is_in_its_cited_data(page):
    missing = unbacked(page)
    known = NOT_YET_BACKED.get(page.parent.name, set())
    assert missing - known == set(), f"{page}: numbers in no cited file: {sorted(missing - known)}"
    assert known - missing == set(), (
        f"{page}: now backed (drop from NOT_YET_BACKED): {sorted(known - missing)}"
    )


def test_the_check_has_power(tmp_path):
    # A page citing a table with 0.33 and -930.72: its own numbers pass, a made-up one fails.
    (tmp_path / "board.csv").write_text("method,iqm,p\nours,-930.72,0.3333\n")
    page = tmp_path / "README.md"
    page.write_text(
        "IQM −930.7 and P = 0.33 ([data](board.csv)); 33.3% of runs; "
        "`lambda1=0.01` is a name; made up: −811.3.\n"
    )
    assert page_numbers(page) == ["-930.7", "0.33", "33.3%", "-811.3"]
    assert unbacked(page) == {"-811.3"}
