"""Install a one-module plugin distribution into a folder, as pip would, for in-process tests.

What ``pip install --target DIR/site-packages`` leaves for a one-file package: the module and a
``NAME-0.1.dist-info`` folder whose ``RECORD`` lists both, so opt_suite/installed.py's check (a
module of an installed distribution) accepts it once the folder is on ``sys.path``.
"""

from __future__ import annotations

from pathlib import Path


def install_module(folder: Path, name: str, source: str, version: str = "0.1") -> Path:
    """Write module ``name`` (``source``) and its dist-info into ``folder``; return ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.py").write_text(source)
    info = folder / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "top_level.txt").write_text(f"{name}\n")
    files = [f"{name}.py", *(f"{info.name}/{f}" for f in ("METADATA", "top_level.txt", "RECORD"))]
    (info / "RECORD").write_text("".join(f"{f},,\n" for f in files))
    return folder
