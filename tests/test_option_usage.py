"""Option usage: the learner's counts, the pure statistics, the verified replay command."""

from __future__ import annotations

import csv
import json
import math
import pickle
import shutil
import sqlite3

import numpy as np
import pytest
from tabular_toys import FOUR_ROOMS_11, ToyFamily, grid_model, toy_tasks

from opt_suite.cli import main
from opt_suite.cli.option_usage import REPLAY_DIFFERS
from opt_suite.families.base import TabularModel
from opt_suite.learners.base import LearnerContext, LearnerRun, OptionUsage
from opt_suite.learners.smdp_batch import HANDOFF_RUNS
from opt_suite.learners.smdp_q import SMDPQLearning
from opt_suite.learners.smdp_scalar import ScalarOptions, ScalarRun, ScalarTables
from opt_suite.learners.smdp_tables import Hyper, OptionTables, TaskTables
from opt_suite.methods.base import TabularOptionSet
from opt_suite.report.option_usage import RunUsage, run_rows, totals, usage_markdown

# -- the learner's counts ------------------------------------------------------------------------


def test_counting_changes_no_learning_number_and_the_counts_add_up():
    # More runs than HANDOFF_RUNS: `run` takes the numpy batch engine, `run_with_usage` the scalar
    # engine from the first step; every number must still be the same, bit for bit.
    rng = np.random.default_rng(3)
    models = [grid_model(FOUR_ROOMS_11, (1, 1), g, slip=0.1) for g in [(11, 11), (3, 9)]]
    S = models[0].num_states
    mu = rng.dirichlet(np.ones(4), size=(3, S))
    options = TabularOptionSet(mu, rng.random((3, S)) * 0.1)
    learner = SMDPQLearning(SMDPQLearning.Params(alpha=0.2, epsilon=0.1, q_init=0.5))
    runs = [LearnerRun(t, np.random.SeedSequence(s)) for t in toy_tasks(*models) for s in range(22)]
    assert len(runs) > HANDOFF_RUNS
    context = LearnerContext(ToyFamily(), runs, options, 10, 200)
    logs = learner.run(context)
    counted = learner.run_with_usage(context)
    assert len(counted) == len(runs)
    for log, (again, usage) in zip(logs, counted, strict=True):
        np.testing.assert_array_equal(again.returns, log.returns)
        np.testing.assert_array_equal(again.steps, log.steps)
        np.testing.assert_array_equal(again.frames, log.frames)
        assert usage.names == ("a0", "a1", "a2", "a3", "option-0", "option-1", "option-2")
        assert usage.calls.shape == usage.steps.shape == (10, 7)
        np.testing.assert_array_equal(usage.steps.sum(axis=1), log.steps)
        np.testing.assert_array_equal(usage.steps[:, :4], usage.calls[:, :4])  # 1 step per call
        # An option runs at least one step and, with the bump of 0.05, at most 20.
        assert (usage.calls[:, 4:] <= usage.steps[:, 4:]).all()
        assert (usage.steps[:, 4:] <= 20 * usage.calls[:, 4:]).all()
    assert sum(int(u.calls[:, 4:].sum()) for _, u in counted) > 100  # options were chosen


def test_counts_survive_a_file_and_a_pickle(tmp_path):
    calls, steps = np.array([[2, 1, 0], [0, 0, 3]]), np.array([[2, 1, 0], [0, 0, 11]])
    usage = OptionUsage(("a0", "a1", "option-0"), 2, calls, steps)
    usage.save(tmp_path / "u.npz")
    for again in (OptionUsage.load(tmp_path / "u.npz"), pickle.loads(pickle.dumps(usage))):
        assert again.names == usage.names and again.num_primitives == 2
        np.testing.assert_array_equal(again.calls, calls)
        np.testing.assert_array_equal(again.steps, steps)
    np.savez(tmp_path / "other.npz", x=np.zeros(2))
    with pytest.raises(ValueError, match="not an option-usage file"):
        OptionUsage.load(tmp_path / "other.npz")
    with pytest.raises(ValueError, match="expected calls and steps of shape"):
        OptionUsage(("a0",), 1, calls, steps)


