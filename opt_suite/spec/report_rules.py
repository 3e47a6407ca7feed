"""Rules on the ``report`` section's entry names: the baseline and the validity check.

Pure functions of the values read and the method entry names (``None``: some name is unreadable,
so no name can be judged missing); :mod:`opt_suite.spec.rules` reports what they return at the
keys they name.
"""

from __future__ import annotations

from collections.abc import Sequence

from opt_suite import registry
from opt_suite.spec.errors import KeyPath

__all__ = ["baseline_problems", "validity_problems"]

Found = list[tuple[KeyPath, str]]


def baseline_problems(baseline: str | None, names: Sequence[str] | None) -> Found:
    """``report.baseline`` names a method entry (or is null)."""
    if baseline is None or names is None or baseline in names:
        return []
    return [
        (
            ("report", "baseline"),
            f"no method entry is named {baseline!r}{registry.suggest(baseline, list(names))} "
            f"(expected one of: {', '.join(names) or 'none'}, or null)",
        )
    ]


def validity_problems(
    controls: Sequence[str], clone: str | None, names: Sequence[str] | None
) -> Found:
    """``report.positive_controls`` and ``report.clone``: both or neither, entries named once.

    A check needs something to beat (the clone) and something that should beat it (a control);
    each must be a method entry, and no entry may play both parts.
    """
    found: Found = []
    if controls and clone is None:
        found.append(
            (
                ("report", "positive_controls"),
                "a validity check needs the cloned option its positive controls must beat "
                "(expected report.clone naming a method entry, e.g. bc-option-never)",
            )
        )
    if clone is not None and not controls:
        found.append(
            (
                ("report", "clone"),
                "a validity check on a spec with no positive control (expected "
                "report.positive_controls listing method entries known to help here, e.g. "
                "hallway-options)",
            )
        )
    if names is None:
        return found
    listed = ", ".join(names) or "none"
    seen: set[str] = set()
    for i, name in enumerate(controls):
        path = ("report", "positive_controls", i)
        if name not in names:
            found.append(
                (
                    path,
                    f"no method entry is named {name!r}{registry.suggest(name, list(names))} "
                    f"(expected a positive control among: {listed})",
                )
            )
        elif name == clone:
            found.append((path, f"{name!r} is report.clone too (expected another entry)"))
        elif name in seen:
            found.append((path, f"{name!r} is listed twice (expected each control once)"))
        seen.add(name)
    if clone is not None and clone not in names:
        found.append(
            (
                ("report", "clone"),
                f"no method entry is named {clone!r}{registry.suggest(clone, list(names))} "
                f"(expected the cloned-option entry among: {listed})",
            )
        )
    return found
