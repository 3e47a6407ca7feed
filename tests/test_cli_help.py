"""Help screens answer at once: they load a command's arguments, never the heavy libraries.

``opt-suite compare --help`` once took 12 s on a loaded machine because declaring ``--metric``
imported the whole report package (SciPy, matplotlib). The time itself is a benchmark
(``benchmarks/bench_spec.py::test_bench_help_screens``); this test holds the cause: what a help
screen imports.
"""

import subprocess
import sys

import pytest

from opt_suite.cli import COMMANDS

HEAVY = ("scipy", "matplotlib", "tensorflow", "numba", "ray")

PROBE = """
import sys
from opt_suite.cli import main
try:
    main([{command!r}, "--help"])
except SystemExit:
    pass
print("loaded:" + ",".join(sorted(m for m in {heavy!r} if m in sys.modules)))
"""


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_imports_no_heavy_library(command):
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(command=command, heavy=HEAVY)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    loaded = result.stdout.strip().splitlines()[-1]
    assert loaded == "loaded:", f"`opt-suite {command} --help` imports {loaded[7:]}"
