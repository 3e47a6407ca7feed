"""One directory, one spec: a runner of another spec is refused while one runs; reports are always
of the invoking run's spec."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import time

import pytest
from runner_support import (
    REPO,
    cli_command,
    done_cells,
    fakes,  # noqa: F401  (fixture)
    run_cli,
    write_spec,
)

from opt_suite.store.writer import DirectoryInUse, StoreWriter

pytestmark = pytest.mark.usefixtures("fakes")


def begin(writer, spec_hash, name="x"):
    return writer.begin_run(
        spec_name=name,
        spec_hash=spec_hash,
        spec_yaml=f"name: {name}\n",
        provenance={"versions": {}},
        backend="local",
        workers=1,
        seeds=[0],
        argv=[],
    )


def test_a_live_run_of_another_spec_refuses_a_new_one(tmp_path):
    writer = StoreWriter(tmp_path)
    begin(writer, "aaaa", "first")  # this process is alive and its run is 'running'
    begin(writer, "aaaa", "first")  # the same spec may share the directory
    with pytest.raises(DirectoryInUse, match=r"spec 'first' \(aaaa; pid \d+"):
        begin(writer, "bbbb", "second")
    assert (tmp_path / "spec.yaml").read_text() == "name: first\n"  # untouched by the refusal
    writer.close()


def test_a_dead_or_finished_run_of_another_spec_does_not_block(tmp_path):
    writer = StoreWriter(tmp_path)
    run = begin(writer, "aaaa")
    writer.finish_run(run, "done", {})
    begin(writer, "bbbb")  # finished: the directory may change spec (unchanged cells reused)
    dead = _dead_pid()
    writer.conn.execute("UPDATE runs SET pid = ?, status = 'running'", (dead,))
    begin(writer, "cccc")  # killed -9 on this host: its pid is gone
    writer.close()


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_runner_of_another_spec_is_refused_and_reports_stay_with_their_spec(tmp_path):
    # spec-a's evaluations wait while `hold` exists, so spec-a is surely still running when spec-b
    # is tried (sleeps raced a loaded machine: spec-a could end first, and spec-b then ran).
    hold = tmp_path / "hold"
    hold.touch()
    spec_a = write_spec(tmp_path, learner={"hold_while_exists": str(hold)}, seeds=2, name="spec-a")
    spec_b = write_spec(tmp_path, seeds=1, name="spec-b", file="b.yaml")
    out = tmp_path / "out"
    first = subprocess.Popen(
        cli_command(spec_a, "--out", out, "--workers", "1", "--quiet"),
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # Generous: on a loaded machine the first run's start (TensorFlow's import) alone can
        # take a minute; spec-b must be tried only once spec-a holds the folder.
        deadline = time.monotonic() + 300
        while done_cells(out) < 1 and time.monotonic() < deadline and first.poll() is None:
            time.sleep(0.05)
        assert first.poll() is None, "spec-a finished before spec-b could be started"
        assert done_cells(out) >= 1, "spec-a computed no cell within 300 s"
        code = run_cli(spec_b, "--out", out, "--workers", "0", "--quiet")
        assert code == 2
        hold.unlink()
        _, err = first.communicate(timeout=300)
    finally:  # a failure above must not leave spec-a running (or its pipes open) for later tests
        if first.poll() is None:
            first.kill()
            first.communicate()
    assert first.returncode == 0, err
    board = json.loads((out / "leaderboard.json").read_text())
    assert board["spec"]["name"] == "spec-a"
    # Afterwards, spec-b may run there: its reports are of spec-b.
    assert run_cli(spec_b, "--out", out, "--workers", "0", "--quiet") == 0
    assert json.loads((out / "leaderboard.json").read_text())["spec"]["name"] == "spec-b"
    with sqlite3.connect(out / "results.sqlite") as conn:
        names = [r[0] for r in conn.execute("SELECT spec_name FROM runs ORDER BY run_id")]
    assert names == ["spec-a", "spec-b"]


def test_reports_follow_the_invoking_spec_even_if_another_ran_later(tmp_path):
    from opt_suite.report import write_reports
    from opt_suite.spec import load_spec, spec_hash

    spec_a = write_spec(tmp_path, seeds=1, name="spec-a")
    spec_b = write_spec(tmp_path, seeds=1, name="spec-b", file="b.yaml")
    out = tmp_path / "out"
    assert run_cli(spec_a, "--out", out, "--workers", "0", "--quiet", "--no-report") == 0
    assert run_cli(spec_b, "--out", out, "--workers", "0", "--quiet", "--no-report") == 0
    write_reports(out, spec_hash(load_spec(spec_a)))
    assert json.loads((out / "leaderboard.json").read_text())["spec"]["name"] == "spec-a"
    write_reports(out)  # default: the latest run
    assert json.loads((out / "leaderboard.json").read_text())["spec"]["name"] == "spec-b"
    assert os.path.exists(out / "spec.yaml")
