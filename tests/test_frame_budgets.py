"""Evaluation budgets in emulator frames (``evaluation.frames``) instead of episodes."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from spec_fakes import where

from opt_suite.cli import main
from opt_suite.report.episodes import EpisodeTable, ReportDataError, learning_curves
from opt_suite.report.metrics import auc, final_return

CHAIN = textwrap.dedent(
    """\
    name: chain-frames
    family: {name: chain, params: {num_states: 5, max_episode_steps: 30}}
    tasks: {count: 3, train: 1, test: 2, seed: 0}
    methods:
      - {name: primitives, method: primitives}
    evaluation:
      learner: LEARNER
      params: PARAMS
      BUDGET
      max_steps: 30
      seeds: 2
    report: {baseline: primitives, final_fraction: 0.2}
    """
)
TINY_PPO = "{ppo: {num_envs: 2, steps_per_iteration: 8, network: {fc_units: [8]}}}"


def chain_spec(tmp_path, budget: str, learner: str = "tf_agents"):
    params = TINY_PPO if learner == "tf_agents" else "{}"
    path = tmp_path / "spec.yaml"
    text = CHAIN.replace("LEARNER", learner).replace("PARAMS", params).replace("BUDGET", budget)
    path.write_text(text)
    return path


# -- the spec ---------------------------------------------------------------------------------


def test_a_frame_budget_validates_and_keeps_other_specs_hashes(tmp_path, capsys):
    from opt_suite.spec import load_spec, spec_hash

    spec = load_spec(chain_spec(tmp_path, "frames: 400"))
    assert spec.evaluation.frames == 400
    episodes = load_spec(chain_spec(tmp_path, "episodes: 10"))
    assert episodes.evaluation.frames is None
    # a key added later and left unset is not in the canonical form: old hashes stay
    from opt_suite.spec import canonical_yaml

    assert "frames" not in canonical_yaml(episodes).split("evaluation:")[1].split("family:")[0]
    text = canonical_yaml(spec)
    section = text.split("evaluation:")[1].split("family:")[0]
    assert "frames: 400" in section and "episodes" not in section  # frames stands in for it
    from opt_suite.spec import parse_spec

    assert parse_spec(text, source="canonical") == spec  # reads back without "both" errors
    assert spec_hash(spec) != spec_hash(episodes)


def test_episodes_and_frames_together_are_refused_at_frames(tmp_path, capsys):
    path = chain_spec(tmp_path, "episodes: 10\n  frames: 400")
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert (
        f"{path}:{where(path.read_text(), 'frames: 400', '400')}: evaluation.frames: give the "
        "evaluation budget as episodes or as frames, not both (expected exactly one of "
        "evaluation.episodes and evaluation.frames, got episodes = 10 and frames = 400)"
    ) in err


def test_a_learner_without_frame_budgets_is_refused(tmp_path, capsys):
    path = chain_spec(tmp_path, "frames: 400", learner="smdp_q_learning")
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert (
        f"{path}:{where(path.read_text(), 'frames: 400', '400')}: evaluation.frames: learner "
        "smdp_q_learning runs a number of episodes and cannot stop at a frame budget"
    ) in err


@pytest.mark.parametrize("bad", ["0", "-5", "1.5", "lots"])
def test_a_bad_frame_budget_is_refused(tmp_path, capsys, bad):
    path = chain_spec(tmp_path, f"frames: {bad}")
    assert main(["validate", str(path)]) == 2
    assert "evaluation.frames" in capsys.readouterr().err


def test_cell_ids_name_the_frame_budget(tmp_path):
    from opt_suite.runner.plan import build_plan
    from opt_suite.spec import load_spec

    def ids(budget):
        spec = load_spec(chain_spec(tmp_path, budget))
        from opt_suite import registry

        family = registry.load(registry.FAMILIES, "chain")(spec.family.params)
        train, test = family.make_tasks(spec.tasks.vary, [], 3, 1, 2, 0)
        methods = [registry.load(registry.METHODS, "primitives")]
        plan = build_plan(spec, [0], train, test, methods)
        return [c.cell_id for c in plan.cells if c.kind == "evaluation"], plan

    small, plan = ids("frames: 400")
    large, _ = ids("frames: 800")
    assert set(small).isdisjoint(large)
    inputs = next(c.inputs for c in plan.cells if c.kind == "evaluation")
    assert inputs["learner"]["frames"] == 400 and "episodes" not in inputs["learner"]


# -- the learner ------------------------------------------------------------------------------


def test_tf_agents_stops_at_the_frame_budget():
    from opt_suite.agents.params import NetworkParams, PPOParams
    from opt_suite.families.tabular.chain import Chain
    from opt_suite.learners.agent_learner import TFAgentsLearner
    from opt_suite.learners.base import LearnerContext, LearnerRun
    from opt_suite.methods.base import TabularOptionSet

    family = Chain(Chain.Params(num_states=5, max_episode_steps=30))
    _, test = family.make_tasks(family.Variation(), [], 2, 1, 1, 0)
    ppo = PPOParams(num_envs=2, steps_per_iteration=8, network=NetworkParams(fc_units=(8,)))
    learner = TFAgentsLearner(TFAgentsLearner.Params(ppo=ppo))
    empty = TabularOptionSet.empty(5, 2)

    def run():  # a fresh SeedSequence each time: spawning from one changes it
        return LearnerRun(test[0], np.random.SeedSequence(3))

    budget = 300
    # a huge episode budget must not matter: frames decide
    log = learner.run(LearnerContext(family, [run()], empty, 10_000, 30, frames=budget))[0]
    assert len(log.returns) >= 1 and log.frames[-1] <= budget
    assert np.all(np.diff(log.frames) >= 0)
    # the episodes that ended within the budget are all there: a longer budget extends the curve
    # (same seed, same decisions up to the first budget)
    longer = learner.run(LearnerContext(family, [run()], empty, 10_000, 30, frames=2 * budget))[0]
    assert len(longer.returns) > len(log.returns)
    np.testing.assert_array_equal(longer.frames[: len(log.frames)], log.frames)
    assert longer.frames[-1] <= 2 * budget
    with pytest.raises(ValueError, match="frames >= 1"):
        learner.run(LearnerContext(family, [run()], empty, 10, 30, frames=0))


def test_an_evaluation_with_no_episode_within_the_budget_is_an_error():
    from opt_suite.families.base import Task
    from opt_suite.learners.base import EpisodeLog
    from opt_suite.runner.cells import _checked_log

    task = Task("chain/test/0", "test", 0, None)
    empty = EpisodeLog(np.zeros(0), np.zeros(0, np.int64))
    with pytest.raises(ValueError, match="no episode ended within evaluation.frames = 50"):
        _checked_log(task, empty, 100, 50)
    past = EpisodeLog(np.zeros(2), np.array([3, 4]), np.array([30, 70]))
    with pytest.raises(ValueError, match="past evaluation.frames = 50"):
        _checked_log(task, past, 100, 50)
    ragged = EpisodeLog(np.zeros(3), np.array([3, 4, 5]), np.array([10, 20, 45]))
    assert len(_checked_log(task, ragged, 100, 50)[1]) == 3


# -- the report -------------------------------------------------------------------------------


def _ragged():
    """Run 0 ends episodes at frames 40, 80, 120 (returns 1, 2, 3); run 1 at 60, 190 (0, 4)."""
    rows = []
    for seed, ends, rets in ((0, [40, 80, 120], [1.0, 2.0, 3.0]), (1, [60, 190], [0.0, 4.0])):
        for e, (f, r) in enumerate(zip(ends, rets, strict=True)):
            rows.append(("a", seed, 0, e, r, 10, f))
    return EpisodeTable.from_rows(rows)


def test_runs_with_different_episode_counts_are_compared_on_the_frame_axis():
    with pytest.raises(ReportDataError, match="incomplete"):
        learning_curves(_ragged())  # by episodes they cannot be compared
    curves = learning_curves(_ragged(), frame_budget=200, points=10)["a"]
    assert curves.frames[0, 0].tolist() == list(range(20, 201, 20))
    run0 = [1, 1, 1, 2, 2, 3, 3, 3, 3, 3]  # before frame 40: its first episode's return
    run1 = [0, 0, 0, 0, 0, 0, 0, 0, 0, 4]
    np.testing.assert_array_equal(curves.returns[:, 0], [run0, run1])
    np.testing.assert_array_equal(curves.steps[0, 0], [10, 10, 10, 20, 20, 30, 30, 30, 30, 30])
    np.testing.assert_allclose(auc(curves.returns)[:, 0], [np.mean(run0), np.mean(run1)])
    np.testing.assert_allclose(final_return(curves.returns, 0.2)[:, 0], [3, 2])


def test_a_missing_run_on_the_frame_axis_is_an_error():
    rows = [("a", 0, 0, 0, 1.0, 5, 10), ("a", 1, 1, 0, 1.0, 5, 10), ("a", 0, 1, 0, 1.0, 5, 10)]
    with pytest.raises(ReportDataError, match="seed 1 has no episodes on task 0"):
        learning_curves(EpisodeTable.from_rows(rows), frame_budget=20)


@pytest.mark.slow
def test_a_frame_budget_runs_end_to_end_and_reports_on_frames(tmp_path):
    """tf_agents on chains with evaluation.frames: different episode counts, one leaderboard.

    One test task (each tf_agents run builds and traces its own agent): two seeds on it are the
    runs of different lengths that the leaderboard puts on one frame axis.
    """
    import json

    path = chain_spec(tmp_path, "frames: 300")
    path.write_text(
        path.read_text().replace("count: 3, train: 1, test: 2", "count: 2, train: 1, test: 1")
    )
    out = tmp_path / "run"
    assert main(["run", str(path), "--out", str(out), "--quiet", "--workers", "0"]) == 0
    from opt_suite.store import ResultsStore

    with ResultsStore(out) as store:
        rows = store.episodes()
    counts = {}
    for r in rows:
        counts[(r.seed, r.task)] = counts.get((r.seed, r.task), 0) + 1
        assert r.frames <= 300
    assert len(counts) == 2 and all(n >= 1 for n in counts.values())
    assert len(set(counts.values())) == 2, counts  # runs of different lengths, one frame axis
    board = json.loads((out / "leaderboard.json").read_text())
    assert board["protocol"]["frames"] == 300 and board["protocol"]["episodes"] == 100
    text = (out / "leaderboard.md").read_text()
    # The chain family reports no frames: its budget counts env steps, and the tables say so.
    assert "300 env steps per method entry" in text
    assert "Budget in env steps: each run is read at 100 evenly spaced points" in text
    assert "steps_to_threshold" in text and board["protocol"]["threshold_unit"] == "frames"


def test_the_nothing_learned_caveat_names_the_frame_budget():
    from opt_suite.report.caveats import leaderboard_caveats

    rows = [("a", s, 0, e, 1.0, 10, 40 * (e + 1)) for s in (0, 1) for e in range(3 + s)]
    flat = learning_curves(EpisodeTable.from_rows(rows), frame_budget=160, points=10)
    (warning,) = [w for w in leaderboard_caveats(flat, 0.1, True) if "nothing learned" in w]
    assert "last 10% of the frames" in warning and "raise evaluation.frames" in warning


def test_tf_agents_option_usage_is_recorded_within_a_frame_budget(tmp_path, capsys):
    """The deep learner's option counts, end to end: recorded by the run, read by option-usage.

    One seed, one test task, one method with options: one tf_agents run, which builds and traces
    its agent (50 s measured on two cores under load). The replay path is the one the run takes
    (``record_usage`` with ``frames=``), so it is not run a second time here.
    """
    path = chain_spec(tmp_path, "frames: 200")
    text = path.read_text().replace("count: 3, train: 1, test: 2", "count: 2, train: 1, test: 1")
    text = text.replace(
        "  - {name: primitives, method: primitives}",
        "  - {name: random, method: random_options, params: {count: 2}}",
    )
    text = text.replace("seeds: 2", "seeds: 1").replace("baseline: primitives", "baseline: random")
    path.write_text(text)
    out = tmp_path / "run"
    argv = ["run", str(path), "--out", str(out), "--quiet", "--workers", "0", "--no-report"]
    assert main(argv) == 0
    [counts] = out.glob("cells/*/option_usage.npz")  # counted while it ran
    capsys.readouterr()
    assert main(["option-usage", str(out)]) == 0, capsys.readouterr().err
    usage_md = (out / "option_usage.md").read_text()
    assert "1 evaluation cells counted their option choices" in usage_md
    assert "PPO (tf-agents) over primitives + options" in usage_md
    assert "| emulator frames inside options |" in usage_md
    from opt_suite.learners.base import OptionUsage
    from opt_suite.store import ResultsStore

    usage = OptionUsage.load(counts)
    with ResultsStore(out) as store:
        steps = [r.steps for r in store.episodes("random")]
    assert len(usage.names) == usage.num_primitives + 2  # the chain's primitives, then 2 options
    assert len(steps) >= 1 and usage.steps.sum(axis=1).tolist() == steps  # episodes in budget
