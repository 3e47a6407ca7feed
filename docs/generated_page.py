"""The one way a docs generator writes its page, or with ``--check`` says it is stale.

Every ``docs/gen_*.py`` renders its page from committed inputs; this writes it, or compares it
with the committed page (exit 1 and one line naming the script to run when they differ).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

__all__ = ["page_main", "write_or_check"]


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