def chain_with_shortcut(n: int) -> TabularModel:
    """States 0..n-1 on a line (action 0: one step right, -1) and action 1: to the goal n (0)."""
    S = n + 1
    next_state = np.zeros((S, 2, 1), dtype=np.int32)
    next_state[:, 0, 0] = np.minimum(np.arange(S) + 1, n - 1)
    next_state[:, 1, 0] = n
    reward = np.zeros((S, 2, 1))
    reward[:, 0, 0] = -1.0
    terminal = np.zeros(S, dtype=bool)
    terminal[n] = True
    return TabularModel(next_state, np.ones((S, 2, 1)), reward, terminal, start=0)


def test_counts_of_a_hand_checked_episode():
    # Greedy (epsilon 0, alpha ~ 0): the option (walk right, beta 0, ended by the bump) at state 0,
    # then the shortcut to the goal. Each episode: one option call of L steps, one shortcut call.
    model = chain_with_shortcut(40)
    S = model.num_states
    mu = np.zeros((1, S, 2))
    mu[0, :, 0] = 1.0
    options = OptionTables.build(TabularOptionSet(mu, np.zeros((1, S))), S, 2)
    q = np.zeros((S, 3))
    q[0, 2] = 100.0
    q[1:, 1] = 100.0
    tables = ScalarTables.build(TaskTables.stack([model]), 0, ScalarOptions.build(options))
    hyper = Hyper(1e-12, 0.99, 0.0, 0.1, 0.0, 500)
    run = ScalarRun(tables, hyper, np.random.default_rng(0), q=q, record_usage=True)
    run.run_episodes(30)
    run.run_episodes(20)  # counting goes on across calls
    calls, steps = np.array(run.calls), np.array(run.option_steps)
    assert calls.shape == steps.shape == (50, 3)
    np.testing.assert_array_equal(calls, np.tile([0, 1, 1], (50, 1)))
    np.testing.assert_array_equal(steps[:, :2], np.tile([0, 1], (50, 1)))
    np.testing.assert_array_equal(steps[:, 2], np.array(run.steps) - 1)
    assert 1 <= steps[:, 2].min() and steps[:, 2].max() <= 10 and len(set(steps[:, 2])) > 2
    plain = ScalarRun(tables, hyper, np.random.default_rng(0), q=q)
    plain.run_episodes(50)
    assert plain.returns == run.returns and plain.steps == run.steps and plain.calls == []


# -- the statistics ------------------------------------------------------------------------------


def hand_made() -> RunUsage:
    """10 episodes, 2 primitives and 2 options; the first and the last episode stand out."""
    calls = np.array([[4, 0, 1, 0]] + [[1, 1, 0, 1]] * 8 + [[2, 0, 0, 0]])
    steps = np.array([[4, 0, 6, 0]] + [[1, 1, 0, 3]] * 8 + [[2, 0, 0, 0]])
    return RunUsage("ours", 0, 3, ("a0", "a1", "o1", "o2"), 2, calls, steps)


def test_totals_and_ratios_of_a_hand_made_run():
    run = hand_made()
    t = totals([run])
    assert (t.episodes, t.decisions, t.option_calls, t.steps, t.option_steps) == (10, 31, 9, 52, 30)
    assert t.option_fraction == 9 / 31 and t.option_step_share == 30 / 52
    assert t.mean_option_length == 30 / 9 and t.decisions_per_episode == 3.1
    assert t.option_calls_each == (1, 8) and t.option_steps_each == (6, 24)
    assert t.option_share(0) == 1 / 9 and t.option_length(0) == 6.0 and t.option_length(1) == 3.0
    first, last = totals([run], "first"), totals([run], "last")  # ceil(10%) = 1 episode each
    assert (first.decisions, first.option_fraction, first.mean_option_length) == (5, 0.2, 6.0)
    assert (last.decisions, last.option_fraction) == (2, 0.0)
    assert math.isnan(last.mean_option_length) and math.isnan(last.option_share(0))
    assert totals([run], "first", fraction=0.3).episodes == 3
    with pytest.raises(ValueError, match="part must be"):
        totals([run], "middle")


