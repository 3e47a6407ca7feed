"""``opt-suite export-tensorboard``: CleanRL-named runs read back equal to the store; bad input."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

import numpy as np
import pytest

from opt_suite.cli import main
from opt_suite.cli.export_tensorboard import MARKER
from opt_suite.store.reader import ResultsStore
from opt_suite.store.writer import CellRecord, StoreWriter

METHODS = ("prims", "ours")  # "ours" skips 4 frames a step, like Atari; "prims" skips none
SEEDS, TASKS, EPISODES = (0, 1), (0, 1), 5
JHAT = np.array([-3.0, -2.0, np.nan, -1.5])


def _store(directory, *, skip: set = frozenset(), status: str = "done"):
    """A finished run: a discovery cell with curves for "ours", evaluation cells for both."""
    writer = StoreWriter(directory)
    run = writer.begin_run(
        spec_name="tb-test",
        spec_hash="ab" * 32,
        spec_yaml="name: tb-test\n",
        provenance={"versions": {}, "host": "test"},
        backend="local",
        workers=1,
        seeds=list(SEEDS),
        argv=["opt-suite", "run"],
    )
    plan = [(f"disc-{s}", "discovery", "ours", s, 1) for s in SEEDS]
    plan += [(f"eval-{m}-{s}", "evaluation", m, s, p) for p, m in enumerate(METHODS) for s in SEEDS]
    tasks = [("test", t, f"grid-5x5/test/{t}", {"goal": t}) for t in TASKS]
    writer.record_plan(run, plan, tasks)
    for cell_id, kind, method, seed, position in plan:
        if cell_id in skip:
            continue
        episodes, curves = [], {}
        if kind == "discovery":
            curves = {"jhat": JHAT + seed, "option_round": np.array([1.0, 1.0, 2.0, 2.0])}
        else:
            for t in TASKS:
                steps = np.arange(1, EPISODES + 1) * (10 + t) + seed
                frames = np.cumsum(steps) * (4 if method == "ours" else 1)
                returns = -steps.astype(float) + position
                episodes.append((t, returns, steps, frames))
        record = CellRecord(
            cell_id=cell_id,
            kind=kind,
            method=method,
            seed=seed,
            inputs={"id": cell_id},
            started=0.0,
            finished=1.0,
            wall_s=1.0,
            host="test",
            episodes=episodes,
            curves=curves,
            num_options=2 if kind == "discovery" else None,
        )
        writer.commit_cell(record)
    writer.finish_run(run, status, {"total": len(plan)})
    writer.close()
    return directory


@pytest.fixture
def run_dir(tmp_path):
    return _store(tmp_path / "run")


def _read(folder):
    from tensorboard.backend.event_processing import event_accumulator as ea
    from tensorboard.util import tensor_util

    acc = ea.EventAccumulator(str(folder), size_guidance={ea.TENSORS: 0})
    acc.Reload()
    return {
        tag: [(e.step, float(tensor_util.make_ndarray(e.tensor_proto))) for e in acc.Tensors(tag)]
        for tag in acc.Tags()["tensors"]
    }


def test_events_read_back_equal_to_the_store(run_dir, tmp_path, capsys):
    out = tmp_path / "tb"
    assert main(["export-tensorboard", str(run_dir), "--out", str(out)]) == 0
    with ResultsStore(run_dir) as store:
        stamp = int(store.run().started)
        episodes = store.episodes()
    names = sorted(p.name for p in out.iterdir() if p.is_dir())
    expected = sorted(
        [f"grid-5x5-test-{t}__{m}__{s}__{stamp}" for m in METHODS for s in SEEDS for t in TASKS]
        + [f"discovery__ours__{s}__{stamp}" for s in SEEDS]
    )
    assert names == expected
    for method in METHODS:
        for seed in SEEDS:
            for task in TASKS:
                rows = [r for r in episodes if (r.method, r.seed, r.task) == (method, seed, task)]
                tags = _read(out / f"grid-5x5-test-{task}__{method}__{seed}__{stamp}")
                global_steps = np.cumsum([r.steps for r in rows])
                assert tags["charts/episodic_return"] == list(
                    zip(global_steps, [r.ret for r in rows], strict=True)
                )
                assert [v for _, v in tags["charts/episodic_length"]] == [r.steps for r in rows]
                if method == "ours":  # frames differ from steps: a second axis
                    assert tags["charts/episodic_return_frames"] == [
                        (r.frames, r.ret) for r in rows
                    ]
                else:
                    assert "charts/episodic_return_frames" not in tags
    for seed in SEEDS:
        tags = _read(out / f"discovery__ours__{seed}__{stamp}")
        steps, values = zip(*tags["discovery/jhat"], strict=True)
        assert steps == (0, 1, 2, 3)
        np.testing.assert_array_equal(values, (JHAT + seed).astype(np.float32))  # NaN kept
        assert [v for _, v in tags["discovery/option_round"]] == [1.0, 1.0, 2.0, 2.0]


def test_exports_are_byte_identical_and_replace_an_earlier_export(run_dir, tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    for out in (first, second, second):  # the third replaces the second in place
        assert main(["export-tensorboard", str(run_dir), "--out", str(out)]) == 0
    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert len(files) == 2 * 4 + 2 + 1
    for path in files:
        assert (first / path).read_bytes() == (second / path).read_bytes()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no staging left


def _refused(capsys, *args) -> str:
    assert main(["export-tensorboard", *map(str, args)]) == 2
    captured = capsys.readouterr()
    (line,) = captured.err.strip().splitlines()
    assert "Traceback" not in captured.err and captured.out == ""
    return line


def test_missing_or_storeless_directories(tmp_path, capsys):
    assert "no such directory" in _refused(capsys, tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    assert "no results store" in _refused(capsys, tmp_path / "empty", "--out", tmp_path / "tb")
    assert not (tmp_path / "tb").exists()


@pytest.mark.parametrize(
    ("skip", "status", "expected"),
    [
        ({"eval-ours-1"}, "done", "1 planned cell(s) not done (first: evaluation of 'ours' seed 1"),
        ({"disc-0", "eval-ours-0"}, "interrupted", "has status 'interrupted'"),
    ],
)
def test_an_incomplete_run_writes_nothing(tmp_path, capsys, skip, status, expected):
    directory = _store(tmp_path / "run", skip=skip, status=status)
    assert expected in _refused(capsys, directory, "--out", tmp_path / "tb")
    assert not (tmp_path / "tb").exists()


def test_a_damaged_store_writes_nothing(run_dir, tmp_path, capsys):
    with sqlite3.connect(run_dir / "results.sqlite") as conn:
        conn.execute("UPDATE episodes SET ret = ret + 1 WHERE episode = 2")
    line = _refused(capsys, run_dir, "--out", tmp_path / "tb")
    assert "checksum" in line or "altered" in line or "damaged" in line
    assert not (tmp_path / "tb").exists()
    (run_dir / "results.sqlite").write_bytes(b"not a database at all" * 100)
    assert "results store" in _refused(capsys, run_dir, "--out", tmp_path / "tb")


def test_a_folder_that_is_not_an_export_is_never_replaced(run_dir, tmp_path, capsys):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    assert "is not an earlier export" in _refused(capsys, run_dir, "--out", mine)
    assert (mine / "notes.txt").read_text() == "keep me" and not (mine / MARKER).exists()


def test_the_export_never_imports_tensorflow(run_dir, tmp_path):
    code = (
        "import sys; from opt_suite.cli import main; "
        f"assert main(['export-tensorboard', {str(run_dir)!r}, '--out', {str(tmp_path / 'x')!r}])"
        " == 0; assert 'tensorflow' not in sys.modules, 'tensorflow imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, timeout=120)


def test_a_sweep_run_is_exported_one_variant_at_a_time(run_dir, tmp_path, capsys):
    from opt_suite.report.sweep import write_manifest

    write_manifest(
        run_dir, "tb-test", [{"name": "alpha=0.1", "values": {}, "spec_hash": "ab" * 32}]
    )
    line = _refused(capsys, run_dir, "--out", tmp_path / "tb")
    assert "is a sweep run" in line and "alpha=0.1 (hash abababababab)" in line
    assert (
        main(["export-tensorboard", str(run_dir), "--out", str(tmp_path / "tb"), "--spec", "abab"])
        == 0
    )


def test_an_empty_folder_is_written_and_a_changed_export_is_never_replaced(
    run_dir, tmp_path, capsys
):
    out = tmp_path / "tb"
    out.mkdir()  # empty: written into
    assert main(["export-tensorboard", str(run_dir), "--out", str(out)]) == 0
    capsys.readouterr()
    manifest = json.loads((out / MARKER).read_text())
    assert manifest["spec_hash"] == "ab" * 32 and len(manifest["files"]) == 2 * 4 + 2
    [event] = sorted(out.glob("discovery__ours__0__*/events.*"))
    event.write_bytes(event.read_bytes() + b"x")  # a file of the export changed since
    line = _refused(capsys, run_dir, "--out", out)
    assert "is not an earlier export" in line and "changed since the export" in line
    assert event.read_bytes().endswith(b"x")  # nothing deleted or rewritten
    event.write_bytes(event.read_bytes()[:-1])
    (out / "mine.txt").write_text("keep me")  # a file the export did not write
    assert "mine.txt is not in its manifest" in _refused(capsys, run_dir, "--out", out)
    assert (out / "mine.txt").read_text() == "keep me"
    (out / "mine.txt").unlink()
    (out / MARKER).write_text(json.dumps({"runs": manifest["runs"]}))  # named right, no digests
    assert "is not this export's manifest" in _refused(capsys, run_dir, "--out", out)
    (tmp_path / "plain").write_text("a file")
    assert "is not a folder" in _refused(capsys, run_dir, "--out", tmp_path / "plain")
