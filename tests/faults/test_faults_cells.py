"""Corrupted cell files and store bytes: recomputed by the next run, refused by report/compare.

"Clear error or correct result": after any corruption, ``opt-suite report``/``compare`` either
exit 2 naming the problem or give exactly the numbers of the intact run; ``opt-suite run`` either
recomputes what fails verification (ending with the intact run's numbers) or exits 2 saying what
to do.
"""

from __future__ import annotations

import json
import shutil
import sqlite3

import numpy as np
import pytest
from runner_support import (
    PLUGIN,
    fakes,  # noqa: F401  (fixture)
    forget_registered,
    method,
    numbers,
    register_plugin,
    run_cli,
    write_spec,
)

from opt_suite.cli import main


def cells_of(directory, kind, method="demo"):
    """Done cells of ``kind`` (of ``method``, except demonstrations), by seed."""
    with sqlite3.connect(directory / "results.sqlite") as conn:
        return [
            r[0]
            for r in conn.execute(
                "SELECT cell_id FROM cells WHERE kind = ? AND status = 'done' "
                "AND (method IS NULL OR method = ?) ORDER BY seed",
                (kind, method),
            )
        ]


@pytest.fixture(scope="module")
def intact_once(tmp_path_factory):
    """The intact run (its spec, its folder with reports, its baseline) and its numbers, computed
    once for the module: each test corrupts a copy of it (``intact``)."""
    folder = tmp_path_factory.mktemp("intact")
    with pytest.MonkeyPatch.context() as monkeypatch:
        register_plugin(monkeypatch, PLUGIN)
        methods = (
            method("none", num_options=0),
            method("demo", "fake_demo_options", num_options=2),
        )
        spec = write_spec(folder, methods=methods, seeds=3)
        out = folder / "run"
        assert run_cli(spec, "--out", out, "--workers", "0", "--quiet") == 0
        baseline = folder / "baseline.json"
        assert main(["report", str(out), "--export-baseline", str(baseline)]) == 0
        intact_numbers = numbers(out)
    forget_registered()
    return folder, spec.name, intact_numbers


@pytest.fixture
def intact(fakes, tmp_path, intact_once):  # noqa: F811
    folder, spec_name, intact_numbers = intact_once
    shutil.copytree(folder, tmp_path, dirs_exist_ok=True)
    return tmp_path / spec_name, tmp_path / "run", tmp_path / "baseline.json", intact_numbers


def rerun(capsys, spec, out):
    capsys.readouterr()
    code = run_cli(spec, "--out", out, "--workers", "0", "--quiet")
    return code, capsys.readouterr().err


def truncate(path):
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def test_a_truncated_option_set_is_recomputed(intact, capsys):
    spec, out, _, before = intact
    cell = cells_of(out, "discovery")[-1]
    truncate(out / "cells" / cell / "options.npz")
    code, err = rerun(capsys, spec, out)
    assert code == 0, err
    assert f"[cell {cell}]: its file" in err and "altered or truncated" in err
    assert numbers(out) == before


def test_swapped_option_sets_are_recomputed_not_used(intact, capsys):
    spec, out, _, before = intact
    a, b = cells_of(out, "discovery")[-2:]
    fa, fb = (out / "cells" / c / "options.npz" for c in (a, b))
    data_a, data_b = fa.read_bytes(), fb.read_bytes()
    assert data_a != data_b
    fa.write_bytes(data_b)
    fb.write_bytes(data_a)
    code, err = rerun(capsys, spec, out)
    assert code == 0 and f"[cell {a}]" in err and f"[cell {b}]" in err
    assert numbers(out) == before


def test_a_deleted_demonstrations_file_is_recomputed(intact, capsys):
    spec, out, _, before = intact
    cell = cells_of(out, "demonstrations")[0]
    (out / "cells" / cell / "demonstrations.npz").unlink()
    code, err = rerun(capsys, spec, out)
    assert code == 0 and "is missing" in err
    assert numbers(out) == before