def test_csv_rows_and_markdown_of_a_hand_made_run():
    other = RunUsage("base", 1, 0, ("a0", "a1", "x"), 2, np.array([[3, 0, 0]]), np.ones((1, 3)))
    rows = run_rows([hand_made(), other])
    assert rows[0]["option_fraction"] == "0.2903" and rows[0]["option_fraction_last"] == "0"
    assert rows[0]["mean_option_length"] == "3.3333"
    assert (rows[0]["o1_calls"], rows[0]["o1_steps"], rows[0]["o2_calls"]) == (1, 6, 8)
    assert rows[0]["x_calls"] == "" and rows[1]["o1_calls"] == "" and rows[1]["x_calls"] == 0
    assert rows[1]["mean_option_length"] == ""  # never called: undefined, not 0
    text = usage_markdown([hand_made()], title="toy", notes=["a note"])
    assert "# Option usage: toy" in text and "- a note" in text
    assert "| decisions that chose an option | 29.0% | 20.0% | 0.0% |" in text
    assert "| mean option length (steps) | 3.33 | 6.00 | – |" in text
    assert "| 0 | o2 | 88.9% | 0.80 | 3.00 |" in text
    assert "10 episodes each" in text and "| first 1 episodes |" in text
    # A frame budget: every run ends its own number of episodes; the page names the range.
    runs = [
        RunUsage("ours", 0, t, run.names, 2, run.calls[:n], run.steps[:n])
        for t, n in enumerate((4, 6, 8, 10))
        for run in [hand_made()]
    ]
    text = usage_markdown(runs)
    assert "4–10 episodes each" in text and "| first 10% of the episodes |" in text
    mixed = RunUsage("ours", 0, 4, ("a0", "a1", "zz"), 2, np.zeros((2, 3)), np.zeros((2, 3)))
    with pytest.raises(ValueError, match="different option sets"):
        usage_markdown([hand_made(), mixed])
    with pytest.raises(ValueError, match="are not both"):
        RunUsage("m", 0, 0, ("a0",), 1, np.zeros((2, 2)), np.zeros((2, 2)))


# -- the replay command --------------------------------------------------------------------------

SPEC = """
name: usage-toy
description: a reduced fourrooms-quick (2 small test tasks, eigenoptions), for option-usage
family: {name: fourrooms, params: {layout: sutton-13x13, max_episode_steps: 200}}
tasks: {count: 4, train: 2, test: 2, seed: 0}
methods:
  - {name: primitives, method: primitives}
  - {name: eigenoptions, method: eigenoptions, params: {count: 2}}
evaluation: {episodes: 20, max_steps: 200, seeds: 2}
report: {baseline: primitives}
"""


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("usage")
    (folder / "spec.yaml").write_text(SPEC)
    out = folder / "run"
    with pytest.MonkeyPatch.context() as patch:  # as by code from before counting: no counts kept
        patch.setattr(SMDPQLearning, "counts_usage", False)
        assert main(["run", str(folder / "spec.yaml"), "--out", str(out), "--workers", "0",
                     "--quiet", "--no-report"]) == 0  # fmt: skip
    assert not list(out.glob("cells/*/option_usage.npz"))
    return out


def usage(*args) -> int:
    return main(["option-usage", *map(str, args)])


def test_replay_matches_the_stored_run_and_writes_the_files(run_dir, tmp_path, capsys):
    from opt_suite.store import ResultsStore

    run = tmp_path / "run"
    shutil.copytree(run_dir, run)
    assert usage(run, "--per-episode") == 0, capsys.readouterr().err
    with (run / "option_usage.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [(r["method"], r["seed"], r["task"]) for r in rows] == [
        ("eigenoptions", s, t) for s in "01" for t in "01"
    ]  # primitives have no options: left out
    with ResultsStore(run) as store:
        stored = store.episode_arrays("eigenoptions")
    for r in rows:
        assert int(r["steps"]) == stored.steps[int(r["seed"]), int(r["task"])].sum()
        assert int(r["options"]) == 2 and int(r["option_calls"]) > 0
        assert int(r["option_calls"]) == int(r["eigen-1+_calls"]) + int(r["eigen-1-_calls"])
    text = (run / "option_usage.md").read_text()
    assert "## eigenoptions" in text and "left out (no options on any seed): primitives" in text
    assert "replayed 4 evaluation cells" in text and "equal the stored ones exactly" in text
    with (run / "option_usage_episodes.csv").open() as f:
        assert len(list(csv.DictReader(f))) == 4 * 20
    assert usage(run, "--seeds", "1", "--methods", "eigenoptions") == 0
    with (run / "option_usage.csv").open() as f:
        assert {r["seed"] for r in csv.DictReader(f)} == {"1"}


