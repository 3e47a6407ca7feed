"""Which code computes a registered class's cells: its package, version and source digest.

A cell's id includes :func:`provider` of its family, method, learner and demonstration source, so
that a plugin released (or reinstalled) at a new version gets new cells instead of silently reusing
what its old code computed. A version alone misses an edit to a package installed in editable mode
(or to opt_suite's own checkout): its version stays, its code does not. So the provider also names
a digest of the Python source of the class's top-level package, and any edit to that source gives
new cell ids (a comment too: telling a comment from code is not worth a wrong reuse).
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import sys
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

__all__ = ["code_fingerprint", "provider", "source_digest"]

# Hex digits of the source digest kept in a provider string (64 bits: no accidental collision).
DIGEST_CHARS = 16


def _distributions() -> dict[str, list[str]]:
    return _distributions_on(tuple(sys.path))


@functools.cache  # keyed by what decides the answer (sys.path), as installed.py's caches are
def _distributions_on(path: tuple[str, ...]) -> dict[str, list[str]]:
    # Scanning every distribution takes ~0.3 s: once per import path, so a plugin folder put on
    # sys.path is seen, and a process that puts one there and takes it off again (the tests' fake
    # plugin, in hundreds of tests) scans each path once instead of once per plan.
    # One name once: an editable install is found twice when its checkout is on sys.path (its
    # egg-info beside the installed dist-info: `python -m opt_suite` run from the checkout, or
    # pytest's rootdir), and a cell's id must not depend on the working directory.
    del path  # packages_distributions() reads sys.path itself; part of the key only
    return {top: sorted(set(names)) for top, names in metadata.packages_distributions().items()}


def provider(cls: type | None) -> str | None:
    """``"<distribution> <version> src <digest>"`` of the package whose module defines ``cls``.

    None for None; ``"unpackaged src <digest>"`` for a class defined outside any installed
    distribution (e.g. in a test file). The digest is :func:`source_digest` of the top-level
    package (``src ?`` when its source cannot be found, e.g. a class made in ``__main__``).
    """
    if cls is None:
        return None
    return _module_provider(cls.__module__.split(".")[0])


def _module_provider(top: str) -> str:
    names = _distributions().get(top, [])
    package = ", ".join(f"{name} {_version(name)}" for name in names) if names else "unpackaged"
    return f"{package} src {source_digest(top) or '?'}"


@functools.cache
def _version(name: str) -> str:
    # Once per process, as the source digest: reading a distribution's metadata parses its file
    # (about 20 ms), and the planner names a provider for every cell (a 1,000-cell plan spent 47
    # of its 53 s planning here). An upgrade mid-process is not seen, as an edit is not.
    return metadata.version(name)


@functools.cache
def source_digest(top: str) -> str | None:
    """SHA-256 (first :data:`DIGEST_CHARS` hex digits) of the ``.py`` files of module ``top``.

    For a package, every ``.py`` file under its folder, by relative path and content; for a plain
    module, its file. Computed once per process (a package's source is not edited mid-run, and the
    runner plans every cell in one go). None when the module has no source file on disk.
    """
    module = sys.modules.get(top)
    file = getattr(module, "__file__", None)
    if module is None or file is None or top == "__main__":
        return None
    path = Path(file)
    if path.name == "__init__.py":
        root = path.parent
        files = sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)
    else:
        root, files = path.parent, [path]
    digest = hashlib.sha256()
    for source in files:
        try:
            content = source.read_bytes()
        except OSError:
            return None
        name = source.relative_to(root).as_posix().encode()
        # Length-prefixed, so that no two file lists hash the same bytes.
        digest.update(b"%d:%s%d:" % (len(name), name, len(content)))
        digest.update(content)
    return digest.hexdigest()[:DIGEST_CHARS]


def code_fingerprint(modules: Sequence[str]) -> dict[str, str]:
    """Top-level module -> :func:`provider` string (distribution, version, source digest).

    Run on every node of a Ray cluster (runner/ray_cluster.py) to check that each computes cells
    with the code whose versions and digests the driver hashes into the cell ids. Imports each
    module: one a node cannot import raises there, naming it.
    """
    for top in modules:
        importlib.import_module(top)
    return {top: _module_provider(top) for top in modules}