def test_an_altered_option_file_is_refused_by_the_reader(intact):
    from opt_suite.store import ResultsStore, StoreError

    _, out, _, _ = intact
    cell = cells_of(out, "discovery")[-1]
    truncate(out / "cells" / cell / "options.npz")
    with ResultsStore(out) as store, pytest.raises(StoreError, match=cell):
        for m in store.methods():
            for s in store.seeds():
                store.option_set(m, s)


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE episodes SET ret = ret + 1000 WHERE rowid = (SELECT MAX(rowid) FROM episodes)",
        "UPDATE episodes SET steps = 3 WHERE rowid = 7",
        "DELETE FROM episodes WHERE rowid = 11",
        "UPDATE episodes SET episode = episode + 100 WHERE rowid = 5",
        "DELETE FROM verification",
    ],
)
def test_an_altered_episode_row_is_detected_then_recomputed(intact, capsys, sql):
    spec, out, baseline, before = intact
    with sqlite3.connect(out / "results.sqlite") as conn:
        cell = conn.execute(
            "SELECT cell_id FROM episodes WHERE rowid = (SELECT MAX(rowid) FROM episodes)"
        ).fetchone()[0]
        conn.execute(sql)
    capsys.readouterr()
    assert main(["report", str(out)]) == 2
    err = capsys.readouterr().err
    assert "cell " in err and "checksum" in err and "Traceback" not in err
    assert main(["compare", str(out), "--baseline", str(baseline)]) == 2
    err = capsys.readouterr().err
    assert "checksum" in err and "Traceback" not in err
    if "verification" not in sql and "rowid = (SELECT" in sql:
        assert cell in err
    code, err = rerun(capsys, spec, out)
    assert code == 0 and "recomputing" in err
    assert numbers(out) == before
    assert main(["compare", str(out), "--baseline", str(baseline), "--unmeasured-ok"]) == 0


def test_an_unreadable_store_says_what_works(intact, capsys):
    spec, out, _, before = intact
    db = out / "results.sqlite"
    for extra in ("-wal", "-shm"):
        (out / f"results.sqlite{extra}").unlink(missing_ok=True)
    db.write_bytes(b"\0garbage" * 4096)
    code, err = rerun(capsys, spec, out)
    assert code == 2 and "Traceback" not in err
    line = err.strip().splitlines()[-1]
    assert "not a readable opt-suite results store" in line and "mv " in line
    # Do what it says: move the database aside and rerun the same command.
    db.rename(out / "results.sqlite.damaged")
    code, err = rerun(capsys, spec, out)
    assert code == 0, err
    assert numbers(out) == before


@pytest.mark.slow
def test_random_byte_corruption_never_gives_wrong_numbers(intact, capsys, tmp_path):
    """Flip bytes at random offsets of the SQLite file: exit 2, or exactly the intact numbers."""
    spec, out, baseline, before = intact
    with sqlite3.connect(out / "results.sqlite") as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    pristine = (out / "results.sqlite").read_bytes()
    expected = (out / "leaderboard.json").read_text()
    rng = np.random.default_rng(0)
    outcomes = {0: 0, 2: 0}
    for trial in range(40):
        copy = tmp_path / f"copy{trial}"
        shutil.copytree(out, copy)
        data = bytearray(pristine)
        for offset in rng.integers(0, len(data), size=int(rng.integers(1, 4))):
            data[offset] ^= int(rng.integers(1, 256))
        (copy / "results.sqlite").write_bytes(bytes(data))
        (copy / "leaderboard.json").unlink()
        capsys.readouterr()
        code = main(["report", str(copy)])
        err = capsys.readouterr().err
        assert code in (0, 2) and "Traceback" not in err
        if code == 0:
            got = json.loads((copy / "leaderboard.json").read_text())
            want = json.loads(expected)
            assert got["methods"] == want["methods"], f"trial {trial}: wrong numbers, exit 0"
        outcomes[code] += 1
        code = main(["compare", str(copy), "--baseline", str(baseline), "--unmeasured-ok"])
        assert code in (0, 2) and "Traceback" not in capsys.readouterr().err
    assert outcomes[0] + outcomes[2] == 40


def test_cells_computed_from_a_recomputed_dependency_are_recomputed_too(intact, capsys):
    """A recomputed demonstrations cell may differ (an expert retrained after its checkpoint was
    altered): the options learned from the old demonstrations, and their evaluations, are not kept.
    """
    spec, out, _, before = intact
    demos = cells_of(out, "demonstrations")[0]
    with sqlite3.connect(out / "results.sqlite") as conn:
        first = dict(conn.execute("SELECT cell_id, finished FROM cells WHERE status = 'done'"))
    (out / "cells" / demos / "demonstrations.npz").unlink()
    code, err = rerun(capsys, spec, out)
    assert code == 0 and "done cell(s) too: a cell they depend on is recomputed" in err, err
    with sqlite3.connect(out / "results.sqlite") as conn:
        again = dict(conn.execute("SELECT cell_id, finished FROM cells WHERE status = 'done'"))
        seed = conn.execute("SELECT seed FROM cells WHERE cell_id = ?", (demos,)).fetchone()[0]
        dependents = [
            r[0]
            for r in conn.execute(
                "SELECT cell_id FROM cells WHERE method = 'demo' AND seed = ?", (seed,)
            )
        ]
    assert dependents and all(again[c] != first[c] for c in dependents)  # recomputed
    untouched = [c for c in first if c not in dependents and c != demos]
    assert untouched and all(again[c] == first[c] for c in untouched)  # reused
    assert numbers(out) == before
