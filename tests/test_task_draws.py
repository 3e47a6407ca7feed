"""Test tasks drawn per seed (``tasks.test_per_seed``): the draw, cells, store and report."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from opt_suite.report.baseline import load_baseline
from opt_suite.report.metrics import run_metrics, seed_task_key
from opt_suite.report.normalise import References, reference_thresholds
from opt_suite.report.pairwise import compare_entries, comparison_markdown, comparison_rows
from opt_suite.runner.protocol import plan_spec, resolve_components, run_protocol
from opt_suite.spec import canonical_yaml, load_spec, spec_hash, to_plain
from opt_suite.spec.schema import MethodSpec
from opt_suite.store import ResultsStore

QUICK = Path(__file__).resolve().parents[1] / "specs" / "fourrooms-quick.yaml"


def _quick(per_seed: bool, **evaluation):
    spec = load_spec(QUICK)
    tasks = dataclasses.replace(spec.tasks, test_per_seed=per_seed)
    return dataclasses.replace(
        spec, tasks=tasks, evaluation=dataclasses.replace(spec.evaluation, **evaluation)
    )


def _params(tasks):
    return [json.dumps(dataclasses.asdict(t.params), sort_keys=True) for t in tasks]


def test_shared_test_tasks_are_every_seeds_and_the_key_is_left_out_of_the_hash():
    spec = _quick(False)
    assert "test_per_seed" not in canonical_yaml(spec)
    assert spec_hash(spec) == spec_hash(load_spec(QUICK))  # added later: old ids stay
    _, train, tasks, plan = plan_spec(spec, [0, 1], resolve_components(spec))
    assert plan.test_tasks[0] == plan.test_tasks[1] == tasks.shared_test
    assert [t.task_id for t in plan.test_tasks[0]][:2] == [
        "fourrooms-13x13/test/0",
        "fourrooms-13x13/test/1",
    ]


def test_each_seed_draws_its_own_test_tasks_deterministically():
    shared, per_seed = _quick(False), _quick(True)
    assert spec_hash(per_seed) != spec_hash(shared)
    components = resolve_components(per_seed)
    _, train, tasks, plan = plan_spec(per_seed, [0, 1, 2], components)
    _, shared_train, _, shared_plan = plan_spec(shared, [0, 1, 2], components)
    assert _params(train) == _params(shared_train)  # the train tasks stay shared
    draws = [_params(plan.test_tasks[s]) for s in (0, 1, 2)]
    assert len({tuple(d) for d in draws}) == 3  # three different sets of test tasks
    assert all(len(d) == per_seed.tasks.test for d in draws)
    # A pure function of the spec and the seed index: the same on another plan, with other seeds.
    _, _, again, _ = plan_spec(per_seed, [2], components)
    assert _params(again.test(2)) == draws[2] and _params(tasks.test(1)) == draws[1]
    assert plan.test_tasks[1][0].task_id == "fourrooms-13x13/seed1/test/0"
    # Demonstrations and discoveries depend on the train tasks only: the same cells as shared.
    train_only = ("demonstrations", "discovery")
    ids = {(c.kind, c.method, c.seed) for c in plan.cells if c.kind in train_only}
    same = {c.cell_id for c in plan.cells if c.kind in train_only}
    assert same == {c.cell_id for c in shared_plan.cells if c.kind in train_only} and ids
    # Each evaluation cell learns on its own seed's task.
    for cell in plan.cells:
        if cell.kind == "evaluation":
            task = plan.test_task(cell)
            assert task in plan.test_tasks[cell.seed] and task.index == cell.task
            assert cell.inputs["test_task"] == to_plain(task.params)


def test_thresholds_and_tallies_are_per_seed_and_task():
    refs = References(
        seeds=(0, 1),
        tasks=(0, 1),
        random=np.array([[0.0, 0.0], [0.0, 10.0]]),
        expert=np.array([[2.0, 4.0], [8.0, 30.0]]),
        expert_label="x expert",
    )
    shared = reference_thresholds(refs, [0, 1], 0.5)
    assert shared == {0: 2.5, 1: 11.0}  # means over seeds
    own = reference_thresholds(refs, [0, 1], 0.5, per_seed=True)
    assert own == {"0/0": 1.0, "0/1": 2.0, "1/0": 4.0, "1/1": 20.0}
    assert seed_task_key(1, 0) == "1/0"
    from opt_suite.report.episodes import LearningCurves

    returns = np.zeros((2, 2, 20))
    returns[:, :, 10:] = np.array([[1.5, 1.5], [1.5, 25.0]])[:, :, None]
    grid = np.ones_like(returns)
    curves = {"m": LearningCurves("m", (0, 1), (0, 1), tuple(range(1, 21)), returns, grid, grid)}
    reached = run_metrics(curves, 0.1, own, window=1)["m"].values["episodes_to_threshold"]
    # 1.5 reaches seed 0's 1.0 but not its 2.0; seed 1: 1.5 < 4.0, 25 >= 20 (never: censored at
    # the budget + 1).
    np.testing.assert_array_equal(reached, [[11, 21], [21, 11]])


def _runs_file(tmp_path, per_seed: bool):
    x = [[1.0, 0.0, 3.0], [1.0, 5.0, 0.0]]
    y = [[0.0, 1.0, 2.0], [2.0, 4.0, 0.0]]
    doc = {
        "format": "opt-suite-baseline",
        "version": 1,
        "spec": {"name": "s", "hash": "h"},
        "settings": {
            "final_fraction": 0.1,
            "window": 10,
            "test_tasks": "per_seed" if per_seed else "shared",
        },
        "thresholds": {"0/0": 1.0} if per_seed else {"0": 1.0},
        "methods": {
            name: {"seeds": [0, 1], "tasks": [0, 1, 2], "metrics": {"auc": v}}
            for name, v in (("x", x), ("y", y))
        },
    }
    path = tmp_path / f"runs-{per_seed}.json"
    path.write_text(json.dumps(doc))
    return load_baseline(path)


def test_pairwise_tallies_count_seed_task_pairs_when_drawn_per_seed(tmp_path):
    shared = compare_entries(_runs_file(tmp_path, False), "x", "y", reps=50)
    # per task over all 4 pairs: tasks 0 and 1 half won (ties), task 2: 2.5 of 4 won
    assert (shared.tasks_won, shared.tasks_tied, shared.tasks_lost) == (1, 2, 0)
    runs = _runs_file(tmp_path, True)
    assert runs.tasks_per_seed
    own = compare_entries(runs, "x", "y", reps=50)
    # (seed, task) pairs: 1>0, 0<1, 3>2, 1<2, 5>4, 0=0
    assert (own.tasks_won, own.tasks_tied, own.tasks_lost) == (3, 1, 2) and own.tasks == 6
    # The verdict resamples seeds, then tasks within each drawn seed when they were drawn per
    # seed, one draw of tasks for all seeds otherwise; with 2 seeds it is no verdict at all.
    assert own.decision is not None and shared.decision is not None
    assert (own.decision.resampled, shared.decision.resampled) == ("seeds→tasks", "seeds×tasks")
    assert own.verdict() == shared.verdict() == "inconclusive"
    assert own.decision.caveat.startswith("NO VERDICT: 2 seeds")
    board = {"methods": {m: {"auc": _estimate()} for m in ("x", "y")}}
    text = comparison_markdown(comparison_rows(runs, board, "x", ["y"]))
    assert "(seed, task) pairs won / tied / lost" in text and "drawn per seed" in text


def test_the_per_seed_verdict_is_the_paired_one(tmp_path):
    runs = _runs_file(tmp_path, True)
    doc = json.loads(runs.path.read_text())
    # X wins every (seed, task) pair by a hair; P over all pairs of a slot also counts pairs of
    # different seeds, hence different tasks (seed 0's x against seed 1's y: a loss), so 0.75.
    doc["methods"]["x"]["metrics"]["auc"] = [[1.0, 1.0, 1.0], [10.0, 10.0, 10.0], [5.0] * 3]
    doc["methods"]["y"]["metrics"]["auc"] = [[0.9, 0.9, 0.9], [9.9, 9.9, 9.9], [4.9] * 3]
    doc["methods"]["x"]["tasks"] = doc["methods"]["y"]["tasks"] = [0, 1, 2]
    doc["methods"]["x"]["seeds"] = doc["methods"]["y"]["seeds"] = [0, 1, 2]
    runs.path.write_text(json.dumps(doc))
    c = compare_entries(load_baseline(runs.path), "x", "y", reps=200)
    assert c.paired is not None and c.paired.probability == 1.0
    assert c.verdict() == "better" and (c.tasks_won, c.tasks_lost) == (9, 0)
    assert c.decision is not None and (c.decision.ci_low, c.decision.ci_high) == (1.0, 1.0)
    # seed 0's x against seed 1's y (a loss) and seed 2's y (a loss), seed 1's x wins both,
    # seed 2's x against seed 0's y (a win) and seed 1's (a loss): with the own-seed wins, 6 of 9.
    assert c.improvement.probability == pytest.approx(6 / 9)


def _estimate():
    return dict.fromkeys(("iqm", "ci_low", "ci_high", "task_ci_low", "task_ci_high"), 0.0)


def test_a_bad_test_tasks_setting_is_a_located_error(tmp_path):
    from opt_suite.report.baseline import BaselineError

    path = _runs_file(tmp_path, True).path
    path.write_text(path.read_text().replace('"per_seed"', '"each"'))
    with pytest.raises(BaselineError, match="settings.test_tasks must be 'shared' or 'per_seed'"):
        load_baseline(path)


@pytest.mark.slow
def test_a_run_with_test_tasks_drawn_per_seed_end_to_end(tmp_path, capsys):
    """Three seeds, two test tasks each: the store, the references, the report and the gate."""
    from opt_suite.cli import main

    spec = _quick(True, episodes=20, seeds=3)
    spec = dataclasses.replace(
        spec,
        tasks=dataclasses.replace(spec.tasks, count=6, test=2),
        methods=(MethodSpec("primitives", "primitives", None), spec.methods[1]),
    )
    out = tmp_path / "run"
    run_protocol(spec, out, workers=0, quiet=True)
    _, _, tasks, _ = plan_spec(spec, [0, 1], resolve_components(spec))
    with ResultsStore(out) as store:
        stored = {(t.split, t.index): t.task_id for t in store.tasks()}
    assert stored[("test/seed0", 1)] == "fourrooms-13x13/seed0/test/1"
    assert stored[("test/seed1", 0)] == tasks.test(1)[0].task_id
    assert not any(split == "test" for split, _ in stored)
    assert main(["report", str(out)]) == 0
    board = json.loads((out / "leaderboard.json").read_text())
    assert board["protocol"]["test_tasks"] == "drawn per seed"
    assert "task slot" in board["protocol"]["intervals"]["ci"]
    assert "0/1" in board["protocol"]["thresholds"]  # the references' own, per seed and task
    assert "drawn per seed" in (out / "leaderboard.md").read_text()
    runs = json.loads((out / "runs.json").read_text())
    assert runs["settings"]["test_tasks"] == "per_seed"
    refs = json.loads(next((out / "references").glob("spec-*.json")).read_text())["payload"]
    # Each seed's expert learned its own tasks: the references differ between the seeds.
    assert refs["expert_returns"][0] != refs["expert_returns"][1]
    # The run passes a gate against its own per-run data (per-seed thresholds read back).
    capsys.readouterr()
    published = ["--baseline", str(out / "runs.json"), "--unmeasured-ok"]
    assert main(["compare", str(out), *published]) == 0
    assert "no stored threshold" not in capsys.readouterr().err


def test_per_seed_thresholds_fall_back_only_on_pairs_without_a_scale():
    from opt_suite.report.build import ReportInputs, _threshold_caveat, analyse
    from opt_suite.report.episodes import EpisodeTable

    # Two entries, 2 seeds x 2 tasks, 20 episodes; the references of (seed 1, task 1) are equal
    # (undefined like an expert below random: report/normalise.py).
    rows = [
        (m, s, t, e, float(e * (1 + s) * (2 if m == "b" else 1)), 5, 5 * (e + 1))
        for m in ("a", "b")
        for s in (0, 1)
        for t in (0, 1)
        for e in range(20)
    ]
    refs = References(
        seeds=(0, 1),
        tasks=(0, 1),
        random=np.array([[0.0, 0.0], [0.0, 3.0]]),
        expert=np.array([[10.0, 20.0], [30.0, 3.0]]),
        expert_label="x expert",
    )
    inputs = ReportInputs(
        episodes=EpisodeTable.from_rows(rows),
        spec_name="s",
        spec_hash="h",
        references=refs,
        tasks_per_seed=True,
    )
    analysis = analyse(inputs)
    t = analysis.thresholds
    assert (t["0/0"], t["0/1"], t["1/0"]) == (5.0, 10.0, 15.0)  # half way to each pair's expert
    # (1, 1) has no scale: 90% of the way from the worst to the best entry's final return there
    finals = {m: np.mean([e * 2 * (2 if m == "b" else 1) for e in range(18, 20)]) for m in "ab"}
    assert t["1/1"] == pytest.approx(finals["a"] + 0.9 * (finals["b"] - finals["a"]))
    assert "on the 1 (seed, task) pair(s) where the normalised score is undefined" in (
        analysis.threshold_rule
    )
    assert "(seed, task) pairs whose normalised score is undefined" in _threshold_caveat(analysis)


def test_the_held_out_room_spec_draws_each_seeds_test_goals_in_that_room():
    spec = load_spec(QUICK.parent / "fourrooms-heldout.yaml")
    room = spec.tasks.vary.held_out_room
    assert spec.tasks.test_per_seed and room == "south-east"
    _, train, tasks, plan = plan_spec(spec, [0, 1], resolve_components(spec))
    cells = {tuple(c) for c in tasks.family.layout.rooms[room]}
    assert train and not any(t.params.goal in cells or t.params.start in cells for t in train)
    for seed in (0, 1):
        drawn = plan.test_tasks[seed]
        assert len(drawn) == spec.tasks.test
        assert all(t.params.goal in cells and t.params.start not in cells for t in drawn)
    assert _params(plan.test_tasks[0]) != _params(plan.test_tasks[1])
