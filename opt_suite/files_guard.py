"""Every file the suite reads or writes on a user's say-so goes through here first.

A user can point any command at anything: a FIFO (opening it for reading waits for a writer that
never comes), a directory, a symlink to ``/dev/zero`` (endless bytes: reading it exhausts memory),
a file of gigabytes where kilobytes are expected, or an output path that is an existing file or lies
under one. These helpers turn each of those into :class:`InputError`, whose message names the path,
what it was expected to be and what it is; ``opt-suite`` prints it as one line and exits 2
(:mod:`opt_suite.cli`). They import nothing from the suite, so every layer may use them.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

__all__ = [
    "InputError",
    "file_kind",
    "output_dir",
    "output_file",
    "read_bounded",
    "read_json",
    "read_regular",
    "regular_file",
    "unlinked_folder",
]

_CHUNK = 1 << 16


class InputError(Exception):
    """A file or folder the user named cannot be used; the message names it and says why."""


def file_kind(mode: int) -> str:
    """What a ``st_mode`` is, in words (for messages)."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a regular file" if stat.S_ISREG(mode) else "not a regular file"


def regular_file(path: str | os.PathLike[str], what: str, limit: int | None = None) -> Path:
    """``path`` itself, after checking that it is a regular file (of at most ``limit`` bytes).

    Symlinks are followed: a link to ``/dev/zero`` is a device, not a file.

    Raises:
        InputError: it is missing, unreadable, not a regular file, or larger than ``limit``.
    """
    path = Path(path)
    try:
        info = path.stat()
    except FileNotFoundError:
        raise InputError(f"{path}: no such {what}") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read {what} ({exc.strerror or exc})") from None
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"{path}: {what} is {file_kind(info.st_mode)}, expected a regular file")
    if limit is not None and info.st_size > limit:
        raise InputError(
            f"{path}: {what} has {info.st_size} bytes, more than the {limit} it may have"
        )
    return path


def read_regular(path: str | os.PathLike[str], limit: int) -> bytes | None:
    """At most ``limit + 1`` bytes of ``path``, or None when it is not a regular file.

    The primitive under :func:`read_bounded` (and the spec reader, which words its own located
    errors). The size is bounded by the bytes actually read, not by ``stat`` (``/dev/zero`` and a
    file that grows while it is read report a small size); the file is opened without blocking
    (opening a FIFO with no writer would hang) and refused unless it is a regular file.

    Raises:
        OSError: it cannot be opened or read (FileNotFoundError when it does not exist).
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        os.set_blocking(fd, True)
        chunks, left = [], limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, _CHUNK))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_bounded(path: str | os.PathLike[str], limit: int, what: str) -> bytes:
    """The bytes of regular file ``path``, refusing more than ``limit`` of them.

    Raises:
        InputError: missing, unreadable, not a regular file (a directory, FIFO, device such as a
            link to ``/dev/zero``), or more than ``limit`` bytes.
    """
    path = regular_file(path, what, limit)
    try:
        data = read_regular(path, limit)
    except OSError as exc:
        raise InputError(f"{path}: cannot read {what} ({exc.strerror or exc})") from None
    if data is None:  # replaced by a special file between the check and the open
        raise InputError(f"{path}: {what} is not a regular file")
    if len(data) > limit:
        raise InputError(f"{path}: {what} has more than the {limit} bytes it may have")
    return data


def read_json(path: str | os.PathLike[str], limit: int, what: str, *, finite: bool = False) -> Any:
    """The JSON document in regular file ``path`` (at most ``limit`` bytes), every key once.

    Python's ``json`` keeps the last of two equal keys without a word: a hand-edited file with a
    second ``"auc"`` would be read as something nobody wrote. With ``finite``, the non-standard
    ``NaN`` and ``Infinity`` that Python's ``json`` accepts are refused too.

    Raises:
        InputError: what :func:`read_bounded` refuses, or not UTF-8 JSON, or a key repeated in one
            object, or (``finite``) a non-finite number; the message names the path and the line.
    """
    data = read_bounded(path, limit, what)
    try:
        text = data.decode("utf-8")
        return json.loads(
            text, object_pairs_hook=_unique_keys, parse_constant=_finite if finite else None
        )
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: {what} is not UTF-8 text ({exc.reason})") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: not a JSON {what} ({exc.msg})") from None
    except _Refused:
        # Only now, on the error path, walk the text again to say where (json gives no offsets).
        found = _first_refused(text, finite)
        problem, offset = found if found else ("a value it refuses", 0)
        line = text.count("\n", 0, offset) + 1
        raise InputError(f"{path}:{line}: {what} has {problem}") from None
    except (ValueError, RecursionError) as exc:
        raise InputError(f"{path}: not a JSON {what} ({exc})") from None


class _Refused(ValueError):
    """A key given twice, or a non-finite number: valid to Python's ``json``, refused here."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) < len(pairs):
        raise _Refused
    return found


