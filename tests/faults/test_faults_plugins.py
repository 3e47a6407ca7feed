"""A plugin that ends the process on import is a listed error, not a silent exit 0."""

from __future__ import annotations

import os
import subprocess
import sys

from runner_support import REPO


def test_a_plugin_calling_sys_exit_on_import_is_listed_as_broken(tmp_path):
    info = tmp_path / "exiter-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: exiter\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[opt_suite.methods]\nexiter = exiter_plugin:Exiter\n")
    (info / "RECORD").write_text("exiter_plugin.py,,\n")  # installed: its module is its own
    (tmp_path / "exiter_plugin.py").write_text("import sys\nsys.exit(0)\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    result = subprocess.run(
        [sys.executable, "-m", "opt_suite", "list"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env=env,
    )
    out = result.stdout
    assert "Methods" in out and "primitives" in out, (result.returncode, out, result.stderr)
    assert "ERROR: method 'exiter'" in out and "SystemExit" in out, out
    assert "Traceback" not in result.stderr
