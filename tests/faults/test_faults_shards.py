"""Shards and their merge, fed bad input: a bad ``--shard``, shards of other specs or code, a
conflicting or altered cell, a missing shard. Each is one located line and exit 2, with nothing
written into the merge target."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3

import pytest
from runner_support import (
    PLUGIN,
    fakes,  # noqa: F401  (fixture)
    run_cli,
    write_spec,
)

from opt_suite import registry
from opt_suite.cli import main
from opt_suite.runner import versions
from opt_suite.store.verify import episodes_checksum


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    """Two shards of one spec (seeds 0 and 1) and one shard of another spec, built once."""
    root = tmp_path_factory.mktemp("shards")
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(PLUGIN))
        path = os.environ.get("PYTHONPATH")  # a plugin counts as installed through PYTHONPATH
        patch.setenv("PYTHONPATH", str(PLUGIN) + (os.pathsep + path if path else ""))
        registry._entry_points.cache_clear()
        registry.load.cache_clear()
        versions._distributions_on.cache_clear()
        spec = write_spec(root)
        other = write_spec(root, name="other-toy", file="other.yaml")
        for i in (1, 2):
            args = ("--workers", "0", "--quiet", "--no-report", "--shard", f"{i}/2")
            assert run_cli(spec, "--out", root / f"s{i}", *args) == 0
        assert run_cli(other, "--out", root / "other", *args) == 0
        registry._entry_points.cache_clear()
        registry.load.cache_clear()
        versions._distributions_on.cache_clear()
    return root


def _copy(shards, name, new):
    shutil.copytree(shards / name, shards / new, dirs_exist_ok=False)
    return shards / new


def _refused(capsys, out, *dirs) -> str:
    assert main(["merge-stores", str(out), *map(str, dirs)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith("opt-suite merge-stores: "), err
    assert not (out / "results.sqlite").exists()
    return err


@pytest.mark.usefixtures("fakes")
@pytest.mark.parametrize(
    ("shard", "expected"),
    [
        ("0/2", "shards are numbered 1 to N"),
        ("3/2", "shards are numbered 1 to N"),
        ("one/two", "is not i/N (expected e.g. '1/4'"),
        ("3/3", "the run has 2 seed(s) and shards split seeds"),
    ],
)
def test_a_bad_shard_is_one_line_and_exit_2(tmp_path, capsys, shard, expected):
    out = tmp_path / "out"
    assert run_cli(write_spec(tmp_path), "--out", out, "--shard", shard) == 2
    err = capsys.readouterr().err.strip()
    assert err == err.splitlines()[0] and "--shard" in err and expected in err, err
    assert not out.exists()


def test_shards_of_another_spec_are_refused(shards, capsys, tmp_path):
    err = _refused(capsys, tmp_path / "out", shards / "s1", shards / "other")
    assert f"{shards / 'other' / 'results.sqlite'}: shard 2 holds spec 'other-toy'" in err
    assert "only shards of one spec merge" in err


def test_a_target_of_another_spec_is_refused(shards, capsys, tmp_path):
    target = _copy(shards, "other", tmp_path.name + "-target")
    before = (target / "results.sqlite").read_bytes()
    assert main(["merge-stores", str(target), str(shards / "s1")]) == 2
    err = capsys.readouterr().err.strip()
    assert "the merge target holds spec 'other-toy'" in err and len(err.splitlines()) == 1
    assert (target / "results.sqlite").read_bytes() == before


def test_shards_of_other_code_are_refused(shards, capsys, tmp_path):
    changed = _copy(shards, "s2", tmp_path.name + "-code")
    conn = sqlite3.connect(changed / "results.sqlite")
    for cell_id, inputs in conn.execute("SELECT cell_id, inputs FROM cells").fetchall():
        data = json.loads(inputs)
        data["code"] = {key: f"{value} (edited)" for key, value in data["code"].items()}
        conn.execute("UPDATE cells SET inputs = ? WHERE cell_id = ?", (json.dumps(data), cell_id))
    conn.commit()
    conn.close()
    err = _refused(capsys, tmp_path / "out", shards / "s1", changed)
    assert "cells were computed by other code than those of" in err


def _edit_one_return(directory, *, keep_checksum_true: bool) -> str:
    conn = sqlite3.connect(directory / "results.sqlite")
    cell_id = conn.execute("SELECT cell_id FROM episodes LIMIT 1").fetchone()[0]
    conn.execute("UPDATE episodes SET ret = ret + 1 WHERE cell_id = ? AND episode = 0", (cell_id,))
    if keep_checksum_true:  # a cell that ran to other numbers, recorded consistently
        rows = conn.execute(
            "SELECT task, episode, ret, steps, frames FROM episodes WHERE cell_id = ?", (cell_id,)
        ).fetchall()
        conn.execute(
            "UPDATE verification SET episodes = ? WHERE cell_id = ?",
            (episodes_checksum(rows), cell_id),
        )
    conn.commit()
    conn.close()
    return cell_id


def test_a_cell_with_other_results_in_two_stores_is_refused(shards, capsys, tmp_path):
    twin = _copy(shards, "s1", tmp_path.name + "-twin")
    cell_id = _edit_one_return(twin, keep_checksum_true=True)
    err = _refused(capsys, tmp_path / "out", shards / "s1", twin)
    assert f"cell {cell_id} (evaluation of" in err and "has other results than in" in err


def test_an_altered_shard_cell_is_refused(shards, capsys, tmp_path):
    altered = _copy(shards, "s1", tmp_path.name + "-altered")
    cell_id = _edit_one_return(altered, keep_checksum_true=False)
    err = _refused(capsys, tmp_path / "out", altered, shards / "s2")
    assert f"cell {cell_id} (evaluation of" in err and "fails verification" in err


def test_a_missing_shard_is_refused(shards, capsys, tmp_path):
    err = _refused(capsys, tmp_path / "out", shards / "s1", tmp_path / "nowhere")
    assert f"no results store at {tmp_path / 'nowhere' / 'results.sqlite'}" in err


def test_a_sweep_with_more_shards_than_seeds_is_one_line(tmp_path, capsys):
    out = tmp_path / "out"
    assert run_cli("fourrooms-paper-sensitivity", "--out", out, "--shard", "6/6") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "--shard 6/6: the run has 5 seed(s) and shards split seeds" in err
    assert not out.exists()
