"""A worker's start-up output goes to the run's log, never to the user's terminal.

A runner stopped while a worker is still starting (SIGTERM, Ctrl-C, a broken pool) can make the
worker's interpreter start-up fail; its traceback belongs in the run's logs.
"""

from __future__ import annotations

import os

from opt_suite.runner.backends import STARTUP_LOG, _RecordingContext


def _write_to_inherited_stderr() -> None:
    os.write(2, b"start-up marker\n")


def test_worker_startup_stderr_goes_to_the_startup_log(tmp_path, capfd):
    context = _RecordingContext(str(tmp_path / "logs"))
    process = context.Process(target=_write_to_inherited_stderr)
    process.start()
    os.write(2, b"parent after spawn\n")
    process.join(60)
    assert process.exitcode == 0
    assert "start-up marker" in (tmp_path / "logs" / STARTUP_LOG).read_text()
    err = capfd.readouterr().err
    assert "parent after spawn" in err and "start-up marker" not in err
    assert context.processes == [process]


def test_without_a_log_dir_the_worker_keeps_the_runner_stderr(capfd):
    context = _RecordingContext(None)
    process = context.Process(target=_write_to_inherited_stderr)
    process.start()
    process.join(60)
    assert process.exitcode == 0
    assert "start-up marker" in capfd.readouterr().err
