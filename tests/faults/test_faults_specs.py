"""Oversize, special-file and absurd specs: a located error (exit 2), never a hang or a blow-up."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import yaml
from runner_support import REPO

from opt_suite.cli import main

QUICK = REPO / "specs" / "fourrooms-quick.yaml"


def validate(capsys, *paths):
    capsys.readouterr()
    code = main(["validate", *map(str, paths)])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.out, captured.err


def child(tmp_path, text, name="spec.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def opt_suite(*argv, timeout: float) -> subprocess.CompletedProcess:
    """``opt-suite ARGV`` in a fresh process; a hang or a runaway read fails at ``timeout``.

    A subprocess timeout far above the expected time, not a timed assert: on a loaded machine a
    timed assert fails a correct program (one such assert once failed at 66 s against 60).
    """
    return subprocess.run(
        [sys.executable, "-m", "opt_suite", *map(str, argv)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
    )


def test_extends_dev_zero_is_refused_without_reading_it(tmp_path):
    spec = child(tmp_path, "extends: /dev/zero\nname: x\n")
    result = opt_suite("validate", spec, timeout=120)  # reading /dev/zero would never end
    err = result.stderr
    assert result.returncode == 2 and "'/dev/zero' is not a regular file" in err
    assert f"{spec}:1:10: extends:" in err and "Traceback" not in err


def test_a_fifo_spec_or_parent_is_refused_not_waited_on(tmp_path):
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    spec = child(tmp_path, f"extends: {fifo}\nname: x\n")
    for target in (fifo, spec):
        result = subprocess.run(
            [sys.executable, "-m", "opt_suite", "validate", str(target)],
            capture_output=True,
            text=True,
            timeout=60,  # a hang fails here
            cwd=REPO,
        )
        assert result.returncode == 2 and "is not a regular file" in result.stderr


def test_an_oversize_spec_is_refused_by_bytes_read(capsys, tmp_path):
    big = child(tmp_path, "name: x\n" + "# padding\n" * 200_000, "big.yaml")
    code, _, err = validate(capsys, big)
    assert code == 2 and "file is too large (expected at most 1048576 bytes)" in err
    spec = child(tmp_path, f"extends: {big.name}\nname: y\n")
    code, _, err = validate(capsys, spec)
    assert code == 2 and f"{spec}:1:10: extends: file is too large" in err


def test_a_long_extends_chain_is_refused(capsys, tmp_path):
    for i in range(40):
        child(tmp_path, f"extends: s{i + 1}.yaml\n" if i < 39 else "name: x\n", f"s{i}.yaml")
    code, _, err = validate(capsys, tmp_path / "s0.yaml")
    assert code == 2 and "extends chain longer than 32 files" in err


ABSURD = [
    ("tasks.count", ["tasks", "count"], 10**9),
    ("tasks.test", ["tasks", "test"], 10**6),
    ("tasks.seed", ["tasks", "seed"], 2**40),
    ("evaluation.seeds", ["evaluation", "seeds"], 10**9),
    ("evaluation.episodes", ["evaluation", "episodes"], 10**9),
    ("evaluation.max_steps", ["evaluation", "max_steps"], 10**12),
    ("evaluation.interaction_budget", ["evaluation", "interaction_budget"], 10**15),
    ("report.bootstrap", ["report", "bootstrap"], 10**9),
    ("report.equivalence_p", ["report", "equivalence_p"], 0.7),  # P's band: within [0, 1]
    ("report.equivalence_normalised", ["report", "equivalence_normalised"], 5.0),
    ("demonstrations.trajectories_per_task", ["demonstrations", "trajectories_per_task"], 10**7),
    ("family.params.max_episode_steps", ["family", "params", "max_episode_steps"], 10**9),
    ("methods[2].params.max_options", ["methods", 2, "params", "max_options"], 10**6),
    ("methods[2].params.epochs", ["methods", 2, "params", "epochs"], 10**9),
    ("methods[2].params.hidden_sizes[0]", ["methods", 2, "params", "hidden_sizes", 0], 10**7),
    ("methods[1].params.count", ["methods", 1, "params", "count"], 10**6),
    ("methods[3].params.count", ["methods", 3, "params", "count"], 10**6),
    ("methods[4].params.options", ["methods", 4, "params", "options"], 10**6),
]


@pytest.mark.parametrize(("where", "path", "value"), ABSURD, ids=[a[0] for a in ABSURD])
def test_absurd_values_are_located_errors(capsys, tmp_path, where, path, value):
    doc = yaml.safe_load(QUICK.read_text())
    doc["methods"][2]["params"] = dict(doc["methods"][2]["params"])
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    spec = child(tmp_path, yaml.safe_dump(doc, sort_keys=False))
    code, _, err = validate(capsys, spec)
    assert code == 2
    line = next(x for x in err.splitlines() if f": {where}: out of range" in x)
    assert line.startswith(f"{spec}:") and f"got {value}" in line and "<=" in line


def test_validate_prints_the_work_estimate(capsys):
    code, out, _ = validate(capsys, QUICK)
    assert code == 0
    assert f"{len(quick_plan().cells)} cells" in out
    assert "env steps" in out and "largest array" in out


def quick_plan():
    from opt_suite.runner.protocol import plan_spec, resolve_components
    from opt_suite.spec import load_spec

    spec = load_spec(QUICK)
    return plan_spec(spec, range(spec.evaluation.seeds), resolve_components(spec))[3]


def test_run_refuses_a_spec_that_cannot_fit_in_memory(capsys, tmp_path):
    doc = yaml.safe_load(QUICK.read_text())
    doc["family"] = {"name": "chain", "params": {"num_states": 100_000}}
    # One train and one test task, one seed: the refusal is about one cell's array, and every
    # cell's id hashes the train tasks (2 x 100k probabilities each): with the quick spec's 4 train
    # tasks in its 42 cells, planning alone took most of the test's seconds.
    doc["tasks"] = {"count": 2, "train": 1, "test": 1, "seed": 0}
    doc["evaluation"]["seeds"] = 1
    doc["methods"] = [
        {"name": "primitives", "method": "primitives"},
        {"name": "eigenoptions", "method": "eigenoptions", "params": {"count": 4}},
    ]
    spec = child(tmp_path, yaml.safe_dump(doc, sort_keys=False))
    out = tmp_path / "out"
    # Refused before any cell: seconds. Computing the 100k-state Laplacian would take far longer
    # than the timeout (or exhaust memory).
    result = opt_suite("run", spec, "--out", out, "--workers", "0", "--quiet", timeout=900)
    err = result.stderr
    assert result.returncode == 2, err
    assert "cannot fit in memory" in err and "Laplacian" in err and "Traceback" not in err
    assert not (out / "results.sqlite").exists()  # nothing was computed or recorded


@pytest.mark.parametrize(
    "seeds", ["0-1000000000", "0-5000", "99999999999", "0-999,1000", "-3", "5-2", "a-b"]
)
def test_absurd_seed_lists_are_clear_errors(capsys, seeds):
    capsys.readouterr()
    code = main(["run", str(QUICK), "--seeds", seeds, "--out", "/nonexistent/never"])
    err = capsys.readouterr().err
    assert code == 2 and "--seeds" in err and "Traceback" not in err


@pytest.mark.parametrize("trials", ["1e9", "1000000000", "0", "-1", "many"])
def test_absurd_validate_objective_trials_are_clear_errors(capsys, trials):
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main(["validate-objective", "--trials", trials])
    assert exc.value.code == 2
    assert "--trials" in capsys.readouterr().err


HELDOUT = REPO / "specs" / "fourrooms-heldout.yaml"


@pytest.mark.parametrize(
    ("edit", "where", "expected"),
    [
        (
            {"positive_controls": ["hallway-options", "eigenoption"]},
            "report.positive_controls[1]",
            "no method entry is named 'eigenoption'",
        ),
        ({"positive_controls": []}, "report.clone", "a validity check on a spec with no positive"),
        ({"clone": None}, "report.positive_controls", "a validity check needs the cloned option"),
    ],
)
def test_a_broken_validity_check_is_a_located_error(capsys, tmp_path, edit, where, expected):
    doc = yaml.safe_load(HELDOUT.read_text())
    doc["report"].update(edit)
    spec = child(tmp_path, yaml.safe_dump(doc, sort_keys=False))
    code, out, err = validate(capsys, spec)
    assert (code, out) == (2, "")
    (line,) = err.splitlines()
    assert line.startswith(f"{spec}:") and f": {where}: {expected}" in line


def test_a_held_out_room_that_is_not_a_room_is_a_located_error(capsys, tmp_path):
    doc = yaml.safe_load(HELDOUT.read_text())
    doc["tasks"]["vary"]["held_out_room"] = "east-hallway"
    spec = child(tmp_path, yaml.safe_dump(doc, sort_keys=False))
    code, _, err = validate(capsys, spec)
    (line,) = err.splitlines()
    assert code == 2 and ": tasks.vary.held_out_room: " in line and "'south-east'" in line
