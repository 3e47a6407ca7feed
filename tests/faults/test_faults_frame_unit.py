"""A run's recorded family facts (its frame unit) edited or damaged: one line, exit 2."""

from __future__ import annotations

import contextlib
import sqlite3

import pytest
from report_fakes import linear_table, write_store

from opt_suite.cli import main

RECORDED = {"name": "chain", "frame_unit": "env steps"}


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("{not json", "is damaged (JSONDecodeError"),
        ('{"name": "chain", "frame_unit": ""}', "frame_unit is '', expected a non-empty string"),
        ("[1, 2]", "is damaged (TypeError"),
    ],
)
def test_a_damaged_frame_unit_record_is_one_line_and_exit_2(tmp_path, capsys, value, said):
    run = write_store(tmp_path / "run", linear_table({"a": 0.0}, 1, 1), recorded_family=RECORDED)
    with contextlib.closing(sqlite3.connect(run / "results.sqlite")) as db, db:
        db.execute("UPDATE meta SET value = ? WHERE key LIKE 'run_family:%'", (value,))
    assert main(["report", str(run)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and said in err and "Traceback" not in err
    assert str(run / "results.sqlite") in err  # the file that holds it
    assert not (run / "leaderboard.md").exists()  # nothing plausible written from it
