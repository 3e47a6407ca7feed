"""``opt-suite diagnose``: Ĵ of every option set of a run, term by term; it never changes a cell."""

from __future__ import annotations

import hashlib
import json
import shutil

import numpy as np
import pytest

from opt_suite.cli import main
from opt_suite.cli.diagnose import CODE_CHANGED

SPEC = """
name: diagnose-toy
description: a reduced fourrooms-quick with Algorithm 1 (tiny networks), for diagnose
family: {name: fourrooms, params: {layout: sutton-13x13, max_episode_steps: 200}}
tasks: {count: 4, train: 2, test: 2, seed: 0}
methods:
  - {name: primitives, method: primitives}
  - name: offline
    method: offline_options
    params: {hidden_sizes: [8], epochs: 2, max_epochs: 2, max_options: 2, steps_per_epoch: 5}
  - {name: eigenoptions, method: eigenoptions, params: {count: 2}}
evaluation: {episodes: 2, max_steps: 50, seeds: 2}
report: {baseline: primitives, final_fraction: 0.5}
"""


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("diagnose")
    (folder / "spec.yaml").write_text(SPEC)
    out = folder / "run"
    assert main(["run", str(folder / "spec.yaml"), "--out", str(out), "--workers", "0",
                 "--quiet", "--no-report"]) == 0  # fmt: skip
    return out


def diagnose(*args) -> int:
    return main(["diagnose", *map(str, args)])


def digests(run) -> dict[str, str]:
    """SHA-256 of every file of the store (the database and every cell's files)."""
    files = [run / "results.sqlite", *sorted((run / "cells").rglob("*"))]
    return {
        str(p.relative_to(run)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in files
        if p.is_file()
    }


def test_scores_every_option_set_and_changes_no_cell(run_dir, tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(run_dir, run)
    before = digests(run)
    assert diagnose(run) == 0, capsys.readouterr().err
    assert digests(run) == before  # the store is read, never written
    data = json.loads((run / "diagnose.json").read_text())
    assert data["objective"] == {
        "lambda1": 0.0,
        "lambda2": 100.0,
        "likelihood": "log_prob_per_step",
    }
    sets = {(s["method"], s["seed"]): s for s in data["option_sets"]}
    assert set(sets) == {(m, s) for m in ("primitives", "offline", "eigenoptions") for s in (0, 1)}
    for (method, _seed), s in sets.items():
        fitted = s["fitted_pi"]
        assert fitted["jhat"] == pytest.approx(
            fitted["likelihood_term"] - fitted["termination_term"] + fitted["kl_term"]
        )
        # Only Algorithm 1 trains a π; the table fitted with its options frozen reaches more Ĵ.
        assert (s["own_pi"] is not None) == (method == "offline")
        if s["own_pi"] is not None:
            assert fitted["jhat"] >= s["own_pi"]["jhat"] - 1e-6
        for demo in s["demonstrations"]:
            covered = [(g["start"], g["end"]) for g in demo["segments"]]
            assert covered[0][0] == 0 and covered[-1][1] == demo["steps"]
            assert all(a[1] == b[0] for a, b in zip(covered[:-1], covered[1:], strict=True))
        if method == "primitives":  # every step is a primitive, every step terminates
            assert s["option_share"] == 0.0 and fitted["termination_term"] == pytest.approx(1.0)
    text = (run / "diagnose.md").read_text()
    assert "| offline | 0 |" in text and "| primitives | 0 | 0 | — | — | — | — |" in text
    assert "### eigenoptions, seed 1" in text


def test_the_stored_policy_is_algorithm_1s(run_dir):
    # Ĵ under the stored π equals Ĵ_N that Algorithm 1 recorded for its last kept round.
    from opt_suite.store import ResultsStore

    data_run = run_dir
    with ResultsStore(data_run) as store:
        cell = next(c for c in store.cells() if c.kind == "discovery" and c.method == "offline")
        kept = [r for r in cell.info["rounds"] if r["kept"]]
        options = store.option_set("offline", cell.seed)
        demos = store.demonstrations(cell.seed)
        from opt_suite.methods.offline_options.method import POLICY_FILE, load_policy

        pi = load_policy(store.recorded_file(cell.cell_id, POLICY_FILE))
    from opt_suite.objective import score_option_set

    assert pi.shape[1] == 4 + len(options)
    score = score_option_set(options, demos, pi)
    assert score.total == pytest.approx(kept[-1]["jhat"], rel=1e-4, abs=1e-4)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--methods", "nope"], "--methods 'nope': the run has primitives, offline, eigenoptions"),
        (["--seeds", "5"], "the run has no seed [5]"),
        (["--lambda2", "-1"], "must be >= 0"),
    ],
)
def test_bad_arguments_exit_2(run_dir, argv, message, capsys):
    assert diagnose(run_dir, *argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "argv",
    [
        ["--lambda2", "nan"],
        ["--lambda2", "inf"],
        ["--lambda1=-inf"],
        ["--lambda2", "1e308"],
        ["--lambda1", "1e7"],
    ],
)
def test_weights_are_finite_and_bounded_before_anything_is_read(tmp_path, argv, capsys):
    # Checked before the run is opened: a folder with no run gives the weights' message.
    assert diagnose(tmp_path, *argv) == 2
    captured = capsys.readouterr()
    (line,) = captured.err.strip().splitlines()
    flag = argv[0].split("=")[0]
    assert f"{flag} " in line and "must be >= 0 and <= 1e+06 (finite numbers)" in line
    assert "Traceback" not in captured.err and not (tmp_path / "diagnose.md").exists()


