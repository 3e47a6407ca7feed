"""What every results page's tests check alike (docs/results/<page>/): one place, four callers."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"


def load_collect(folder: Path, name: str) -> ModuleType:
    """The page's ``collect.py`` as module ``name`` (registered: its dataclasses look it up)."""
    spec = importlib.util.spec_from_file_location(name, folder / "collect.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def regenerate_commands(folder: Path, commented: bool = False) -> tuple[str, list[str]]:
    """The page's ``regenerate.sh`` and the ``opt-suite`` commands it runs, each a real command.

    ``commented``: also the commands of lines commented out (a step the script documents).
    """
    from opt_suite.cli import COMMANDS

    script = (folder / "regenerate.sh").read_text()
    pattern = r"^\s*#?\s*opt-suite ([a-z-]+)" if commented else r"^\s*opt-suite ([a-z-]+)"
    commands = re.findall(pattern, script, flags=re.MULTILINE)
    assert set(commands) <= set(COMMANDS), set(commands) - set(COMMANDS)
    return script, commands


def assert_verdict_first_and_links_resolve(folder: Path, verdict: str) -> None:
    """The README's first paragraph matches ``verdict``; every relative link names a file.

    The paragraph is read as it renders: without the ``<!-- n: ... -->`` markers that tie its
    numbers to the data (docs/page_numbers.py).
    """
    readme = (folder / "README.md").read_text()
    rendered = re.sub(r"<!-- n: .*? -->|<!-- n-alias: .*? -->\n", "", readme)
    first = rendered.split("\n\n")[1]
    assert re.match(verdict, first), first
    for link in re.findall(r"\]\(([^)#:]+)\)", readme):
        assert (folder / link).exists(), link
