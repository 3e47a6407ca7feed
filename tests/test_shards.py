"""``run --shard i/N`` in separate processes, then ``merge-stores``: the reports of one run."""

from __future__ import annotations

import contextlib
import sqlite3
import subprocess

import pytest
from runner_support import (
    REPO,
    cli_command,
    fakes,  # noqa: F401  (fixture)
    run_cli,
    write_spec,
)

from opt_suite.cli import main
from opt_suite.runner.shards import Shard, parse_shard, shard_seeds
from opt_suite.store import ResultsStore

#: The reports that must not tell a merged run from one unsharded run.
REPORTS = (
    "returns.csv",
    "leaderboard.md",
    "leaderboard.csv",
    "leaderboard.json",
    "runs.json",
    "index.html",
    "curves.png",
)


@pytest.mark.parametrize(
    ("text", "shard"), [("1/1", Shard(1, 1)), ("2/4", Shard(2, 4)), (" 4/4 ", Shard(4, 4))]
)
def test_a_shard_is_parsed_1_based(text, shard):
    assert parse_shard(text) == shard


@pytest.mark.parametrize("text", ["0/2", "3/2", "1/0", "-1/2", "a/b", "2", "1/2/3", ""])
def test_a_bad_shard_names_the_flag_and_the_expected_form(text):
    with pytest.raises(ValueError, match=r"^--shard: .* \(.*e\.g\. '1/4'"):
        parse_shard(text)


def test_the_shards_partition_the_seeds():
    seeds = [7, 0, 3, 9, 4]
    parts = [shard_seeds(seeds, Shard(i, 3)) for i in (1, 2, 3)]
    assert parts == [[0, 7], [3, 9], [4]]
    assert sorted(s for part in parts for s in part) == sorted(seeds)
    with pytest.raises(ValueError, match="the run has 5 seed"):
        shard_seeds(seeds, Shard(1, 6))


def _reported(path):
    """A report file's bytes without its "CPU seconds" table: measured, it differs between any two
    runs of one spec (``opt_suite.report.cpu_seconds``); every other byte must not."""
    text = path.read_bytes()
    for start, end in ((b"## CPU seconds", b"\n## "), (b"<h2>CPU seconds</h2>", b"<h2>")):
        i = text.find(start)
        if i >= 0:
            j = text.find(end, i + len(start))
            text = text[:i] + (text[j:] if j >= 0 else b"")
    return text


def _rows(directory):
    with ResultsStore(directory) as store:
        return len(store.episodes()), len(store.runs())


@pytest.mark.usefixtures("fakes")
def test_two_shard_processes_merge_into_the_reports_of_one_run(tmp_path, capsys):
    spec = write_spec(tmp_path, seeds=3)
    whole, merged, again = tmp_path / "whole", tmp_path / "merged", tmp_path / "again"
    shards = [tmp_path / "shard1", tmp_path / "shard2"]
    jobs = [
        subprocess.Popen(
            cli_command(
                spec, "--out", out, "--workers", "0", "--quiet", "--no-report", "--shard", f"{i}/2"
            ),
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i, out in enumerate(shards, start=1)
    ]
    assert run_cli(spec, "--out", whole, "--workers", "0", "--quiet") == 0
    for job in jobs:
        _, err = job.communicate(timeout=120)
        assert job.returncode == 0, err
    assert [ResultsStore(s).seeds() for s in shards] == [[0, 2], [1]]

    assert main(["merge-stores", str(merged), *map(str, shards)]) == 0
    for name in REPORTS:
        assert _reported(merged / name) == _reported(whole / name), name
    with ResultsStore(merged) as store:
        assert store.run().backend == "merge" and store.run().status == "done"
        assert store.seeds() == [0, 1, 2]
        # The family's frame unit, as the shards recorded it: the merged run's and each copy's.
        assert store.run_family() == {"name": "chain", "frame_unit": "env steps"}
        runs = {r.run_id for r in store.runs()}
    with contextlib.closing(sqlite3.connect(merged / "results.sqlite")) as db:
        keys = db.execute("SELECT key FROM meta WHERE key LIKE 'run_family:%'").fetchall()
    assert {int(k.split(":")[1]) for (k,) in keys} == runs  # 2 shards' runs copied + the merge

    # Merged twice: no row added, the same reports.
    before = _rows(merged)
    assert main(["merge-stores", str(merged), *map(str, shards), "--no-report"]) == 0
    assert _rows(merged) == before

    # One shard at a time: incomplete (exit 1, shard 1/2 named) until the last one is in.
    assert main(["merge-stores", str(again), str(shards[1]), "--no-report"]) == 1
    assert "shard(s) 1/2 not merged yet" in capsys.readouterr().err
    assert ResultsStore(again).run().status == "failed"
    assert main(["merge-stores", str(again), str(shards[0])]) == 0
    for name in REPORTS:
        assert _reported(again / name) == _reported(whole / name), name


@pytest.mark.usefixtures("fakes")
def test_a_sweeps_shards_merge_into_the_reports_of_one_sweep_run(tmp_path):
    spec = write_spec(tmp_path, seeds=3)
    with spec.open("a") as f:  # two variants that share their discovery cells
        f.write("sweep:\n  grid:\n    evaluation.episodes: [10, 20]\n")
    whole, merged = tmp_path / "whole", tmp_path / "merged"
    shards = [tmp_path / "shard1", tmp_path / "shard2"]
    assert run_cli(spec, "--out", whole, "--workers", "0", "--quiet") == 0
    for i, out in enumerate(shards, start=1):
        args = ("--out", out, "--workers", "0", "--quiet", "--no-report", "--shard", f"{i}/2")
        assert run_cli(spec, *args) == 0

    assert main(["merge-stores", str(merged), *map(str, shards)]) == 0
    variants = sorted(p.name for p in (whole / "variants").iterdir())
    assert variants == ["episodes=10", "episodes=20"]
    for name in ("sweep.md", "sweep.csv"):
        assert _reported(merged / name) == _reported(whole / name), name
    for variant in variants:
        for name in REPORTS:
            ours, theirs = merged / "variants" / variant / name, whole / "variants" / variant / name
            assert _reported(ours) == _reported(theirs), (variant, name)

    # Merged twice: no row added.
    before = _rows(merged)
    assert main(["merge-stores", str(merged), *map(str, shards), "--no-report"]) == 0
    assert _rows(merged) == before


@pytest.mark.usefixtures("fakes")
def test_shards_of_a_sweep_and_of_one_spec_do_not_merge(tmp_path, capsys):
    plain = write_spec(tmp_path, seeds=2)
    swept = write_spec(tmp_path, seeds=2, file="swept.yaml")
    with swept.open("a") as f:
        f.write("sweep:\n  grid:\n    evaluation.episodes: [10, 20]\n")
    one, other = tmp_path / "one", tmp_path / "other"
    args = ("--workers", "0", "--quiet", "--no-report", "--shard")
    assert run_cli(plain, "--out", one, *args, "1/2") == 0
    assert run_cli(swept, "--out", other, *args, "2/2") == 0
    capsys.readouterr()
    assert main(["merge-stores", str(tmp_path / "merged"), str(one), str(other)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert f"{other} and {one} are not shards of one sweep" in err
    assert not (tmp_path / "merged").exists()
