"""The specs that ship with opt_suite, found both in a checkout and in an installed package.

The YAML files live in the repository's ``specs/`` folder. ``opt_suite/bundled_specs`` is a symlink
to that folder, so that the wheel (``package-data``: ``bundled_specs/*.yaml``) carries copies of the
same files; where the symlink is not available (a checkout without symlinks) the repository folder
is used directly.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["bundled_specs_dir", "bundled_specs", "find_spec"]

_PACKAGED = Path(__file__).resolve().parent.parent / "bundled_specs"
_CHECKOUT = Path(__file__).resolve().parents[2] / "specs"


def bundled_specs_dir() -> Path | None:
    """The folder holding the bundled spec files (None if neither place has any)."""
    for folder in (_PACKAGED, _CHECKOUT):
        if folder.is_dir() and any(folder.glob("*.yaml")):
            return folder
    return None


def bundled_specs() -> list[Path]:
    """The bundled spec files, sorted by name."""
    folder = bundled_specs_dir()
    return sorted(folder.glob("*.yaml")) if folder else []


def find_spec(name_or_path: str) -> Path:
    """A spec file path: ``name_or_path`` itself if it exists, else the bundled spec of that name.

    ``opt-suite validate fourrooms-quick`` thus works from any folder. A name that matches nothing
    is returned unchanged, so that reading it reports the missing file.
    """
    path = Path(name_or_path)
    if path.exists() or path.suffix in (".yaml", ".yml") or len(path.parts) > 1:
        return path
    for candidate in bundled_specs():
        if candidate.stem == name_or_path:
            return candidate
    return path
