"""Finding a gymnasium env by id: registering its package first, and saying what to install.

Gymnasium ids come in two forms: ``"CartPole-v1"`` (already registered) and ``"module:Id"``
(import ``module`` first, for packages that register their envs on import — gymnasium's own
convention in ``gymnasium.make``). Some packages register only when asked: MinAtar 1.0.15 needs
``minatar.gym.register_envs()``. :data:`PROVIDERS` knows those by their id prefix, so that a spec
can name ``MinAtar/Breakout-v1`` without a ``module:`` part, and an id whose package is missing is
reported with the ``pip install`` that provides it.

Naming a module runs its import, as installing a plugin does, so a spec may name only a module of
an installed distribution (:func:`installed_module`): never a ``__main__`` module
(``unittest.__main__`` runs unittest), never the standard library, and never a file in the spec's
folder or the current directory, not even one that shadows an installed package's name.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import importlib
import importlib.metadata
import importlib.util
import json
from pathlib import Path

import gymnasium

__all__ = ["PROVIDERS", "Provider", "UnknownEnvId", "installed_module", "register_id"]


@dataclasses.dataclass(frozen=True)
class Provider:
    """The package behind a family of gymnasium ids.

    Attributes:
      module: the module to import (its import registers the ids, unless ``register`` is set).
      register: a function of ``module`` that registers the ids, for packages that need the call.
      install: what to run when the module is missing.
    """

    module: str
    register: str | None
    install: str


#: Id prefix -> the package that registers those ids.
PROVIDERS: dict[str, Provider] = {
    "MinAtar/": Provider("minatar.gym", "register_envs", "pip install 'opt-suite[minatar]'"),
    "MiniGrid-": Provider("minigrid", None, "pip install 'opt-suite[minigrid]'"),
    "BabyAI-": Provider("minigrid", None, "pip install 'opt-suite[minigrid]'"),
    "ALE/": Provider("ale_py", None, "pip install ale-py"),
}


class UnknownEnvId(ValueError):
    """An id that no registered (or registrable) gymnasium env has; the message says why."""


def register_id(env_id: str) -> str:
    """Make sure ``env_id`` is registered with gymnasium; return it without any ``module:`` part.

    Raises:
      UnknownEnvId: the module cannot be imported, or the id is still unknown after importing it
        (with the closest registered ids and, for a known prefix, the package to install).
    """
    module, _, bare = env_id.rpartition(":")
    if module:
        refused = installed_module(module)
        if refused:
            raise UnknownEnvId(f"{env_id!r}: module {module!r} is not imported: {refused}")
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise UnknownEnvId(f"{env_id!r}: cannot import module {module!r} ({exc})") from None
    if bare in gymnasium.registry:
        return bare
    prefix = next((prefix for prefix in PROVIDERS if bare.startswith(prefix)), None)
    if prefix is not None:
        provider = PROVIDERS[prefix]
        try:
            package = importlib.import_module(provider.module)
        except ImportError:
            raise UnknownEnvId(
                f"{bare!r} is provided by the {provider.module.split('.')[0]} package, which is "
                f"not installed: {provider.install}"
            ) from None
        registered = any(known.startswith(prefix) for known in gymnasium.registry)
        if provider.register is not None and not registered:  # twice would warn of overrides
            getattr(package, provider.register)()
    if bare in gymnasium.registry:
        return bare
    close = difflib.get_close_matches(bare, list(gymnasium.registry), n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    raise UnknownEnvId(f"{bare!r} is not a registered gymnasium id{hint}")


@functools.cache  # every env construction asks; the answer is the process's (0.15 s to find)
def installed_module(module: str) -> str | None:
    """Why an id may not import ``module``; None when it is a module of an installed distribution.

    Only the top-level name is located (``find_spec`` of a top-level name imports nothing), exactly
    where ``import`` would find it, and that file must be one its distribution installed (or lie in
    the project of an editable install): a ``.py`` beside the spec or in the current directory is
    found first by ``python -m opt_suite`` and would otherwise run.
    """
    parts = module.split(".")
    if not all(part.isidentifier() for part in parts):
        return "expected a dotted module name"
    if "__main__" in parts:
        return "a __main__ module runs a program when imported"
    top = parts[0]
    names = importlib.metadata.packages_distributions().get(top)
    if not names:
        return (
            f"{top!r} is not a package of an installed distribution (an id imports only installed "
            "packages: not the standard library, not a file beside the spec or in the current "
            "folder)"
        )
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        spec = None
    origin = None if spec is None else _location(spec)
    dists = [d for d in importlib.metadata.distributions() if d.metadata["Name"] in names]
    if origin is None or not any(_provides(dist, origin) for dist in dists):
        return (
            f"{top!r} would be imported from {origin or 'nowhere'}, not from the installed "
            f"distribution {names[0]!r} (a file of that name in the current folder or beside the "
            "spec shadows it)"
        )
    return None


def _location(spec: importlib.machinery.ModuleSpec) -> Path | None:
    """The file a top-level module is loaded from (a package's ``__init__.py``)."""
    if spec.origin and spec.origin not in ("built-in", "frozen", "namespace"):
        return Path(spec.origin).resolve()
    return None


def _provides(dist: importlib.metadata.Distribution, origin: Path) -> bool:
    """``origin`` is a file ``dist`` installed, or lies in the project of its editable install."""
    installed = {Path(str(dist.locate_file(f))).resolve() for f in dist.files or []}
    if origin in installed:
        return True
    text = dist.read_text("direct_url.json") or ""
    try:
        direct = json.loads(text) if text else {}
    except ValueError:
        return False
    url = str(direct.get("url", ""))
    if direct.get("dir_info", {}).get("editable") and url.startswith("file://"):
        return origin.is_relative_to(Path(url.removeprefix("file://")).resolve())
    return False
