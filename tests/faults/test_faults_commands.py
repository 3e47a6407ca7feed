"""Every command on damaged, missing or wrong-type inputs: exit 2 and one line, never a traceback,
a hang or a runaway read; and the gate never passes on part of its baseline.

The run directory is a tiny real run (a fourrooms spec with demonstrations, an option set and
evaluation cells, made once per module) that each test copies and damages. Inputs that could make
a broken guard block forever (FIFOs) are given to a fresh process with a timeout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from report_fakes import linear_table, write_store
from runner_support import REPO

from opt_suite.cli import main
from opt_suite.files_guard import InputError, output_dir, read_bounded

TINY = """\
name: faults-tiny
family:
  name: fourrooms
  params: {layout: sutton-13x13, max_episode_steps: 100}
tasks: {count: 3, train: 2, test: 1, seed: 0}
demonstrations: {trajectories_per_task: 1}
methods:
  - name: primitives
    method: primitives
  - name: eigenoptions
    method: eigenoptions
    params: {count: 2, adjacency: observed}  # reads the demonstrations: the run keeps them
evaluation:
  learner: smdp_q_learning
  params: {alpha: 0.1, gamma: 0.99, epsilon: 0.1}
  episodes: 10
  max_steps: 100
  seeds: 2
"""

# Commands that read a run directory, with the arguments each needs besides it.
READERS = {
    "report": [],
    "compare": ["--baseline", "BASELINE"],
    "export-demos": [],
    "option-usage": [],
    "show-options": [],
}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """(a complete run directory, a baseline exported from it)."""
    root = tmp_path_factory.mktemp("tiny")
    spec = root / "tiny.yaml"
    spec.write_text(TINY)
    run = root / "run"
    assert main(["run", str(spec), "--out", str(run), "--workers", "0", "--quiet"]) == 0
    baseline = root / "baseline.json"
    assert main(["report", str(run), "--export-baseline", str(baseline)]) == 0
    return run, baseline


def copy_of(tiny, tmp_path: Path) -> tuple[Path, Path]:
    run, baseline = tiny
    target = tmp_path / "run"
    shutil.copytree(run, target)
    return target, baseline


def argv_for(command: str, run: Path, baseline: Path) -> list[str]:
    extra = [str(baseline) if a == "BASELINE" else a for a in READERS[command]]
    return [command, str(run), *extra]


def errors(err: str) -> list[str]:
    """The lines of stderr that are not warnings."""
    return [line for line in err.splitlines() if line and not line.startswith("warning:")]


def in_process(capsys, argv: list[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = main(argv)
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    return code, err


def garbage(db: Path) -> None:
    db.write_bytes(np.random.default_rng(0).bytes(100_000))


def corrupt_pages(db: Path) -> None:
    """Keep the header, overwrite the rest: SQLite opens it, then finds it malformed."""
    data = bytearray(db.read_bytes())
    data[4096:] = np.random.default_rng(1).bytes(len(data) - 4096)
    db.write_bytes(bytes(data))


def directory(db: Path) -> None:
    db.unlink()
    db.mkdir()


DAMAGES = {"garbage bytes": garbage, "malformed pages": corrupt_pages, "a directory": directory}


@pytest.mark.parametrize("command", list(READERS))
@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_store_is_one_line_and_exit_two(tiny, tmp_path, capsys, command, damage):
    run, baseline = copy_of(tiny, tmp_path)
    for wal in run.glob("results.sqlite-*"):
        wal.unlink()
    DAMAGES[damage](run / "results.sqlite")
    code, err = in_process(capsys, argv_for(command, run, baseline))
    assert code == 2, err
    (line,) = errors(err)
    assert line.startswith(f"opt-suite {command}:") and "results.sqlite" in line, line


# Runs each command line of argv 1 (JSON) through opt_suite.cli.main in one process (one import
# instead of one per command) and prints [exit status, stderr] for each, as JSON.
EACH_COMMAND = """\
import contextlib, io, json, sys
from opt_suite.cli import main
results = []
for argv in json.loads(sys.argv[1]):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    results.append([code, err.getvalue()])
print(json.dumps(results))
"""


def each_in_a_subprocess(commands: list[list[str]]) -> list[tuple[int, str]]:
    """Every command line, in one fresh process; blocking on a FIFO fails at the timeout."""
    result = subprocess.run(
        [sys.executable, "-c", EACH_COMMAND, json.dumps(commands)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO,
    )
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    return [(int(code), str(err)) for code, err in json.loads(result.stdout)]


def test_a_fifo_store_is_refused_not_waited_on(tiny, tmp_path):
    run, baseline = copy_of(tiny, tmp_path)
    for db in run.glob("results.sqlite*"):
        db.unlink()
    os.mkfifo(run / "results.sqlite")
    commands = [argv_for(command, run, baseline) for command in READERS]
    commands.append(["run", str(run / "spec.yaml"), "--out", str(run), "--quiet", "--workers", "0"])
    for argv, (code, err) in zip(commands, each_in_a_subprocess(commands), strict=True):
        assert code == 2, (argv, err)
        (line,) = errors(err)
        assert line.startswith(f"opt-suite {argv[0]}:"), line
        assert "results.sqlite" in line and "FIFO" in line, line


@pytest.mark.parametrize("command", list(READERS))
def test_a_missing_run_directory(tiny, tmp_path, capsys, command):
    _, baseline = tiny
    missing = tmp_path / "nowhere"
    code, err = in_process(capsys, argv_for(command, missing, baseline))
    assert code == 2 and len(errors(err)) == 1 and "nowhere" in err, err
    assert not missing.exists()  # not created by a default output folder inside it


@pytest.mark.parametrize("command", list(READERS))
def test_missing_cell_files(tiny, tmp_path, capsys, command):
    run, baseline = copy_of(tiny, tmp_path)
    shutil.rmtree(run / "cells")
    code, err = in_process(capsys, argv_for(command, run, baseline))
    assert code == 2, err
    (line,) = errors(err)
    assert "cell" in line and "missing" in line and "opt-suite run" in line, line


@pytest.mark.parametrize(
    ("command", "flag", "where"),
    [
        ("export-demos", "--out", "an existing file"),
        ("export-demos", "--out", "under a file"),
        ("show-options", "--out", "an existing file"),
        ("show-options", "--out", "under a file"),
        ("report", "--export-baseline", "a directory"),
        ("report", "--export-baseline", "under a file"),
    ],
)
def test_an_unusable_output_path(tiny, tmp_path, capsys, command, flag, where):
    run, _ = copy_of(tiny, tmp_path)
    blocker = tmp_path / "blocker"
    blocker.write_text("in the way")
    folder = tmp_path / "folder"
    folder.mkdir()
    target = {"an existing file": blocker, "under a file": blocker / "x", "a directory": folder}
    before = (run / "leaderboard.md").stat().st_mtime_ns
    code, err = in_process(capsys, [command, str(run), flag, str(target[where])])
    assert code == 2, err
    (line,) = errors(err)
    assert line.startswith(f"opt-suite {command}:") and str(tmp_path) in line, line
    assert blocker.read_text() == "in the way" and list(folder.iterdir()) == []
    assert (run / "leaderboard.md").stat().st_mtime_ns == before  # refused before writing


def test_report_refuses_a_report_file_that_is_a_fifo_or_a_folder(tiny, tmp_path):
    fifo_run, _ = copy_of(tiny, tmp_path / "a")
    os.unlink(fifo_run / "leaderboard.md")
    os.mkfifo(fifo_run / "leaderboard.md")  # writing it would wait for a reader forever
    dir_run, _ = copy_of(tiny, tmp_path / "b")
    os.unlink(dir_run / "curves.png")
    (dir_run / "curves.png").mkdir()
    commands = [["report", str(fifo_run)], ["report", str(dir_run)]]
    results = each_in_a_subprocess(commands)
    for (code, err), what in zip(results, ["leaderboard.md", "curves.png"], strict=True):
        assert code == 2, err
        (line,) = errors(err)
        assert what in line and "expected a regular file" in line, line


def test_a_baseline_that_is_not_a_small_regular_file(tiny, tmp_path):
    run, _ = tiny
    paths = {kind: tmp_path / f"{kind}.json" for kind in ("fifo", "dev-zero", "dir", "oversize")}
    os.mkfifo(paths["fifo"])
    paths["dev-zero"].symlink_to("/dev/zero")
    paths["dir"].mkdir()
    with paths["oversize"].open("wb") as f:  # sparse: no disk used
        f.truncate((64 << 20) + 1)
    commands = [["compare", str(run), "--baseline", str(path)] for path in paths.values()]
    for path, (code, err) in zip(paths.values(), each_in_a_subprocess(commands), strict=True):
        assert code == 2, err
        (line,) = errors(err)
        assert str(path) in line and ("regular file" in line or "bytes" in line), line


class TestCompareCoverage:
    """A run that lacks part of its baseline is refused; narrowing the baseline is explicit."""

    SHIFTS = {"primitives": 0.0, "a": 1.0, "b": 2.0}

    @pytest.fixture
    def runs(self, tmp_path):
        full = write_store(tmp_path / "full", linear_table(self.SHIFTS, seeds=4, tasks=6))
        baseline = tmp_path / "baseline.json"
        assert main(["report", str(full), "--export-baseline", str(baseline)]) == 0
        # Seeds 2-3 only, each 1000 below the baseline: half of the evidence, all of it worse.
        worse = {k: v - 1000 for k, v in self.SHIFTS.items()}
        table = linear_table(worse, seeds=4, tasks=6)
        half = type(table).from_rows([r for r in zip(*_columns(table), strict=True) if r[1] >= 2])
        return baseline, write_store(tmp_path / "half", half)

    def test_a_run_of_half_the_seeds_is_refused(self, runs, capsys):
        baseline, half = runs
        code, err = in_process(capsys, ["compare", str(half), "--baseline", str(baseline)])
        assert code == 2, err
        (line,) = errors(err)
        assert "does not cover baseline" in line and "36 of its 72" in line
        assert "seeds 0-1 (every task) of primitives, a, b" in line and "--only-seeds" in line

    def test_narrowing_explicitly_compares_and_finds_the_regression(self, runs, capsys):
        baseline, half = runs
        argv = ["compare", str(half), "--baseline", str(baseline), "--only-seeds", "2-3"]
        argv.append("--unmeasured-ok")
        capsys.readouterr()
        code = main(argv)
        captured = capsys.readouterr()
        assert code == 1, captured.err
        assert "narrowed" in captured.err and "36 of its 72" in captured.err
        assert captured.out.count("REGRESSION") == 3

    def test_no_seed_in_common_is_refused_not_tested_unpaired(self, runs, tmp_path, capsys):
        baseline, _ = runs
        table = linear_table(self.SHIFTS, seeds=2, tasks=6)
        other = type(table).from_rows(
            [(m, s + 100, *rest) for m, s, *rest in zip(*_columns(table), strict=True)]
        )
        run = write_store(tmp_path / "other", other)
        code, err = in_process(capsys, ["compare", str(run), "--baseline", str(baseline)])
        assert code == 2 and "72 of its 72" in err and "unpaired" not in err, err

    @pytest.mark.parametrize(
        ("flag", "value", "message"),
        [
            ("--only-seeds", "9", "no seed [9]"),
            ("--only-seeds", "x", "is not a seed index"),
            ("--only-methods", "nope", "--only-methods ['nope']"),
        ],
    )
    def test_bad_narrowing_is_one_line(self, runs, capsys, flag, value, message):
        baseline, half = runs
        argv = ["compare", str(half), "--baseline", str(baseline), flag, value]
        code, err = in_process(capsys, argv)
        assert code == 2 and message in err and len(errors(err)) == 1, err


def _columns(table):
    return (
        table.method.tolist(),
        [int(s) for s in table.seed],
        table.task.tolist(),
        [int(e) for e in table.episode],
        table.returns.tolist(),
        [int(s) for s in table.steps],
        [int(f) for f in table.frames],
    )


class TestFilesGuard:
    def test_read_bounded(self, tmp_path):
        small = tmp_path / "small"
        small.write_bytes(b"x" * 10)
        assert read_bounded(small, 10, "thing") == b"x" * 10
        with pytest.raises(InputError, match=r"small: thing has 10 bytes, more than the 9"):
            read_bounded(small, 9, "thing")
        zero = tmp_path / "zero"
        zero.symlink_to("/dev/zero")
        with pytest.raises(InputError, match="thing is a device, expected a regular file"):
            read_bounded(zero, 1 << 30, "thing")
        fifo = tmp_path / "fifo"
        os.mkfifo(fifo)
        with pytest.raises(InputError, match=r"thing is a FIFO \(named pipe\)"):
            read_bounded(fifo, 10, "thing")
        with pytest.raises(InputError, match="thing is a directory"):
            read_bounded(tmp_path, 10, "thing")
        with pytest.raises(InputError, match="no such thing"):
            read_bounded(tmp_path / "none", 10, "thing")

    def test_output_dir(self, tmp_path):
        made = output_dir(tmp_path / "a" / "b", "out")
        assert made.is_dir() and list(made.iterdir()) == []  # the write probe is cleaned up
        (tmp_path / "file").write_text("")
        with pytest.raises(InputError, match="out is a regular file, expected a folder"):
            output_dir(tmp_path / "file", "out")
        with pytest.raises(InputError, match="cannot write out there"):
            output_dir(tmp_path / "file" / "sub", "out")

    def test_npz_readers_refuse_special_files(self, tmp_path):
        fifo, zero = tmp_path / "fifo.npz", tmp_path / "zero.npz"
        os.mkfifo(fifo)
        zero.symlink_to("/dev/zero")
        code = (
            "import sys\n"
            "from opt_suite.demonstrations import DemonstrationError, load_demonstrations\n"
            "from opt_suite.options import OptionSetError, load_option_set\n"
            "from opt_suite.learners.base import OptionUsage\n"
            "for path in sys.argv[1:]:\n"
            "    for load, error in ((load_demonstrations, DemonstrationError),"
            " (load_option_set, OptionSetError), (OptionUsage.load, ValueError)):\n"
            "        try:\n"
            "            load(path)\n"
            "        except error as exc:\n"
            "            print(exc)\n"
        )
        result = subprocess.run(
            [sys.executable, "-c", code, str(fifo), str(zero)],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=REPO,
        )
        assert result.returncode == 0, result.stderr
        lines = result.stdout.splitlines()
        assert len(lines) == 6 and all("expected a regular file" in line for line in lines), lines


class TestMinari:
    def test_a_hostile_metadata_file_is_refused(self, tmp_path):
        folders = []
        for kind in ("dev-zero", "fifo", "oversize"):
            data = tmp_path / kind / "data"
            data.mkdir(parents=True)
            meta = data / "metadata.json"
            if kind == "dev-zero":
                meta.symlink_to("/dev/zero")
            elif kind == "fifo":
                os.mkfifo(meta)
            else:
                with meta.open("wb") as f:  # sparse: no disk used
                    f.truncate((16 << 20) + 1)
            folders.append(str(data.parent))
        code = (
            "import sys\n"
            "from opt_suite.demonstrations.base import DemonstrationError\n"
            "from opt_suite.demonstrations.minari_io import _open\n"
            "for folder in sys.argv[1:]:\n"
            "    try:\n"
            "        _open(folder)\n"
            "    except DemonstrationError as exc:\n"
            "        print(exc)\n"
        )
        result = subprocess.run(
            [sys.executable, "-c", code, *folders],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=REPO,
        )
        assert result.returncode == 0, result.stderr
        lines = result.stdout.splitlines()
        assert len(lines) == 3, lines
        assert all("metadata.json" in line and "Minari metadata" in line for line in lines)
        assert "device" in lines[0] and "FIFO" in lines[1] and "bytes" in lines[2]

    def test_atari_frames_export_losslessly_and_read_back_bit_identical(
        self, tmp_path, monkeypatch
    ):
        from opt_suite import registry
        from opt_suite.demonstrations.minari_io import (
            MinariParams,
            MinariSource,
            SourceContext,
            export_demonstrations,
        )
        from opt_suite.spec import load_spec
        from opt_suite.trajectory import Trajectory

        spec = load_spec(REPO / "specs" / "atari-smoke.yaml")
        family = registry.load(registry.FAMILIES, spec.family.name)(spec.family.params)
        assert family.observation_space.shape == (84, 84, 2)  # two stacked grey frames
        rng = np.random.default_rng(0)
        # Uniform noise: the worst case for a lossy codec (JPEG could not even encode 2 channels).
        demos = [
            Trajectory(
                f"atari/train/{i}",
                rng.integers(0, 256, (n + 1, 84, 84, 2), dtype=np.uint8),
                rng.integers(0, 4, n),
                rng.normal(size=n),
            )
            for i, n in enumerate([30, 50])
        ]
        # A relative --out: Minari once joined it to its own path twice.
        monkeypatch.chdir(tmp_path)
        folder = export_demonstrations(demos, family, Path("out"), "atari/demos-seed0-v0")
        source = MinariSource(MinariParams(str(folder)))

        class Task:
            def __init__(self, task_id):
                self.task_id = task_id

        again = source.collect(
            SourceContext(family, [Task(t.task_id) for t in demos], 1, 1000, None)
        )
        for before, after in zip(demos, again, strict=True):
            assert after.observations.dtype == np.uint8
            np.testing.assert_array_equal(before.observations, after.observations)
            np.testing.assert_array_equal(before.actions, after.actions)


def _dataset(out: Path) -> Path:
    return out / "faults-tiny" / "demos-seed0-v0"


def test_export_demos_replaces_only_its_own_export_and_never_a_users_file(tiny, tmp_path, capsys):
    pytest.importorskip("minari")
    run, _ = copy_of(tiny, tmp_path)
    out = tmp_path / "minari"
    argv = ["export-demos", str(run), "--out", str(out), "--seed", "0"]
    assert in_process(capsys, argv)[0] == 0
    assert in_process(capsys, argv)[0] == 0  # its own earlier export, unchanged: replaced
    notes = _dataset(out) / "notes.txt"
    notes.write_text("the user's own notes\n")
    code, err = in_process(capsys, argv)
    (line,) = errors(err)
    assert code == 2 and str(notes) in line and "not in its manifest" in line, line
    assert "nothing was deleted" in line and notes.read_text() == "the user's own notes\n"
    notes.unlink()
    (_dataset(out) / "opt-suite-export.json").unlink()  # a folder the suite cannot prove it wrote
    code, err = in_process(capsys, argv)
    assert code == 2 and "not an earlier export" in err and _dataset(out).is_dir(), err


@pytest.mark.parametrize("linked", ["the dataset folder", "the spec's folder"])
def test_export_demos_never_writes_or_deletes_through_a_symlink(tiny, tmp_path, capsys, linked):
    pytest.importorskip("minari")
    run, _ = copy_of(tiny, tmp_path)
    out, elsewhere = tmp_path / "minari", tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "precious.txt").write_text("keep me\n")
    link = _dataset(out) if linked == "the dataset folder" else _dataset(out).parent
    link.parent.mkdir(parents=True)
    link.symlink_to(elsewhere, target_is_directory=True)
    code, err = in_process(capsys, ["export-demos", str(run), "--out", str(out)])
    (line,) = errors(err)
    assert code == 2 and str(link) in line and "symlink" in line, line
    assert sorted(p.name for p in elsewhere.iterdir()) == ["precious.txt"]


def test_show_options_replaces_a_picture_symlink_instead_of_writing_through_it(
    tiny, tmp_path, capsys
):
    run, _ = copy_of(tiny, tmp_path)
    outside = tmp_path / "precious.png"
    outside.write_bytes(b"the user's own picture")
    picture = run / "options" / "options-eigenoptions-seed0.png"
    picture.parent.mkdir(exist_ok=True)
    picture.unlink(missing_ok=True)
    picture.symlink_to(outside)
    code, err = in_process(capsys, ["show-options", str(run), "--episodes", "2"])
    assert code == 0, err
    assert outside.read_bytes() == b"the user's own picture"
    assert not picture.is_symlink() and picture.read_bytes()[:4] == b"\x89PNG"


def test_files_a_report_reopens_are_never_waited_on_or_read_whole(tiny, tmp_path):
    """A FIFO or a /dev/zero link as diagnose.json, tensorboard/export.json or leaderboard.json."""
    fifo_run, _ = copy_of(tiny, tmp_path / "a")
    os.mkfifo(fifo_run / "diagnose.json")
    (fifo_run / "tensorboard").mkdir()
    os.mkfifo(fifo_run / "tensorboard" / "export.json")
    zero_run, _ = copy_of(tiny, tmp_path / "b")
    (zero_run / "diagnose.json").symlink_to("/dev/zero")
    (zero_run / "tensorboard").mkdir()
    (zero_run / "tensorboard" / "export.json").symlink_to("/dev/zero")
    (zero_run / "leaderboard.json").unlink()
    (zero_run / "leaderboard.json").symlink_to("/dev/zero")
    commands = [
        ["report", str(fifo_run)],
        ["report", str(zero_run)],
        ["export-tensorboard", str(fifo_run)],
        ["export-tensorboard", str(zero_run)],
    ]
    (report_fifo, report_zero, export_fifo, export_zero) = each_in_a_subprocess(commands)
    # Files recording no readable owner are nobody's report: left where they are.
    assert report_fifo[0] == 0 and report_zero[0] == 0, (report_fifo, report_zero)
    assert (fifo_run / "diagnose.json").is_fifo() and (zero_run / "diagnose.json").is_symlink()
    for code, err in (export_fifo, export_zero):
        (line,) = errors(err)
        assert code == 2 and "export.json" in line and "not an earlier export" in line, line
