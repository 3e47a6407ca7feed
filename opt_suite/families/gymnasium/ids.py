"""Finding a gymnasium env by id: registering its package first, and saying what to install.

Gymnasium ids come in two forms: ``"CartPole-v1"`` (already registered) and ``"module:Id"``
(import ``module`` first, for packages that register their envs on import — gymnasium's own
convention in ``gymnasium.make``). Some packages register only when asked: MinAtar 1.0.15 needs
``minatar.gym.register_envs()``. :data:`PROVIDERS` knows those by their id prefix, so that a spec
can name ``MinAtar/Breakout-v1`` without a ``module:`` part, and an id whose package is missing is
reported with the ``pip install`` that provides it.

Naming a module runs its import, as installing a plugin does, so a spec may name only a module of
an installed distribution, checked before anything is imported (:mod:`opt_suite.installed`, the
one check every name a spec gives to code goes through): never a ``__main__`` module, never the
standard library, never a file in the spec's folder or the current directory (not even one that
shadows an installed package's name), and a ``*.dist-info`` folder outside site-packages installs
nothing. The packages of :data:`PROVIDERS` are imported through the same check.
"""

from __future__ import annotations

import dataclasses
import difflib

import gymnasium

from opt_suite.installed import NotInstalled, import_installed

__all__ = ["PROVIDERS", "Provider", "UnknownEnvId", "register_id"]


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
    # The suite's own MiniGrid envs (the sub-goal family): registered when their module is imported.
    "OptSuite/MiniGrid-": Provider(
        "opt_suite.families.gymnasium.minigrid_subgoals", None, "pip install 'opt-suite[minigrid]'"
    ),
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
        try:
            import_installed(module)
        except NotInstalled as exc:
            raise UnknownEnvId(f"{env_id!r}: module {module!r} is not imported: {exc}") from None
        except ImportError as exc:
            raise UnknownEnvId(f"{env_id!r}: cannot import module {module!r} ({exc})") from None
    if bare in gymnasium.registry:
        return bare
    prefix = next((prefix for prefix in PROVIDERS if bare.startswith(prefix)), None)
    if prefix is not None:
        provider = PROVIDERS[prefix]
        try:
            package = import_installed(provider.module)
        except NotInstalled as exc:
            raise UnknownEnvId(
                f"{bare!r} is provided by the {provider.module.split('.')[0]} package, which is "
                f"not imported ({exc}); to install it: {provider.install}"
            ) from None
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
