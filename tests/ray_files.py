"""Which test files are Ray test files: the one rule tests/conftest.py schedules them by.

xdist's scheduler sees node ids only, so a file with a Ray test says so in its name
(tests/test_test_scheduling.py checks it; a file named so without a Ray test just joins the unit).
"""

from __future__ import annotations

from pathlib import Path


def is_ray_file(nodeid: str) -> bool:
    """Whether ``nodeid`` (a node id or a path) is in a Ray test file: ``_ray`` in its name."""
    return "_ray" in Path(nodeid.split("::", 1)[0]).stem
