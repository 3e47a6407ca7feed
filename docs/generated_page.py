"""The one way a docs generator writes its page, or with ``--check`` says it is stale.

Every ``docs/gen_*.py`` renders its page from committed inputs; this writes it, or compares it
with the committed page (exit 1 and one line naming the script to run when they differ).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

__all__ = ["duration", "page_main", "short_commit", "write_or_check"]


def duration(seconds: float) -> str:
    """A measured time as the generated pages print it: ``42 s``, ``3 min 07 s``."""
    if seconds < 60:
        return f"{seconds:.0f} s"
    return f"{int(seconds // 60)} min {seconds % 60:02.0f} s"


def short_commit(commit: str | None) -> str:
    """A provenance commit (``+dirty`` when the checkout was modified) as the pages print it."""
    if not commit:
        return "?"
    dirty = commit.endswith("+dirty")
    return commit.removesuffix("+dirty")[:7] + (" (with uncommitted changes)" if dirty else "")


def write_or_check(output: Path, text: str, script: str, check: bool) -> int:
    """Write ``text`` to ``output``, or with ``check`` return 1 when ``output`` differs from it."""
    if check:
        if not output.exists() or output.read_text() != text:
            print(f"{output} is out of date: run python docs/{script}", file=sys.stderr)
            return 1
        return 0
    output.write_text(text)
    return 0


def page_main(
    doc: str, output: Path, render: Callable[[], str], script: str, argv: list[str] | None
) -> int:
    """A generator's whole command line: ``--check`` or write (``doc``: its module docstring)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the page is stale")
    args = parser.parse_args(argv)
    return write_or_check(output, render(), script, args.check)
