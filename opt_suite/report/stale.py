"""Files of another spec's report, moved aside when a folder's reports are rewritten.

A run folder can hold several specs' runs (``opt-suite run B --out DIR`` after ``A``). Rewriting
the reports replaces ``leaderboard.*``, ``curves.png`` and ``index.html``, but files only some
reports write would stay and describe the other spec beside the new leaderboard: ``fig1a.png``
and ``discovery.png`` (written only when the spec records such curves), ``diagnose.md``/``.json``
(``opt-suite diagnose``) and ``tensorboard/`` (``opt-suite export-tensorboard``). Those are
moved — never deleted — into ``DIR/stale/<hash>/``, named by the spec they were made for (its
first 12 hex digits; ``earlier`` when that is not recorded).

Who made a file is read from the JSON the report itself wrote (``leaderboard.json``,
``diagnose.json``, ``tensorboard/export.json``) through the file guard
(:func:`opt_suite.files_guard.read_json`): a FIFO there would hang the report, and a link to
``/dev/zero`` or a huge file would be read whole. Such a file records no owner.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from opt_suite.files_guard import InputError, read_json

__all__ = [
    "MAX_REPORT_JSON_BYTES",
    "STALE_DIR",
    "OPTIONAL_PICTURES",
    "read_report_json",
    "report_owner",
    "set_aside_stale",
]

STALE_DIR = "stale"
OPTIONAL_PICTURES = ("fig1a.png", "discovery.png")  # written only when the spec has those curves
MAX_REPORT_JSON_BYTES = 64 << 20  # a report's own JSON: kilobytes to a few megabytes


def read_report_json(path: Path, what: str) -> object:
    """A JSON file a report or an export wrote, read back through the file guard.

    Raises:
        InputError: not a regular file of at most :data:`MAX_REPORT_JSON_BYTES`, or not JSON.
    """
    return read_json(path, MAX_REPORT_JSON_BYTES, what)


def report_owner(directory: Path) -> str | None:
    """The spec hash of the report now in ``directory`` (its ``leaderboard.json``), if readable."""
    return _recorded_hash(directory / "leaderboard.json", ("spec", "hash"))


def _recorded_hash(path: Path, keys: tuple[str, ...]) -> str | None:
    try:
        value: object = read_report_json(path, "a report's record of its spec")
        for key in keys:
            value = value[key]  # type: ignore[index]
    except (InputError, KeyError, TypeError, IndexError):
        return None
    return value if isinstance(value, str) else None


def set_aside_stale(
    directory: Path, spec_hash: str, rewritten: Iterable[Path], previous: str | None
) -> list[str]:
    """Move what belongs to another report out of ``directory``; one line per move, for people.

    Args:
      directory: the folder whose reports were just rewritten.
      spec_hash: the spec of the new report.
      rewritten: the files just written (an optional picture among them is current).
      previous: the spec hash of the report they replaced (:func:`report_owner`, read before).
    """
    kept = {Path(p).name for p in rewritten}
    moves: list[tuple[list[str], str | None]] = []
    for name in OPTIONAL_PICTURES:
        if name not in kept and (directory / name).is_file():
            moves.append(([name], previous))
    owner = _recorded_hash(directory / "diagnose.json", ("spec_hash",))
    if owner is not None and owner != spec_hash:
        found = [n for n in ("diagnose.md", "diagnose.json") if (directory / n).exists()]
        moves.append((found, owner))
    owner = _recorded_hash(directory / "tensorboard" / "export.json", ("spec_hash",))
    if owner is not None and owner != spec_hash:
        moves.append((["tensorboard"], owner))
    notes, targets = [], {}
    for names, owner in moves:
        owner = owner if owner != spec_hash else None  # this spec's own, from an earlier report
        if owner not in targets:
            targets[owner] = _free(directory / STALE_DIR / (owner[:12] if owner else "earlier"))
        target = targets[owner]
        target.mkdir(parents=True, exist_ok=True)
        for name in names:
            os.replace(directory / name, target / name)
        whose = f"spec {owner[:12]}" if owner else "an earlier report"
        notes.append(
            f"moved {', '.join(names)} aside to {target.relative_to(directory)}/: made for "
            f"{whose}, not {spec_hash[:12]} reported now"
        )
    return notes


def _free(folder: Path) -> Path:
    """``folder``, or ``folder.1``, ``folder.2``... when an earlier move already used it."""
    candidate, n = folder, 0
    while candidate.exists() and any(candidate.iterdir()):
        n += 1
        candidate = folder.with_name(f"{folder.name}.{n}")
    return candidate
