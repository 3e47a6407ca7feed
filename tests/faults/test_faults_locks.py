"""A run directory on a file system that drops ``flock`` locks: the cell claims that keep two
runners of one directory apart would do nothing there, so ``opt-suite run`` says so in one line —
and one runner there still completes (nothing it needs is a lock held against itself)."""

from __future__ import annotations

import fcntl
import types

import pytest
from runner_support import done_cells, fakes, run_cli, write_spec  # noqa: F401  (fixture)

from opt_suite.store import filesystems

pytestmark = pytest.mark.usefixtures("fakes")


def test_a_file_system_that_loses_locks_is_one_warning_line_and_the_run_completes(
    tmp_path, capsys, monkeypatch
):
    # What a file system that drops flock does: every lock "succeeds".
    dropping = types.SimpleNamespace(
        flock=lambda fd, operation: None, LOCK_EX=fcntl.LOCK_EX, LOCK_NB=fcntl.LOCK_NB
    )
    monkeypatch.setattr(filesystems, "fcntl", dropping)
    out = tmp_path / "out"
    assert run_cli(write_spec(tmp_path), "--out", out, "--workers", "0", "--no-report") == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if "flock" in line]
    assert warnings == [
        f"warning: --out {out}: this file system does not enforce flock locks (a probe locked one"
        " file twice), so the cell claims that keep two runners of one directory apart do"
        " nothing here: run one runner per directory (or shards, docs/scaling.md)"
    ]
    assert done_cells(out) == 22  # 2 seeds x (2 discoveries + 2 x 3 evaluations + 3 references)
    assert not list(tmp_path.glob(".opt-suite-flock-probe-*"))


def test_a_local_disk_enforces_flock_and_keeps_no_probe(tmp_path):
    assert filesystems.flock_enforced(tmp_path / "not" / "made" / "yet") is True
    assert filesystems.lost_locks_warning(tmp_path) is None
    assert list(tmp_path.iterdir()) == []
