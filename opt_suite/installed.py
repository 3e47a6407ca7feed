"""What a spec may import: modules of installed distributions, checked before anything runs.

A spec names code in three ways: a registered name (``family: fourrooms``, found through the
entry points of :func:`entry_points`), a gymnasium id's ``module:`` part (``"minigrid:Id"``) and
the ``scripted`` source's ``function: "module:function"``. Importing a module runs it, so every
one of them goes through this module, and a module is imported only when :func:`refusal` finds
nothing against it. Nothing is imported to decide: the top-level name is *located* the way
``import`` would locate it (``importlib.util.find_spec`` of a top-level name runs no module code)
and that file must be one an installed distribution put there.

**Installed** means a distribution whose metadata folder (``NAME-VERSION.dist-info``) lies in a
``site-packages`` or ``dist-packages`` folder (a virtual environment, the system, the user's
site, ``pip install --target .../site-packages``) or in a folder the user listed in
``PYTHONPATH`` (``pip install --target DIR`` used with ``PYTHONPATH=DIR``). A ``*.dist-info``
folder anywhere else — beside the spec, in the current folder, which ``python -m opt_suite``
puts first on ``sys.path`` — is ignored: metadata that merely exists proves nothing.

**Refused before import:** a name that is not dotted identifiers; any ``__main__`` module
(``unittest.__main__`` runs unittest, ``venv.__main__`` makes a virtual environment); the
standard library (``sys.stdlib_module_names``: ``antigravity`` opens a browser, ``this`` prints);
a top-level name no installed distribution declares; and a name that *would* be imported from a
file its distribution did not install (a ``minigrid.py`` beside the spec shadows the installed
``minigrid`` under ``python -m``). A module is the distribution's when the located file is in
its ``RECORD``, lies in the project folder of its editable install (``direct_url.json``), or is
a file of the suite's own packages (:data:`OWN_PACKAGES`, wherever this ``opt_suite`` runs
from, e.g. a git worktree on ``PYTHONPATH``).

What this does not do: an installed distribution's own code runs when it is imported (as it does
when any program imports it); the check is of *where* code comes from, not of what it does.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata as metadata
import importlib.util
import inspect
import json
import os
import posixpath
import sys
import urllib.parse
from importlib.metadata import Distribution
from pathlib import Path
from types import ModuleType

__all__ = [
    "INSTALL_FOLDER_NAMES",
    "OWN_PACKAGES",
    "NotInstalled",
    "distributions",
    "entry_points",
    "import_installed",
    "is_installed",
    "refusal",
]

#: Folders that hold installed distributions, by name (virtual environments, system, user site).
INSTALL_FOLDER_NAMES = frozenset({"site-packages", "dist-packages"})

#: The suite's own top-level packages (pyproject.toml's ``packages.find.include``): accepted
#: wherever the running opt_suite was loaded from, so a checkout on PYTHONPATH works like its
#: editable install.
OWN_PACKAGES = ("opt_suite", "baselines")

_SUITE_ROOT = Path(__file__).resolve().parent.parent


class NotInstalled(ValueError):
    """A module a spec may not import; the message says why (nothing was imported)."""


def _cwd() -> str:
    """The current folder (part of the caches' keys: ``''`` on sys.path means it)."""
    try:
        return os.getcwd()
    except OSError:  # it was deleted: nothing can be found through it either
        return ""


def _pythonpath_folders() -> frozenset[Path]:
    """The folders the user listed in PYTHONPATH (empty entries, i.e. the cwd, left out)."""
    entries = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    return frozenset(Path(entry).resolve() for entry in entries if entry)


def _folder(dist: metadata.Distribution) -> Path:
    """The folder holding ``dist``'s metadata folder (relative when found through ``''``)."""
    return Path(str(dist.locate_file(""))).resolve()


def is_installed(dist: metadata.Distribution) -> bool:
    """``dist``'s metadata lies in an install folder; see the module docstring."""
    folder = _folder(dist)
    return folder.name in INSTALL_FOLDER_NAMES or folder in _pythonpath_folders()


def distributions() -> list[metadata.Distribution]:
    """The installed distributions, one per name: the first on ``sys.path``, as import finds it."""
    return list(_distributions(tuple(sys.path), os.environ.get("PYTHONPATH", ""), _cwd()))


@functools.cache  # keyed by what decides the answer: tests add plugin folders to sys.path
def _distributions(
    path: tuple[str, ...], pythonpath: str, cwd: str
) -> tuple[metadata.Distribution, ...]:
    del pythonpath, cwd  # read by is_installed; part of the key only
    seen: set[str] = set()
    found = []
    for dist in metadata.distributions(path=list(path)):
        name = (dist.metadata["Name"] or "").lower().replace("_", "-")
        if name and name not in seen and is_installed(dist):
            seen.add(name)
            found.append(dist)
    return tuple(found)


def entry_points(group: str) -> list[metadata.EntryPoint]:
    """The entry points in ``group`` that installed distributions declare."""
    return [ep for dist in distributions() for ep in dist.entry_points.select(group=group)]


@functools.cache  # reading every RECORD takes ~0.3 s; once per sys.path
def _declaring(path: tuple[str, ...], pythonpath: str, cwd: str) -> dict[str, list[Distribution]]:
    """Top-level module name -> the installed distributions that declare it."""
    found: dict[str, list[Distribution]] = {}
    for dist in _distributions(path, pythonpath, cwd):
        for top in _top_level_names(dist):
            found.setdefault(top, []).append(dist)
    return found


def _top_level_names(dist: metadata.Distribution) -> set[str]:
    """The top-level modules ``dist`` declares (``top_level.txt``, else its installed files)."""
    declared = dist.read_text("top_level.txt")
    if declared:
        return {line.strip() for line in declared.splitlines() if line.strip()}
    names = set()
    for file in dist.files or []:
        top = file.parts[0] if len(file.parts) > 1 else inspect.getmodulename(file.name)
        if top and top.isidentifier():
            names.add(top)
    return names


def refusal(module: str) -> str | None:
    """Why a spec may not import ``module``; None for a module of an installed distribution."""
    return _refusal(module, tuple(sys.path), os.environ.get("PYTHONPATH", ""), _cwd())


@functools.cache  # every env construction asks; the answer is the process's (0.15 s to find)
def _refusal(module: str, path: tuple[str, ...], pythonpath: str, cwd: str) -> str | None:
    parts = module.split(".")
    if not all(part.isidentifier() for part in parts):
        return "expected a dotted module name"
    if "__main__" in parts:
        return "a __main__ module runs a program when imported"
    top = parts[0]
    if top in sys.stdlib_module_names:
        return f"{top!r} is the standard library, not a package of an installed plugin"
    origin = _located(top)
    if top in OWN_PACKAGES and origin is not None and origin.is_relative_to(_SUITE_ROOT / top):
        return None
    dists = _declaring(path, pythonpath, cwd).get(top, [])
    if not dists:
        return (
            f"{top!r} is not a package of an installed distribution (only installed packages are "
            "imported: not the standard library, not a file beside the spec or in the current "
            "folder, and a *.dist-info folder outside site-packages does not install one)"
        )
    if origin is None or not any(_provides(dist, origin) for dist in dists):
        name = dists[0].metadata["Name"]
        return (
            f"{top!r} would be imported from {origin or 'nowhere'}, not from the installed "
            f"distribution {name!r} (a file of that name in the current folder or beside the "
            "spec shadows it)"
        )
    return None


def _located(top: str) -> Path | None:
    """The file ``import top`` would load (a package's ``__init__.py``); nothing is run."""
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or spec.origin in ("built-in", "frozen", "namespace"):
        return None
    return Path(spec.origin).resolve()


def _provides(dist: metadata.Distribution, origin: Path) -> bool:
    """``origin`` is a file ``dist`` installed, or lies in the project of its editable install."""
    if _in_record(dist, origin):
        return True
    text = dist.read_text("direct_url.json") or ""
    try:
        direct = json.loads(text) if text else {}
    except ValueError:
        return False
    if not isinstance(direct, dict) or not isinstance(direct.get("dir_info"), dict):
        return False
    url = urllib.parse.urlparse(str(direct.get("url", "")))
    if direct["dir_info"].get("editable") and url.scheme == "file":
        project = Path(urllib.parse.unquote(url.path)).resolve()  # %20 is a space
        return origin.is_relative_to(project)
    return False


def _in_record(dist: metadata.Distribution, origin: Path) -> bool:
    """``origin`` is listed in ``dist``'s RECORD (compared as paths relative to its folder)."""
    folder = _folder(dist)
    if not origin.is_relative_to(folder):
        return False
    wanted = origin.relative_to(folder).as_posix()
    # normpath, not resolve: resolving every file of a big distribution (numpy) took 0.5 s
    return any(posixpath.normpath(str(file)) == wanted for file in dist.files or [])


def import_installed(module: str) -> ModuleType:
    """Import ``module`` after :func:`refusal` found nothing against it.

    Raises:
      NotInstalled: the refusal (nothing was imported).
      Exception: whatever importing the installed module raised.
    """
    why = refusal(module)
    if why is not None:
        raise NotInstalled(why)
    return importlib.import_module(module)
