"""Small JSON files that carry the SHA-256 of their own content: a reader can tell an edit.

The runner caches values it measured (the reference returns of the normalised scores) in JSON
files that later runs and reports trust. A file damaged by a crash of another tool, edited by
hand or replaced by something else must not be read as if the suite wrote it, so each is written
as ``{"digest": sha256(payload), "payload": payload}`` and :func:`read_sealed` refuses any file
whose payload does not hash to its digest. The payload records what the values were computed
from, so the digest covers both (a file moved to another key fails the caller's key check).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from opt_suite.files_guard import InputError, read_bounded
from opt_suite.store.files import write_text_atomic

__all__ = ["SEALED_FILE_LIMIT", "SealedFileError", "digest_of", "read_sealed", "write_sealed"]

#: Largest sealed file read back (bytes): a spec's references (seeds x tasks floats) fit easily.
SEALED_FILE_LIMIT = 64 << 20


class SealedFileError(Exception):
    """A sealed file cannot be trusted; the message names its full path and why."""


def digest_of(payload: Mapping[str, Any]) -> str:
    """Hex SHA-256 of ``payload``'s canonical JSON (key order and whitespace do not matter)."""
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def write_sealed(path: Path, payload: Mapping[str, Any]) -> None:
    """Write ``payload`` with its digest to ``path``, atomically (its folder must exist)."""
    doc = {"digest": digest_of(payload), "payload": dict(payload)}
    write_text_atomic(path, json.dumps(doc, indent=1, allow_nan=False) + "\n")


def read_sealed(path: Path, what: str) -> dict[str, Any]:
    """The payload of the sealed file ``path``, after checking that it hashes to its digest.

    Raises:
        SealedFileError: the file is not a regular file of at most :data:`SEALED_FILE_LIMIT`
            bytes, not JSON, not an object with ``digest`` and ``payload``, or edited (its payload
            does not hash to the digest); the message starts with the full path.
    """
    where = Path(path).absolute()
    try:
        data = read_bounded(where, SEALED_FILE_LIMIT, what)
        doc = json.loads(data.decode("utf-8"))
    except InputError as exc:
        raise SealedFileError(str(exc)) from None
    except ValueError as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise SealedFileError(f"{where}: {what} is not JSON ({exc})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("payload"), dict):
        raise SealedFileError(
            f"{where}: {what} is a JSON {type(doc).__name__} without a digest and payload,"
            " expected an object written by opt-suite"
        )
    try:
        matches = doc.get("digest") == digest_of(doc["payload"])
    except ValueError:  # NaN or infinity typed into the payload: allow_nan=False refuses them
        matches = False
    if not matches:
        raise SealedFileError(
            f"{where}: {what} does not match its digest (edited or damaged since it was written)"
        )
    return doc["payload"]
