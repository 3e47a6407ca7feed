"""Every result a results page states is in the committed data it cites (issue 25, item 4).

Two checks. Every generated table (each page's ``collect.py`` output, and the README blocks it
writes) must equal, byte for byte, a fresh regeneration from the committed copies
(:data:`REGENERATED`, issue 35 item 6): a number moved by one in its last digit fails it. The
numbers a README's author wrote by hand get the weaker check below.

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
import os
import re
import shutil
import subprocess
import sys
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


#: page folder -> (the collect.py flag that rewrites its tables from the committed copies alone,
#: the files it writes). Every file listed is compared byte for byte with the committed one.
REGENERATED: dict[str, tuple[str, tuple[str, ...]]] = {
    "gymnasium": ("--tables-only", ("verdict.md", "verdict.csv")),
    "minatar": (
        "--tables-only",
        (
            "breakout/controls.md",
            "breakout/controls.json",
            "asterix/controls.md",
            "asterix/controls.json",
        ),
    ),
    "field": ("--verdicts-only", ("field.md", "field.json")),
    "fourrooms-paper": ("--tables-only", ("README.md", "why/summary.json")),
}


def _collect(copy: Path, flag: str) -> subprocess.Popen:
    """The page copy's own collect.py with ``flag``, started (the repository on its path)."""
    env = {**os.environ, "PYTHONPATH": str(RESULTS.parents[1])}
    return subprocess.Popen(
        [sys.executable, str(copy / "collect.py"), flag],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _finished(run: subprocess.Popen) -> None:
    # a timeout far above the seconds it takes: a hang fails, a slow machine does not
    _, err = run.communicate(timeout=600)
    assert run.returncode == 0, err


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> dict[str, Path]:
    """Every page of :data:`REGENERATED` copied and regenerated once, the pages side by side."""
    where = tmp_path_factory.mktemp("regenerated")
    copies, runs = {}, []
    for page, (flag, _) in REGENERATED.items():
        copies[page] = where / page
        ignore = shutil.ignore_patterns("*.png", "options")
        shutil.copytree(RESULTS / page, copies[page], ignore=ignore)
        runs.append(_collect(copies[page], flag))
    for run in runs:
        _finished(run)
    return copies


@pytest.mark.parametrize("page", sorted(REGENERATED))
def test_every_generated_table_is_a_fresh_regeneration_byte_for_byte(page, fresh):
    copy = fresh[page]
    for name in REGENERATED[page][1]:
        fresh, committed = (copy / name).read_bytes(), (RESULTS / page / name).read_bytes()
        assert fresh == committed, f"docs/results/{page}/{name} differs from its regeneration"


_BLOCK = re.compile(r"<!-- (\w+):begin -->.*?<!-- \1:end -->", flags=re.DOTALL)


def _last_digit_moves(printed: str) -> list[str]:
    """``printed`` with its last digit one up and one down (where no carry would follow)."""
    core, suffix = printed.rstrip("%"), "%" if printed.endswith("%") else ""
    last = int(core[-1])
    return [core[:-1] + str(last + d) + suffix for d in (1, -1) if 0 <= last + d <= 9]


#: page folder -> the README lines pasted verbatim from a generated file (a test holds them to it).
PASTED = {"gymnasium": re.compile(r"^\| .*CI \[seeds→tasks\].*$", flags=re.MULTILINE)}


def perturbation_power(page: Path, generated: bool = True) -> tuple[int, int]:
    """(perturbations caught, perturbations made): every backed decimal's last digit moved.

    A number inside a block collect.py writes, or on a line pasted from a generated table
    (:data:`PASTED`), is caught by the byte-for-byte checks (``generated``); any other only when
    no cited value rounds to the moved number.
    """
    text = _plain(re.sub(r"```.*?```", " ", page.read_text(), flags=re.DOTALL))
    text = re.sub(r"`[^`]*`", " ", re.sub(r"\]\([^)]*\)", "]", text))
    blocks = [m.span() for m in _BLOCK.finditer(text)] if generated else []
    pasted = PASTED.get(page.parent.name)
    if generated and pasted is not None:
        blocks += [m.span() for m in pasted.finditer(text)]
    values = data_numbers(cited_files(page))
    caught = made = 0
    for m in _NUMBER.finditer(text):
        printed = m.group().replace(",", "")
        if not backed(printed, values):
            continue  # NOT_YET_BACKED's business
        inside = any(a <= m.start() < b for a, b in blocks)
        for moved in _last_digit_moves(printed):
            made += 1
            caught += inside or not backed(moved, values)
    return caught, made


def test_a_moved_digit_in_a_generated_block_is_caught_and_the_check_gains_power(fresh, tmp_path):
    page = RESULTS / "fourrooms-paper" / "README.md"
    text = page.read_text()
    block = _BLOCK.search(text)
    assert block is not None
    number = _NUMBER.search(_plain(text), block.start())
    assert number is not None and number.start() < block.end()
    moved = _last_digit_moves(number.group())[0]
    edited = text[: number.start()] + moved + text[number.end() :]
    assert edited != text
    # The regeneration rewrites the block from the data: the moved digit does not survive it.
    copy = tmp_path / "fourrooms-paper"
    shutil.copytree(fresh["fourrooms-paper"], copy)
    (copy / "README.md").write_text(edited)
    _finished(_collect(copy, REGENERATED["fourrooms-paper"][0]))
    assert (copy / "README.md").read_text() == text
    # Over the whole page: the generated blocks add what the rounding check alone lets through;
    # so does the cross-domain page's pasted table.
    for checked in (page, RESULTS / "gymnasium" / "README.md"):
        caught, made = perturbation_power(checked)
        alone, _ = perturbation_power(checked, generated=False)
        assert made > 100 and caught > alone, checked


def test_the_readme_copy_of_the_cross_domain_table_is_the_generated_one():
    # The page's table is pasted from verdict.md: every row of it, byte for byte.
    generated = set((RESULTS / "gymnasium" / "verdict.md").read_text().splitlines())
    readme = (RESULTS / "gymnasium" / "README.md").read_text().splitlines()
    rows = [line for line in readme if line.startswith("| ") and "CI [seeds→tasks]" in line]
    assert len(rows) == 19 and set(rows) <= generated


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
