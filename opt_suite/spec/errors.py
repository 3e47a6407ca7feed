"""Where a spec problem is, what it is, and the error that carries all of them at once.

Every problem becomes one line, ``file:LINE:COL: key.path: message`` (1-based line and column, the
key path written like ``methods[1].params.lambda2``), so that editors and CI logs can jump
to it. The loader never stops at the first problem: it collects them all and raises one
:class:`SpecError`.
"""

from __future__ import annotations

import dataclasses
import re

__all__ = ["Mark", "KeyPath", "format_path", "Problem", "Problems", "SpecError"]

# A place in the spec: field names and list indices from the top, e.g. ("methods", 1, "name").
KeyPath = tuple[str | int, ...]

ROOT_LABEL = "(spec)"
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


@dataclasses.dataclass(frozen=True, order=True)
class Mark:
    """A 1-based position in a file (as shown to users)."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


def format_path(path: KeyPath) -> str:
    """Write a key path as users read it: ``methods[1].params.lambda2``.

    The root ``()`` is written ``(spec)``: problems about the whole file are about it.
    """
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif _PLAIN_KEY.fullmatch(part):
            text += f".{part}" if text else part
        else:  # a key with spaces, dots or newlines stays one readable token
            text += f"[{part!r}]"
    return text or ROOT_LABEL


@dataclasses.dataclass(frozen=True, order=True)
class Problem:
    """One thing wrong with a spec, at one place."""

    mark: Mark
    path: KeyPath = dataclasses.field(compare=False)
    message: str = dataclasses.field(compare=False)

    def __str__(self) -> str:
        return f"{self.mark}: {format_path(self.path)}: {self.message}"


class Problems:
    """Collects problems while a spec is read; shown in file order, each line once.

    Args:
      root: the file being validated. A problem located in another file (a parent it
        ``extends``) names the root first — ``child.yaml: inherited from base.yaml:61:13: ...`` —
        since a child's change (e.g. renaming a method a parent's ``report.baseline`` names) can
        surface at the parent's line, and the user must see which file they validated.
    """

    def __init__(self, root: str | None = None) -> None:
        self._items: list[Problem] = []
        self.root = root

    def add(self, mark: Mark, path: KeyPath, message: str) -> None:
        """Record that ``path`` (written at ``mark``) has the problem ``message``."""
        self._items.append(Problem(mark, tuple(path), message))

    def __len__(self) -> int:
        return len(self._items)

    def any_under(self, path: KeyPath) -> bool:
        """Whether a problem was reported at ``path`` or below it."""
        return any(p.path[: len(path)] == tuple(path) for p in self._items)

    def lines(self) -> list[str]:
        """One line per problem, sorted by file, line and column (stable), without duplicates."""
        seen: set[str] = set()
        out = []
        for problem in sorted(self._items):
            line = str(problem)
            if self.root is not None and problem.mark.file != self.root:
                line = f"{self.root}: inherited from {line}"
            if line not in seen:
                seen.add(line)
                out.append(line)
        return out

    def raise_if_any(self) -> None:
        """Raise :class:`SpecError` with every problem, if there is any."""
        if self._items:
            raise SpecError(self.lines())


class SpecError(Exception):
    """A spec that cannot be used; ``problems`` holds every problem found, one line each."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        count = len(self.problems)
        header = f"{count} problem{'s' if count != 1 else ''} in spec"
        super().__init__("\n".join([header, *self.problems]))
