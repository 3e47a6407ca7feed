"""Reference returns that cannot lie (issue 40, item 2 and 6; issue 35, item 2).

Each hostile case of the review: references measured under different caps, a cached reference
file damaged, edited by hand, holding a JSON list or another pair's values, an error while
measuring (an env's NaN reward, a damaged Minari file), a report written while another runner
into the same folder has not measured its seeds' references yet, and two runners writing the
spec's references at once. Each is a correct number, a warning naming the file, or one failed
step naming its cause -- never a traceback or a wrong number with exit 0.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from runner_support import (  # noqa: F401  (fakes: a fixture)
    REPO,
    cli_command,
    fakes,
    run_cli,
    write_spec,
)

from opt_suite.report.source import load_references, references_covering
from opt_suite.runner import protocol
from opt_suite.runner import references as refs
from opt_suite.runner.claims import Claims
from opt_suite.runner.protocol import plan_spec, resolve_components
from opt_suite.runner.scheduler import Summary
from opt_suite.spec import load_spec, spec_hash
from opt_suite.store.files import REFERENCES_DIR, references_file
from opt_suite.store.sealed import read_sealed

QUICK = Path(__file__).resolve().parents[2] / "specs" / "fourrooms-quick.yaml"


def _quick(max_steps: int | None = None, demo_steps: int | None = None):
    """fourrooms-quick's spec, its components, family and seed 0's first two test tasks."""
    spec = load_spec(QUICK)
    if max_steps is not None:
        spec = dataclasses.replace(
            spec, evaluation=dataclasses.replace(spec.evaluation, max_steps=max_steps)
        )
    if demo_steps is not None:
        spec = dataclasses.replace(
            spec, demonstrations=dataclasses.replace(spec.demonstrations, max_steps=demo_steps)
        )
    components = resolve_components(spec)
    family, _, tasks, _ = plan_spec(spec, [0], components)
    return spec, components, family, tasks.test(0)[:2]


def test_a_short_cap_cuts_the_expert_like_the_random_policy(tmp_path):
    # 5 steps of -1 each reach no goal of the 13x13 four rooms from the start: both references
    # are returns under the same cap, so the expert never earns less than the random policy
    # (before: random was cut at 5 steps, the expert's whole path counted, expert < random).
    spec, components, family, test = _quick(max_steps=5)
    path = refs.measure_references(spec, components, family, test, [0, 1], tmp_path)
    loaded = load_references(path, [])
    assert loaded is not None
    assert np.all(loaded.expert >= loaded.random - 1e-9), (loaded.expert, loaded.random)
    assert np.all(loaded.expert >= -5.0)


def test_a_demonstration_cap_shorter_than_the_learners_is_refused(tmp_path):
    # demonstrations.max_steps 5 < evaluation.max_steps 500: the expert would be a return under
    # a shorter cap than the random one's. A located error, never a number.
    spec, components, family, test = _quick(demo_steps=5)
    with pytest.raises(refs.ReferenceError) as caught:
        refs.measure_references(spec, components, family, test[:1], [0], tmp_path)
    message = str(caught.value)
    assert "seed 0, test task" in message
    assert "demonstrations.max_steps" in message and "\n" not in message
    assert not references_file(tmp_path, spec_hash(spec)).exists()


def test_a_source_that_cuts_its_trajectories_short_is_refused(tmp_path, monkeypatch):
    # A source that silently cuts at its own demonstrations.max_steps (20) below the learner's
    # evaluation.max_steps (500): the expert's return would be under a shorter cap.
    import opt_suite.demonstrations as demonstrations
    from opt_suite.trajectory import Trajectory

    spec, components, family, test = _quick(demo_steps=20)
    cut = Trajectory("t", np.zeros(21, dtype=np.int64), np.zeros(20, dtype=np.int64), -np.ones(20))
    monkeypatch.setattr(demonstrations, "collect_demonstrations", lambda *a, **k: [cut])
    with pytest.raises(refs.ReferenceError) as caught:
        refs.measure_references(spec, components, family, test[:1], [0], tmp_path)
    message = str(caught.value)
    assert "demonstrations.max_steps = 20" in message and "evaluation.max_steps = 500" in message
    # Shorter than both caps (it reached the goal): measured, the mismatch does not matter.
    done = Trajectory("t", np.zeros(6, dtype=np.int64), np.zeros(5, dtype=np.int64), -np.ones(5))
    monkeypatch.setattr(demonstrations, "collect_demonstrations", lambda *a, **k: [done])
    path = refs.measure_references(spec, components, family, test[:1], [0], tmp_path)
    assert load_references(path, []).expert.tolist() == [[-5.0]]


def _damage(path: Path, how: str, other: Path) -> None:
    if how == "edited":  # a value changed by hand, the digest left alone
        doc = json.loads(path.read_text())
        doc["payload"]["expert"] = doc["payload"]["random"]
        path.write_text(json.dumps(doc))
    elif how == "truncated":
        path.write_bytes(path.read_bytes()[:20])
    elif how == "list":
        path.write_text("[1, 2]")
    elif how == "other pair":  # a sealed file, but of another (seed, task)
        path.write_bytes(other.read_bytes())


@pytest.mark.parametrize("how", ["edited", "truncated", "list", "other pair"])
def test_a_bad_cached_file_is_named_remeasured_and_rewritten(tmp_path, how):
    spec, components, family, test = _quick()
    spec_file = refs.measure_references(spec, components, family, test, [0], tmp_path)
    good = load_references(spec_file, [])
    cached = sorted((tmp_path / REFERENCES_DIR).glob("[0-9a-f]*.json"))
    assert len(cached) == 2
    # the first test task's file: the one whose key names test task index test[0].index
    first = next(
        p for p in cached if read_sealed(p, "x")["key"]["test_task_index"] == test[0].index
    )
    other = next(p for p in cached if p != first)
    _damage(first, how, other)
    warnings: list[str] = []
    again = refs.measure_references(spec, components, family, test, [0], tmp_path, warnings.append)
    assert len(warnings) == 1 and str(first.absolute()) in warnings[0], warnings
    assert "measuring the references again" in warnings[0]
    loaded = load_references(again, [])
    assert loaded is not None and good is not None
    np.testing.assert_array_equal(loaded.random, good.random)
    np.testing.assert_array_equal(loaded.expert, good.expert)
    # rewritten: a third measurement trusts it again, without a word
    quiet: list[str] = []
    refs.measure_references(spec, components, family, test, [0], tmp_path, quiet.append)
    assert quiet == []


@pytest.mark.parametrize("how", ["edited", "truncated", "list"])
def test_a_bad_spec_references_file_is_named_by_the_report(tmp_path, how):
    spec, components, family, test = _quick()
    path = refs.measure_references(spec, components, family, test, [0], tmp_path)
    _damage(path, how, path)
    warnings: list[str] = []
    assert load_references(path, warnings) is None
    assert len(warnings) == 1 and warnings[0].startswith("no normalised scores: ")
    assert str(path.absolute()) in warnings[0] and "opt-suite run" in warnings[0]


def test_a_report_before_another_runners_references_leaves_them_out(tmp_path):
    # Runner A measured seed 0 while runner B's seed 1 was still being evaluated; A's report
    # then sees seed 1's episodes: no failure ("no reference returns for seed 1"), a caveat.
    spec, components, family, test = _quick()
    path = refs.measure_references(spec, components, family, test, [0], tmp_path)
    loaded = load_references(path, [])
    warnings: list[str] = []
    assert references_covering(loaded, [0], path, warnings) is loaded and warnings == []
    assert references_covering(loaded, [0, 1], path, warnings) is None
    assert len(warnings) == 1 and "seed(s) 1" in warnings[0] and str(path.absolute()) in warnings[0]


def test_runners_take_turns_and_read_the_stored_seeds_in_their_turn(tmp_path, monkeypatch):
    # Another runner holds the references claim; this one waits for it, then measures every
    # seed stored by then (seed 1 was stored while it waited), so it never writes a file that
    # drops a seed the other runner stored.
    spec, components, family, test = _quick()
    stored = [0]
    monkeypatch.setattr(protocol, "_stored_seeds", lambda directory: list(stored))
    name = protocol.REFERENCES_CLAIM.format(spec_hash=spec_hash(spec))
    summary = Summary()
    plan = plan_spec(spec, [0], components)[3]
    with Claims(tmp_path).held(name):
        worker = threading.Thread(
            target=protocol._write_references,
            args=(spec, components, family, plan, lambda seed: test, tmp_path, None, summary),
        )
        worker.start()
        time.sleep(0.5)
        assert worker.is_alive()  # waiting for the claim
        assert not references_file(tmp_path, spec_hash(spec)).exists()
        stored.append(1)
    worker.join(timeout=120)
    assert not worker.is_alive() and summary.failed == []
    loaded = load_references(references_file(tmp_path, spec_hash(spec)), [])
    assert loaded is not None and loaded.seeds == (0, 1)


@pytest.mark.usefixtures("fakes")
@pytest.mark.parametrize(
    "error",
    [
        FloatingPointError("invalid value encountered in reward: the env returned NaN"),
        OSError("Unable to open file (truncated file: eof = 96)"),  # h5py on a damaged Minari
        KeyError("observations"),
    ],
    ids=["nan-reward", "damaged-minari", "key-error"],
)
def test_an_error_while_measuring_is_one_failed_step(tmp_path, monkeypatch, capsys, error):
    def broken(*args, **kwargs):
        raise error

    monkeypatch.setattr(refs, "_expert_return", broken)
    spec = write_spec(tmp_path, seeds=1, test=2)
    out = tmp_path / "out"
    # --workers 0: the references cells run in this process, where the fault is patched in
    assert run_cli(spec, "--out", out, "--quiet", "--workers", "0") == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "cannot write results" not in err
    failed = [line for line in err.splitlines() if line.startswith("failed: reference returns")]
    assert len(failed) == 2, err  # one failed references cell per (seed, test task)
    assert all("seed 0, test task" in f and type(error).__name__ in f for f in failed)
    assert "would repeat on a rerun" in err  # a deterministic failure: fix the cause
    board = json.loads((out / "leaderboard.json").read_text())
    assert "normalised" not in board
    assert any(
        w.startswith("no normalised scores: reference returns not measured")
        for w in board["warnings"]
    )
    # every episode is there: the run is not reported as incomplete for its references
    assert not any(w.startswith("incomplete run") for w in board["warnings"]), board["warnings"]


def test_an_env_with_nan_rewards_is_one_located_error(tmp_path, monkeypatch):
    # No model (so the random policy is sampled) and an env whose rewards are NaN.
    spec, components, family, test = _quick()
    monkeypatch.setattr(refs, "exact_model", lambda *a: None)
    make_env = family.make_env

    class NanRewards:
        def __init__(self, env):
            self.env, self.action_space = env, env.action_space

        def reset(self, **kwargs):
            return self.env.reset(**kwargs)

        def step(self, action):
            obs, _, terminated, truncated, info = self.env.step(action)
            return obs, float("nan"), terminated, truncated, info

        def close(self):
            self.env.close()

    monkeypatch.setattr(family, "make_env", lambda task: NanRewards(make_env(task)))
    with pytest.raises(refs.ReferenceError, match=r"^seed 0, test task .*non-finite"):
        refs.measure_references(spec, components, family, test[:1], [0], tmp_path)


@pytest.mark.slow
@pytest.mark.usefixtures("fakes")
def test_two_seed_runs_into_one_folder_at_once(tmp_path):
    # The review's case (failed once in four): `run --seeds 0` and `run --seeds 1` together.
    # Neither fails for the other's references, and the file left covers both seeds.
    spec = write_spec(tmp_path, seeds=2, test=2, learner={"sleep_s": 0.05})
    out = tmp_path / "out"
    runs = [
        subprocess.Popen(
            cli_command(spec, "--out", out, "--seeds", seed, "--quiet"),
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for seed in ("0", "1")
    ]
    results = [(r.wait(timeout=300), r.communicate()[1]) for r in runs]
    for code, err in results:
        assert code == 0, err
        assert "Traceback" not in err and "no reference returns" not in err, err
    spec_file = next((out / REFERENCES_DIR).glob("spec-*.json"))
    loaded = load_references(spec_file, [])
    assert loaded is not None and loaded.seeds == (0, 1)


def test_a_report_whose_experts_all_lose_to_random_has_one_loud_caveat(tmp_path):
    # Asterix's case: on some seed of every test task the expert earns less than random.
    from report_fakes import linear_table

    from opt_suite.report import ReportInputs, write_report_files
    from opt_suite.report.normalise import References
    from opt_suite.spec.schema import ReportSpec

    table = linear_table({"primitives": 0.0, "ours": 5.0}, seeds=2, tasks=2)
    references = References(
        (0, 1), (0, 1), np.array([[5.0, 0.0], [0.0, 2.0]]), np.array([[1.0, 10.0], [9.0, 2.0]])
    )
    inputs = ReportInputs(table, "toy", "h", ReportSpec(bootstrap=200), references=references)
    write_report_files(inputs, tmp_path)
    board = json.loads((tmp_path / "leaderboard.json").read_text())
    assert "normalised" not in board
    loud = [w for w in board["warnings"] if w.startswith("NO NORMALISED SCORES")]
    assert len(loud) == 1 and "seed 0 task 0, seed 1 task 1" in loud[0] and "n = 0 of 4" in loud[0]
    assert "Normalised scores" not in (tmp_path / "leaderboard.md").read_text()
