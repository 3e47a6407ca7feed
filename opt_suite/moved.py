"""Old import paths of moved modules, kept working for one minor version with a DeprecationWarning.

A plugin written against 0.2.0 imports ``opt_suite.families.fourrooms``; since 0.3.0 the module is
``opt_suite.families.tabular.fourrooms``. Importing an old path (:data:`MOVED_MODULES`) gives the
new module itself — the same object, so ``isinstance`` and the registry agree — and warns, naming
the new path and the version that drops the old one (:data:`REMOVED_IN`). One old path is now a
package of the same name (``opt_suite.families.atari``): its old names (:data:`MOVED_NAMES`) are
answered by the package's ``__getattr__`` through :func:`moved_name`, with the same warning.

The table is the one record of what moved (``git log --diff-filter=R`` of ``opt_suite/``);
``CHANGELOG.md`` lists the same paths, and ``tests/test_moved_modules.py`` imports every one of
them. :func:`install` puts the finder last on ``sys.meta_path`` (``import opt_suite`` does it), so
it is asked only for a name no module on disk has.

This module imports nothing of the package: ``opt_suite/__init__.py`` installs it first.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings
from collections.abc import Sequence
from typing import Any

__all__ = ["MOVED_MODULES", "MOVED_NAMES", "REMOVED_IN", "install", "moved_name"]

#: The version whose release drops the old paths below.
REMOVED_IN = "0.4.0"

#: Old module path -> the module it is now.
MOVED_MODULES: dict[str, str] = {
    # 0.3.0: families grouped by kind (tabular/, atari/, gymnasium/), ppo_expert among the sources
    "opt_suite.families.chain": "opt_suite.families.tabular.chain",
    "opt_suite.families.fourrooms": "opt_suite.families.tabular.fourrooms",
    "opt_suite.families.grid_dynamics": "opt_suite.families.tabular.grid_dynamics",
    "opt_suite.families.hallway_options": "opt_suite.families.tabular.hallway_options",
    "opt_suite.families.layouts": "opt_suite.families.tabular.layouts",
    "opt_suite.families.tabular_task": "opt_suite.families.tabular.task",
    "opt_suite.families.atari_threads": "opt_suite.families.atari.threads",
    "opt_suite.families.gymnasium_env": "opt_suite.families.gymnasium.env",
    "opt_suite.families.gymnasium_family": "opt_suite.families.gymnasium.family",
    "opt_suite.families.gymnasium_ids": "opt_suite.families.gymnasium.ids",
    "opt_suite.agents.source": "opt_suite.demonstrations.ppo_expert",
    # 0.2.0: the option networks left offline_options (every method builds them)
    "opt_suite.methods.offline_options.conv": "opt_suite.option_networks.conv",
    "opt_suite.methods.offline_options.features": "opt_suite.option_networks.features",
    "opt_suite.methods.offline_options.networks": "opt_suite.option_networks.networks",
}

#: Old module path that is now a package of the same name -> {old name: module that has it now}.
MOVED_NAMES: dict[str, dict[str, str]] = {
    # 0.3.0: sampling demonstrations from a trained expert is the demonstration source's job
    "opt_suite.agents.expert": dict.fromkeys(
        (
            "AgentDemonstrations",
            "CutDemonstration",
            "collect_agent_demonstrations",
            "cut_message",
            "reports_lives",
            "sample_demonstration",
            "task_caps",
        ),
        "opt_suite.demonstrations.agent_sampling",
    ),
    "opt_suite.families.atari": dict.fromkeys(
        (
            "Atari",
            "AtariTaskEnv",
            "Params",
            "Variation",
            "TaskParams",
            "installed_games",
            "make_vector_env",
        ),
        "opt_suite.families.atari.family",
    ),
}


def _warn(old: str, new: str, stacklevel: int) -> None:
    """Warn at the importer's line, ``stacklevel`` frames up from the caller of this function.

    ``warnings.warn`` itself skips the import machinery's frames (``importlib._bootstrap``).
    """
    warnings.warn(
        f"{old} moved to {new}; import it from there (the old path goes in {REMOVED_IN}, see "
        "CHANGELOG.md)",
        DeprecationWarning,
        stacklevel=stacklevel + 1,
    )


def moved_name(package: str, name: str) -> Any:
    """An old name of ``package`` (a module that became a package), from where it is now.

    For the package's module ``__getattr__``. Raises AttributeError for any other name, as a
    module without the attribute would.
    """
    new = MOVED_NAMES.get(package, {}).get(name)
    if new is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    _warn(f"{package}.{name}", f"{new}.{name}", 3)  # this, the package's __getattr__, the importer
    return getattr(importlib.import_module(new), name)


class _MovedFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds each old path of :data:`MOVED_MODULES`; loading it gives the new module."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: types.ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED_MODULES:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None  # the default module; exec_module puts the new one in its place

    def exec_module(self, module: types.ModuleType) -> None:
        old, new = module.__name__, MOVED_MODULES[module.__name__]
        _warn(old, new, 2)  # this, then the importer (past the import machinery)
        # The import system returns whatever sys.modules holds for the name once this returns.
        sys.modules[old] = importlib.import_module(new)


_FINDER = _MovedFinder()


def install() -> None:
    """Answer the old paths (idempotent); last on ``sys.meta_path``, after every real module."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.append(_FINDER)