def test_runs_record_their_counts_and_the_command_reads_them(tmp_path, capsys):
    (tmp_path / "spec.yaml").write_text(SPEC.replace("seeds: 2}", "seeds: 1}"))
    run = tmp_path / "run"
    assert main(["run", str(tmp_path / "spec.yaml"), "--out", str(run), "--workers", "0",
                 "--quiet", "--no-report"]) == 0  # fmt: skip
    assert len(list(run.glob("cells/*/option_usage.npz"))) == 4  # every evaluation cell
    assert usage(run) == 0, capsys.readouterr().err
    text = (run / "option_usage.md").read_text()
    assert "2 evaluation cells counted their option choices when they ran" in text
    assert "replayed" not in text
    read = (run / "option_usage.csv").read_text()
    assert usage(run, "--replay") == 0
    assert "replayed 2 evaluation cells" in (run / "option_usage.md").read_text()
    assert (run / "option_usage.csv").read_text() == read  # the same counts either way


def test_a_changed_stored_return_makes_the_replay_refuse(run_dir, tmp_path, capsys):
    # As if the run had been computed by other code: one return changed, its checksum made to
    # match (so the store itself is consistent), and the replay no longer reproduces it.
    from opt_suite.store.verify import episodes_checksum

    run = tmp_path / "run"
    shutil.copytree(run_dir, run)
    conn = sqlite3.connect(run / "results.sqlite")
    with conn:
        cell = conn.execute(
            "SELECT e.cell_id FROM episodes e JOIN plan p USING (cell_id) WHERE p.method = "
            "'eigenoptions' AND e.seed = 1 LIMIT 1"
        ).fetchone()[0]
        conn.execute("UPDATE episodes SET ret = ret + 1 WHERE cell_id = ? AND episode = 7", (cell,))
        rows = conn.execute(
            "SELECT task, episode, ret, steps, frames FROM episodes WHERE cell_id = ?", (cell,)
        ).fetchall()
        conn.execute(
            "UPDATE verification SET episodes = ? WHERE cell_id = ?",
            (episodes_checksum(rows), cell),
        )
    conn.close()
    capsys.readouterr()
    assert usage(run) == 2
    err = capsys.readouterr().err
    assert REPLAY_DIFFERS in err and "seed 1" in err and "episode 7" in err
    assert not (run / "option_usage.csv").exists()
    assert usage(run, "--seeds", "0") == 0  # the other seed still replays


def test_changed_learner_code_makes_the_replay_refuse(run_dir, monkeypatch, capsys):
    import opt_suite.learners.smdp_scalar as scalar

    monkeypatch.setattr(scalar, "draw_block", lambda rng: 1.0 - rng.random((scalar.BLOCK_STEPS, 5)))
    assert usage(run_dir) == 2
    assert REPLAY_DIFFERS in capsys.readouterr().err
    assert not (run_dir / "option_usage.csv").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--methods", "nope"], "--methods 'nope': the run has primitives, eigenoptions"),
        (["--seeds", "5"], "the run has no seed [5]"),
        (["--seeds", "x"], "is not a seed index or range"),
        (["--variant", "v"], "is not a sweep run"),
    ],
)
def test_bad_input_exits_2(run_dir, argv, message, capsys):
    assert usage(run_dir, *argv) == 2
    assert message in capsys.readouterr().err


def test_missing_directory_and_a_run_without_options(tmp_path, capsys):
    assert usage(tmp_path / "nope") == 2
    assert "no such directory" in capsys.readouterr().err
    primitives_only = SPEC.replace(
        "  - {name: eigenoptions, method: eigenoptions, params: {count: 2}}\n", ""
    )
    assert "eigenoptions" not in primitives_only.split("methods:")[1]
    (tmp_path / "spec.yaml").write_text(primitives_only.replace("seeds: 2", "seeds: 1"))
    assert main(["run", str(tmp_path / "spec.yaml"), "--out", str(tmp_path / "run"),
                 "--workers", "0", "--quiet", "--no-report"]) == 0  # fmt: skip
    capsys.readouterr()
    assert usage(tmp_path / "run") == 2
    err = capsys.readouterr().err
    assert "no completed evaluation of a method with options" in err and "primitives" in err


