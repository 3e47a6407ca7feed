"""The README's Layout is the map of the package: complete, and true to the imports.

The map says "each line below may use the lines above it, never those below". This test reads the
map from README.md and every import statement (module level or inside a function, it is a
dependency either way) of ``opt_suite`` and ``baselines`` with ``ast``, so a module that imports
upward, or a folder the map forgets, fails here rather than in a maintainer's head.
"""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Imports that run up the map on purpose, each with its reason. Keep this list short: every entry
# is a place where the map and the code disagree.
NAMED_EXCEPTIONS = {
    # `import opt_suite` registers the env ids (Gymnasium's convention) and pins the NumPy kernels
    # before anything else: the package root runs first by design, above every line.
    ("opt_suite", "opt_suite._numerics"): "the package root pins kernels first",
    ("opt_suite", "opt_suite.families"): "the package root registers env ids",
    # ... and answers the old import paths of moved modules (plugins written for 0.2.0).
    ("opt_suite", "opt_suite.moved"): "the package root installs the old import paths",
}


def layout_lines(readme: str) -> dict[str, int]:
    """Each name on the map (``x.py`` or ``folder/``) with the index of its line, top first.

    Indented sub-entries (``tabular/`` under ``families/``) belong to their parent's line, and
    continuation lines (descriptions wrapped onto the next line) name nothing.
    """
    block = readme.split("## Layout", 1)[1].split("```", 2)[1]
    lines: dict[str, int] = {}
    index = -1
    for line in block.splitlines():
        if not line.strip() or line.strip() == "opt_suite/":
            continue
        indent = len(line) - len(line.lstrip())
        head = re.split(r"\s{2,}", line.strip())[0]
        names = [t for t in head.split() if re.fullmatch(r"[\w.]+\.py|\w+/", t)]
        if indent > 2 or not names:
            continue
        index += 1
        for name in names:
            lines[name] = index
    return lines


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def line_of(module: str, lines: dict[str, int]) -> int | None:
    """The map line a dotted module sits on; None for a module outside the map's two packages."""
    parts = module.split(".")
    if parts[0] == "baselines":
        return lines["baselines/"]
    if parts[0] != "opt_suite" or len(parts) == 1:
        return None
    return lines.get(parts[1] + "/", lines.get(parts[1] + ".py"))


def imports_of(path: Path) -> list[tuple[str, int]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, node.lineno))
    return [
        (name, lineno) for name, lineno in found if name.split(".")[0] in ("opt_suite", "baselines")
    ]


def sources() -> list[Path]:
    return sorted([*(ROOT / "opt_suite").rglob("*.py"), *(ROOT / "baselines").rglob("*.py")])


@pytest.fixture(scope="module")
def lines() -> dict[str, int]:
    return layout_lines((ROOT / "README.md").read_text(encoding="utf-8"))


def test_every_folder_and_module_of_the_package_is_on_the_map(lines):
    top = ROOT / "opt_suite"
    entries = {p.name + "/" for p in top.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    entries |= {p.name for p in top.glob("*.py") if p.name != "__init__.py"}
    missing = sorted(entries - set(lines))
    assert not missing, f"README Layout omits {missing}"


def test_every_name_on_the_map_exists(lines):
    stale = [
        name
        for name in lines
        if not (ROOT / "opt_suite" / name).exists() and not (ROOT / name).exists()
    ]
    assert not stale, f"README Layout names what is not there: {stale}"


def test_imports_only_run_down_the_map(lines):
    upward = []
    for path in sources():
        importer = module_name(path)
        here = -1 if importer == "opt_suite" else line_of(importer, lines)
        for imported, lineno in imports_of(path):
            there = line_of(imported, lines)
            if here is None or there is None or there <= here:
                continue
            if any(
                imported.startswith(target) and importer == source
                for source, target in NAMED_EXCEPTIONS
            ):
                continue
            upward.append(f"{path.relative_to(ROOT)}:{lineno} imports {imported}")
    assert not upward, "imports that run up the README's Layout:\n" + "\n".join(upward)


def test_every_named_exception_is_still_needed(lines):
    # An exception whose import is gone is a stale line in the list: remove it.
    present = {
        (module_name(path), imported) for path in sources() for imported, _ in imports_of(path)
    }
    unused = [
        pair
        for pair in NAMED_EXCEPTIONS
        if not any(src == pair[0] and imp.startswith(pair[1]) for src, imp in present)
    ]
    assert not unused, f"named exceptions no import needs any more: {unused}"


def test_lazy_contracts_are_listed_by_dir():
    import opt_suite.testing as testing

    listed = dir(testing)
    for name in ("MethodContract", "LearnerContract", "DemonstrationSourceContract"):
        assert name in listed, name


LIMIT = 400  # lines a module aims to stay under
LENGTH_NOTE = "Length (over the 400 lines the tree aims for):"


def test_a_module_over_the_limit_says_why_and_no_other_does():
    # The note carries no line count (a count was always already wrong): this test is the count.
    unexplained, stale = [], []
    for path in sources():
        text = path.read_text(encoding="utf-8")
        lines = len(text.splitlines())
        noted = LENGTH_NOTE in text
        if lines > LIMIT and not noted:
            unexplained.append(f"{path.relative_to(ROOT)} ({lines} lines)")
        if lines <= LIMIT and noted:
            stale.append(f"{path.relative_to(ROOT)} ({lines} lines)")
    assert not unexplained, f"over {LIMIT} lines without a '{LENGTH_NOTE}' note: {unexplained}"
    assert not stale, f"a length note on a module within {LIMIT} lines: remove it: {stale}"
    assert not [
        p for p in sources() if "Length (" in (t := p.read_text()) and LENGTH_NOTE not in t
    ], "a length note in the old form, with a line count"
