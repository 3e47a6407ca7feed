"""Malformed baselines and stores given to ``opt-suite report`` / ``compare``: exit 2, one message.

Exit 1 of ``compare`` means a regression and nothing else; none of these may produce it, nor a
traceback.
"""

from __future__ import annotations

import json
import sqlite3

import pytest
from report_fakes import linear_table, write_store

from opt_suite.cli import main

SHIFTS = {"primitives": 0.0, "ours": 4.0}


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("faults")
    table = linear_table(SHIFTS, seeds=3, tasks=3, episodes=20, noise=1.0)
    run = write_store(root / "run", table)
    baseline = root / "baseline.json"
    assert main(["report", str(run), "--export-baseline", str(baseline)]) == 0
    return root, run, json.loads(baseline.read_text())


def cli(capsys, *argv):
    capsys.readouterr()
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.err


def edits():
    def at(doc, path, value):
        *parents, last = path
        for key in parents:
            doc = doc[key]
        doc[last] = value

    cases = {
        "seed is text": (("methods", "ours", "seeds", 0), "zero"),
        "seed is fractional": (("methods", "ours", "seeds", 0), 0.5),
        "seed is huge": (("methods", "ours", "seeds", 0), 10**30),
        "seed is a bool": (("methods", "ours", "seeds", 0), True),
        "metric value is NaN": (("methods", "ours", "metrics", "auc", 0, 0), float("nan")),
        "metric value is infinite": (("methods", "ours", "metrics", "auc", 0, 0), float("inf")),
        "metric value is a huge integer": (("methods", "ours", "metrics", "auc", 0, 0), 10**400),
        "metric value is text": (("methods", "ours", "metrics", "auc", 0, 0), "1.0"),
        "final_fraction is 0": (("settings", "final_fraction"), 0),
        "final_fraction is negative": (("settings", "final_fraction"), -0.5),
        "final_fraction is NaN": (("settings", "final_fraction"), float("nan")),
        "window is 0": (("settings", "window"), 0),
        "window is negative": (("settings", "window"), -3),
        "window is fractional": (("settings", "window"), 2.5),
        "window is huge": (("settings", "window"), 10**20),
        "threshold is NaN": (("thresholds", "0"), float("nan")),
        "threshold is text": (("thresholds", "0"), "high"),
        "methods is a list": (("methods",), []),
        "tasks is a mapping": (("methods", "ours", "tasks"), {"0": 1}),
    }
    return {name: (lambda doc, p=p, v=v: at(doc, p, v)) for name, (p, v) in cases.items()}


@pytest.mark.parametrize("case", list(edits()))
def test_malformed_baseline_is_exit_two(setup, capsys, tmp_path, case):
    _, run, doc = setup
    doc = json.loads(json.dumps(doc))
    edits()[case](doc)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))  # Python writes NaN / Infinity, as a hostile file may
    code, err = cli(capsys, "compare", run, "--baseline", bad)
    assert code == 2, err
    assert err.startswith("opt-suite compare: ") and str(bad) in err


@pytest.mark.parametrize(
    "text",
    ["", "{", "[" * 100_000, '{"format": "opt-suite-baseline", "version": 1e999}', "1" * 5000],
)
def test_baseline_that_is_not_json_is_exit_two(setup, capsys, tmp_path, text):
    _, run, _ = setup
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    code, err = cli(capsys, "compare", run, "--baseline", bad)
    assert code == 2 and str(bad) in err


def test_special_file_as_baseline_is_exit_two(setup, capsys):
    _, run, _ = setup
    code, err = cli(capsys, "compare", run, "--baseline", "/dev/zero")
    assert code == 2 and "/dev/zero" in err


@pytest.mark.parametrize("command", ["report", "compare"])
def test_a_store_that_is_not_sqlite_is_exit_two(setup, capsys, tmp_path, command):
    root, _, _ = setup
    (tmp_path / "results.sqlite").write_bytes(b"this is not a database" * 100)
    extra = ["--baseline", root / "baseline.json"] if command == "compare" else []
    code, err = cli(capsys, command, tmp_path, *extra)
    assert code == 2 and "results.sqlite" in err, err


@pytest.mark.parametrize("command", ["report", "compare"])
@pytest.mark.parametrize(
    "sql",
    [
        "DROP TABLE episodes",
        "UPDATE runs SET versions = 'not json'",
        "UPDATE runs SET spec_yaml = 'report: [1, 2'",
        "UPDATE runs SET spec_yaml = 'report: {final_fraction: 0}'",
        "UPDATE runs SET spec_yaml = 'report: {bootstrap: 1000000000000}'",
        "UPDATE episodes SET ret = 'x' WHERE episode = 3",
    ],
)
def test_a_malformed_store_is_exit_two(setup, capsys, tmp_path, command, sql):
    import shutil

    root, run, _ = setup
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    with sqlite3.connect(copy / "results.sqlite") as conn:
        conn.execute(sql)
    extra = ["--baseline", root / "baseline.json"] if command == "compare" else []
    code, err = cli(capsys, command, copy, *extra)
    assert code == 2, err
    assert err.strip().splitlines()[-1].startswith(f"opt-suite {command}: ")


@pytest.mark.parametrize("bad", ["0", "99", "1e9", "100000000000", "-5", "nan"])
def test_out_of_range_permutations_are_a_usage_error(setup, capsys, bad):
    root, run, _ = setup
    with pytest.raises(SystemExit) as exc:
        main(
            ["compare", str(run), "--baseline", str(root / "baseline.json"), "--permutations", bad]
        )
    assert exc.value.code == 2
    assert "--permutations" in capsys.readouterr().err