def test_sweep_variants_get_their_own_files(tmp_path, capsys):
    sweep = SPEC.replace("seeds: 2}", "seeds: 1}") + "sweep:\n  - grid:\n"
    sweep += "      evaluation.params.alpha: [0.1, 0.5]\n"
    (tmp_path / "spec.yaml").write_text(sweep)
    assert main(["run", str(tmp_path / "spec.yaml"), "--out", str(tmp_path / "run"),
                 "--workers", "0", "--quiet", "--no-report"]) == 0  # fmt: skip
    names = [v["name"] for v in json.loads((tmp_path / "run" / "sweep.json").read_text())[
        "variants"]]  # fmt: skip
    assert len(names) == 2
    capsys.readouterr()
    assert usage(tmp_path / "run", "--variant", names[1]) == 0
    assert (tmp_path / "run" / "variants" / names[1] / "option_usage.md").is_file()
    assert not (tmp_path / "run" / "variants" / names[0] / "option_usage.md").exists()
    assert usage(tmp_path / "run") == 0
    for name in names:
        text = (tmp_path / "run" / "variants" / name / "option_usage.md").read_text()
        assert f"variant {name}" in text and "2 evaluation cells counted" in text
    assert usage(tmp_path / "run", "--variant", "nope") == 2
    assert "--variant 'nope': the sweep has" in capsys.readouterr().err


def test_counted_frames_survive_a_file_and_add_a_frame_share(tmp_path):
    # The tf_agents learner also counts the frames each choice used (e.g. 4 per step on Atari).
    run = hand_made()
    frames = 4 * run.steps
    frames[0, 0] = 3  # a0's 4 steps of episode 0 used 3 frames, not 16 (say, a cut frame skip)
    usage = OptionUsage(run.names, 2, run.calls, run.steps, frames)
    usage.save(tmp_path / "u.npz")
    np.testing.assert_array_equal(OptionUsage.load(tmp_path / "u.npz").frames, frames)
    OptionUsage(run.names, 2, run.calls, run.steps).save(tmp_path / "plain.npz")
    assert OptionUsage.load(tmp_path / "plain.npz").frames is None
    with pytest.raises(ValueError, match="expected frames of shape"):
        OptionUsage(run.names, 2, run.calls, run.steps, frames[:, :2])
    counted = RunUsage("ours", 0, 3, run.names, 2, run.calls, run.steps, frames)
    t = totals([counted])
    # steps: (4+6) + 8*(1+1+3) + 2 = 52, 6 + 8*3 = 30 in options; frames 4*52 - 13 = 195, 120
    assert (t.frames, t.option_frames) == (195, 120)
    assert t.option_frame_share == pytest.approx(120 / 195)
    assert totals([counted, run]).frames is None  # not every run counted them: no share
    [row] = run_rows([counted])
    assert row["option_frame_share"] == f"{round(120 / 195, 4):g}"
    assert "option_frame_share" not in run_rows([run])[0]
    text = usage_markdown([counted], learner="PPO (tf-agents) over primitives + options")
    assert "emulator frames inside options | 61.5% |" in text
    assert "(PPO (tf-agents) over primitives + options)" in text
    assert "emulator frames" not in usage_markdown([run])


def test_the_files_are_never_written_through_a_symlink(run_dir, tmp_path, capsys):
    # A link in the run folder named like an output would make the write change its target,
    # outside the folder (issue 29): the link is replaced by a regular file, the target kept.
    run = tmp_path / "run"
    shutil.copytree(run_dir, run)
    outside = tmp_path / "outside.txt"
    outside.write_text("not the suite's\n")
    for name in ("option_usage.md", "option_usage.csv"):
        (run / name).symlink_to(outside)
    assert usage(run) == 0, capsys.readouterr().err
    assert outside.read_text() == "not the suite's\n"
    for name in ("option_usage.md", "option_usage.csv"):
        assert not (run / name).is_symlink() and (run / name).stat().st_size > 0