def _finite(constant: str) -> Any:
    raise _Refused


_NON_FINITE = ("NaN", "Infinity", "-Infinity")


def _first_refused(text: str, finite: bool) -> tuple[str, int] | None:
    """What :func:`read_json` refuses first in valid JSON ``text`` (in words), and its offset.

    A key given twice in one object, or with ``finite`` a ``NaN`` or ``Infinity`` outside a string;
    None if there is none.
    """
    objects: list[set[str] | None] = []  # the keys seen so far in each open object; None: array
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            value, end = json.decoder.scanstring(text, i + 1)  # type: ignore[attr-defined]
            after = text[end:].lstrip(" \t\r\n")
            keys = objects[-1] if objects else None
            if after.startswith(":") and keys is not None:
                if value in keys:
                    return f"key {value!r} twice in one object; expected each key once", i
                keys.add(value)
            i = end
            continue
        if c == "{":
            objects.append(set())
        elif c == "[":
            objects.append(None)
        elif c in "]}" and objects:
            objects.pop()
        elif finite and text.startswith(_NON_FINITE, i):
            word = next(w for w in _NON_FINITE if text.startswith(w, i))
            return f"the number {word}; expected a finite number", i
        i += 1
    return None


def unlinked_folder(path: str | os.PathLike[str], what: str) -> Path:
    """``path``, after checking that it is not a symlink, nor anything but a folder if it exists.

    The suite's own folders inside a run (``claims/``, ``logs/``) are written by name: a link in
    a folder's place would put the suite's files wherever it points, outside the run.

    Raises:
        InputError: ``path`` is a symlink, or exists and is not a folder.
    """
    path = Path(path)
    if path.is_symlink():
        raise InputError(
            f"{path}: {what} is a symlink (to {os.readlink(path)}); the suite never writes "
            "through a link: remove it"
        )
    with contextlib.suppress(FileNotFoundError):
        mode = path.stat().st_mode
        if not stat.S_ISDIR(mode):
            raise InputError(f"{path}: {what} is {file_kind(mode)}, expected a folder")
    return path


def output_dir(path: str | os.PathLike[str], what: str) -> Path:
    """``path`` as a folder that exists (created with its parents) and can be written into.

    Raises:
        InputError: it is an existing non-folder, lies under one, or cannot be created or written.
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        info = path.stat()
        raise InputError(f"{path}: {what} is {file_kind(info.st_mode)}, expected a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
        # Write access is what matters, and os.access is wrong for root and read-only mounts.
        fd, probe = tempfile.mkstemp(prefix=".opt-suite-probe-", dir=path)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise InputError(f"{path}: cannot write {what} there ({exc.strerror or exc})") from None
    return path


def output_file(path: str | os.PathLike[str], what: str) -> Path:
    """``path`` as a file that can be (re)written: its folder is created; it is not a folder.

    A symlink there is removed (the link, never what it points to): writing through it would
    change a file outside the output folder — a ``leaderboard.md`` linked to ``~/.bashrc`` would
    overwrite it. The write then creates a regular file in the link's place.

    Raises:
        InputError: it is an existing directory, FIFO or device, or its folder cannot be written.
    """
    path = Path(path)
    if path.is_symlink():
        try:
            path.unlink()
        except OSError as exc:
            raise InputError(
                f"{path}: {what} is a symlink that cannot be replaced ({exc.strerror or exc})"
            ) from None
    with contextlib.suppress(OSError):
        mode = path.stat().st_mode
        if not stat.S_ISREG(mode):
            raise InputError(f"{path}: {what} is {file_kind(mode)}, expected a regular file")
    output_dir(path.parent, f"the folder of {what}")
    return path
