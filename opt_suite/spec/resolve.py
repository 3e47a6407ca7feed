"""Which dataclass each ``Any`` field of a spec is read as, found through the registry.

The spec schema leaves six places open, because their shape depends on the names written next to
them:

- ``family.params``      -> the registered family's ``Params``
- ``tasks.vary``         -> the family's ``Variation``
- ``tasks.list[i]``      -> the family's ``TaskParams``
- ``methods[i].params``  -> the method's ``Params``
- ``evaluation.params``  -> the learner's ``Params``
- ``demonstrations.params`` -> the demonstration source's ``Params``

The family is known once ``family`` is read (it comes before ``tasks`` in :class:`Spec`). An unknown
name is reported once, at the name, with a suggestion; its params are then skipped.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from opt_suite import registry
from opt_suite.spec.convert import INVALID
from opt_suite.spec.errors import KeyPath, Mark, Problems, format_path

__all__ = ["SpecTypes"]

_FAMILY_ATTR: dict[KeyPath, str] = {("family", "params"): "Params", ("tasks", "vary"): "Variation"}


class SpecTypes:
    """The resolver of a spec's ``Any`` fields; keeps the classes it loaded for the spec rules.

    Attributes:
      classes: loaded classes by the key path of their section: ``("family",)``,
        ``("methods", i)``, ``("evaluation",)``.
    """

    def __init__(self, problems: Problems) -> None:
        self.problems = problems
        # key path -> where it is written (the converter's), to report at the written name
        self.mark_of: Callable[[KeyPath], Mark] = lambda path: Mark("<spec>", 1, 1)
        self.classes: dict[KeyPath, type] = {}

    def __call__(self, path: KeyPath, siblings: dict[str, Any], mark: Mark) -> type | None:
        """The dataclass to read ``path`` as (None when unknowable; the reason is reported)."""
        if path in _FAMILY_ATTR or path[:2] == ("tasks", "list"):
            if path == ("family", "params"):
                self._load(registry.FAMILIES, siblings.get("name"), ("family",))
            family = self.classes.get(("family",))
            attr = _FAMILY_ATTR.get(path, "TaskParams")
            return (
                None if family is None else self._dataclass(family, attr, ("family",), mark, path)
            )
        if len(path) == 3 and path[0] == "methods" and path[2] == "params":
            section: KeyPath = path[:2]
            cls = self._load(registry.METHODS, siblings.get("method"), section, name_key="method")
            return None if cls is None else self._dataclass(cls, "Params", section, mark, path)
        if path == ("demonstrations", "params"):
            section = ("demonstrations",)
            cls = self._load(
                registry.DEMONSTRATION_SOURCES, siblings.get("source"), section, name_key="source"
            )
            return None if cls is None else self._dataclass(cls, "Params", section, mark, path)
        if path == ("evaluation", "params"):
            section = ("evaluation",)
            cls = self._load(
                registry.LEARNERS, siblings.get("learner"), section, name_key="learner"
            )
            return None if cls is None else self._dataclass(cls, "Params", section, mark, path)
        self.problems.add(mark, path, "cannot be read: no type is known for this key")
        return None

    def _load(self, group: str, name: Any, section: KeyPath, name_key: str = "name") -> type | None:
        if name is INVALID or name is None:  # already reported where the name is written
            return None
        if section not in self.classes:
            where = section + (name_key,)
            try:
                self.classes[section] = registry.load(group, name)
            except registry.RegistryError as exc:
                self.problems.add(self.mark_of(where), where, str(exc))
                return None
            except Exception as exc:  # a broken registry must still give a readable line
                self.problems.add(self.mark_of(where), where, f"cannot load {name!r}: {exc!r}")
                return None
        return self.classes[section]

    def _dataclass(
        self, owner: type, attr: str, section: KeyPath, mark: Mark, path: KeyPath
    ) -> type | None:
        cls = getattr(owner, attr, None)
        if isinstance(cls, type) and dataclasses.is_dataclass(cls):
            return cls
        self.problems.add(
            mark,
            path,
            f"{owner.__qualname__}.{attr} is not a dataclass, so this cannot be read "
            f"(the plugin registered for {format_path(section)} is incomplete)",
        )
        return None
