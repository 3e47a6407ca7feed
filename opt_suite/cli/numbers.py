"""The argparse types of every number a command takes: finite and bounded before anything runs.

A number typed on the command line reaches allocations, loops and seeds: ``--candidates 1e12``
would sample for days, ``--max-z nan`` makes every comparison false (so every check "agrees"), a
negative seed is a ``SeedSequence`` traceback. Each command declares its numbers with
:func:`integer` or :func:`real`, so a value outside its range is argparse's usage error (one line,
exit 2) naming the flag and the range.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

__all__ = ["MAX_INDEX", "integer", "real"]

#: The largest seed or task index a command takes (stored as SQLite integers, spawned into seeds).
MAX_INDEX = 2**31 - 1


def integer(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: a decimal integer in ``low..high``."""

    def parse(text: str) -> int:
        digits = text.strip()
        if not digits.removeprefix("-").isdigit() or len(digits) > 20:
            raise argparse.ArgumentTypeError(f"expected an integer in {low}..{high}, got {text!r}")
        value = int(digits)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected an integer in {low}..{high}, got {text!r}")
        return value

    return parse


def real(low: float, high: float, *, open_low: bool = False) -> Callable[[str], float]:
    """An argparse type: a finite number in ``[low, high]`` (``(low, high]`` with ``open_low``)."""
    span = f"{'(' if open_low else '['}{low:g}, {high:g}]"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        above = value > low if open_low else value >= low
        if not (math.isfinite(value) and above and value <= high):
            raise argparse.ArgumentTypeError(f"expected a finite number in {span}, got {text!r}")
        return value

    return parse