def test_a_damaged_or_incomplete_run_exits_2(run_dir, tmp_path, capsys):
    assert diagnose(tmp_path / "nope") == 2
    assert "no such directory" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert diagnose(tmp_path / "empty") == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    run = tmp_path / "run"
    shutil.copytree(run_dir, run)
    [options] = [
        p for p in run.glob("cells/*/options.npz")
        if json.loads((p.parent / "cell.json").read_text()).get("method") == "offline"
        and json.loads((p.parent / "cell.json").read_text()).get("seed") == 1
    ]  # fmt: skip
    options.write_bytes(options.read_bytes()[:-10])
    assert diagnose(run) == 2
    err = capsys.readouterr().err
    assert "(discovery)" in err and "fails verification" in err and len(err.splitlines()) == 1
    assert not (run / "diagnose.md").exists()
    shutil.rmtree(options.parent)
    import sqlite3

    with sqlite3.connect(run / "results.sqlite") as conn:  # as if the run had been cut short
        conn.execute("DELETE FROM cells WHERE cell_id = ?", (options.parent.name,))
    conn.close()
    assert diagnose(run) == 2
    err = capsys.readouterr().err
    assert "discovery of 'offline', seed 1 is missing: the run is incomplete" in err


def test_a_run_of_other_code_or_without_demonstrations_exits_2(
    run_dir, tmp_path, monkeypatch, capsys
):
    import opt_suite.runner.plan as plan

    with monkeypatch.context() as patch:
        patch.setattr(plan, "PROTOCOL", plan.PROTOCOL + 100)  # every cell id changes
        assert diagnose(run_dir) == 2
    assert CODE_CHANGED in capsys.readouterr().err
    primitives_only = SPEC.split("  - name: offline")[0] + SPEC.split("count: 2}}\n")[1]
    assert "offline" not in primitives_only and "evaluation:" in primitives_only
    (tmp_path / "spec.yaml").write_text(primitives_only.replace("seeds: 2", "seeds: 1"))
    assert main(["run", str(tmp_path / "spec.yaml"), "--out", str(tmp_path / "run"),
                 "--workers", "0", "--quiet", "--no-report"]) == 0  # fmt: skip
    capsys.readouterr()
    assert diagnose(tmp_path / "run") == 2
    assert "the run has no demonstrations" in capsys.readouterr().err


def test_public_scoring_on_hand_made_options():
    from opt_suite.methods.base import Trajectory
    from opt_suite.objective import JhatConfig, fit_pi_table, score_option_set
    from opt_suite.options import TabularOptionSet

    # A chain 0..5, actions 0 (left) and 1 (right); one option "right until state 5".
    mu = np.zeros((1, 6, 2))
    mu[0, :, 1] = 1.0
    beta = np.zeros((1, 6))
    beta[0, 5] = 1.0
    options = TabularOptionSet(mu, beta, ("right",))
    demos = [Trajectory("t", np.arange(6), np.ones(5, int), np.zeros(5))]
    config = JhatConfig(lambda2=100.0, likelihood="log_prob_per_step")
    # π always picks the option: Pr(h) = 1 and the only termination is at s_5: Ĵ = −1/5.
    always = np.tile([0.0, 0.0, 1.0], (6, 1))
    score = score_option_set(options, demos, always, config)
    assert score.total == pytest.approx(-0.2) and score.likelihood_term == pytest.approx(0.0)
    fitted = fit_pi_table(options, demos, config)
    assert fitted.score.total == pytest.approx(-0.2, abs=1e-3) and fitted.converged
    assert fitted.pi[0, 2] > 0.99  # s_0: the option
    # An option that goes the wrong way and never ends: the fit never falls below the primitives
    # alone (terminations 1 per step, every action near-certain: Ĵ just under −1).
    wrong = TabularOptionSet(mu[:, :, ::-1], np.zeros((1, 6)), ("left",))
    alone = fit_pi_table(TabularOptionSet.empty(6, 2), demos, config).score.total
    assert -1.01 < alone <= -1.0
    assert fit_pi_table(wrong, demos, config).score.total >= alone - 1e-9


def test_degenerate_options_are_a_section_and_a_warning(run_dir, tmp_path, monkeypatch, capsys):
    # With the thresholds at 0 every option counts as a copy: the wiring, not the rule (which
    # tests/test_report_degenerate.py checks by hand), is what this tests.
    import opt_suite.report.degenerate as degenerate

    run = tmp_path / "run"
    shutil.copytree(run_dir, run)
    monkeypatch.setattr(degenerate, "COPY_TERMINATION", 0.0)
    monkeypatch.setattr(degenerate, "COPY_ACTION", 0.0)
    capsys.readouterr()
    assert diagnose(run, "--methods", "eigenoptions", "--seeds", "0") == 0
    err = capsys.readouterr().err
    data = json.loads((run / "diagnose.json").read_text())
    flagged = data["degenerate_options"]
    assert len(flagged) == 2 and all(f.startswith("eigenoptions, seed 0: option ") for f in flagged)
    assert all("is a copy of primitive" in f for f in flagged)
    assert err.count("warning: degenerate option: eigenoptions, seed 0") == 2
    assert "## Degenerate options" in (run / "diagnose.md").read_text()
