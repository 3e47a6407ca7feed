"""The test suite's own scheduling rule (tests/conftest.py): a Ray test's file says so in its name.

xdist's scheduler sees node ids only, and conftest.py puts every file whose name has ``_ray`` in one
unit of work, because the Ray tests take a host-wide lock: a Ray test in a file named otherwise
would run beside them on the other worker, wait on the lock and leave that core idle.
"""

from __future__ import annotations

import re
from pathlib import Path

from ray_files import is_ray_file as _is_ray_file

TESTS = Path(__file__).resolve().parent
RAY_MARK = re.compile(r"pytest\.mark\.ray\b")


def test_every_file_with_a_ray_test_is_named_so():
    misnamed = [
        str(path.relative_to(TESTS))
        for path in sorted(TESTS.rglob("test_*.py"))
        if RAY_MARK.search(path.read_text()) and not _is_ray_file(str(path))
    ]
    assert not misnamed, f"a file with a `ray` test must have '_ray' in its name: {misnamed}"


def test_the_rule_sees_a_ray_file_and_only_one():
    assert _is_ray_file("tests/faults/test_faults_ray_head.py::test_x")
    assert _is_ray_file("tests/test_runner_ray.py")
    assert not _is_ray_file("tests/test_arrays.py::test_x")
    assert not _is_ray_file("tests/test_runner.py::test_ray_like_name")
