"""Zero-shot returns: the learner's untrained policy over each option set, stored per evaluation.

They come from a seed stream of their own, so the learning curves (returns.csv) are the same
bytes with or without them; the leaderboard shows them as their own column.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from opt_suite.cli import main
from opt_suite.learners.base import ZERO_SHOT_INFO, LearnerContext, LearnerRun
from opt_suite.learners.smdp_q import SMDPQLearning
from opt_suite.store import ResultsStore

SPEC = """\
name: zero-shot
family: {{name: chain, params: {{num_states: 5}}}}
tasks: {{count: 3, train: 1, test: 2, seed: 0}}
methods:
  - {{name: primitives, method: primitives}}
  - name: bc
    method: bc_option
    params: {{offline_options: {{epochs: 2, max_epochs: 2, steps_per_epoch: 2, hidden_sizes: [8]}}}}
evaluation: {{learner: smdp_q_learning, episodes: 10, max_steps: 40, seeds: 1{extra}}}
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The same spec run without zero-shot episodes and with the default count (3)."""
    found = {}
    for name, extra in (("none", ", zero_shot_episodes: 0"), ("default", "")):
        root = tmp_path_factory.mktemp(name)
        spec = root / "spec.yaml"
        spec.write_text(SPEC.format(extra=extra))
        assert main(["run", str(spec), "--out", str(root / "out"), "--workers", "0"]) == 0
        found[name] = root / "out"
    return found


def test_zero_shot_returns_are_stored_with_each_evaluation_cell(runs):
    with ResultsStore(runs["default"]) as store:
        cells = [c for c in store.cells() if c.kind == "evaluation"]
    assert len(cells) == 4  # 2 methods x 2 test tasks
    for cell in cells:
        returns = cell.info[ZERO_SHOT_INFO]
        assert len(returns) == 3 and all(np.isfinite(returns)), cell
    with ResultsStore(runs["none"]) as store:
        assert all(ZERO_SHOT_INFO not in c.info for c in store.cells())


def test_they_do_not_change_the_learning_curves(runs):
    def returns_csv(out):
        (path,) = out.rglob("returns.csv")
        return path.read_bytes()

    assert returns_csv(runs["none"]) == returns_csv(runs["default"])


def test_the_leaderboard_shows_them_as_their_own_column(runs):
    (board,) = runs["default"].rglob("leaderboard.json")
    zero_shot = json.loads(board.read_text())["zero_shot_return"]
    assert set(zero_shot) == {"primitives", "bc"}
    assert all(z["runs"] == 2 and z["episodes"] == 3 for z in zero_shot.values())
    (table,) = runs["default"].rglob("leaderboard.md")
    assert "zero-shot return" in table.read_text()
    (plain,) = runs["none"].rglob("leaderboard.json")
    assert "zero_shot_return" not in json.loads(plain.read_text())


def test_the_tabular_learners_untrained_policy_is_uniform_and_seeded():
    # alpha = 0: Q stays at q_init, every choice is a tie broken uniformly; the returns depend
    # on the run's seed alone, and differ from a learning run's with the same seed.
    from opt_suite.families.tabular.chain import Chain

    family = Chain(Chain.Params(num_states=5))
    (task,), _ = family.make_tasks(Chain.Variation(), (), 2, 1, 1, 0)
    from opt_suite.options import TabularOptionSet

    options = TabularOptionSet.empty(5, 2)
    learner = SMDPQLearning(SMDPQLearning.Params())
    run = LearnerRun(task, np.random.SeedSequence(4))
    (first,) = learner.zero_shot(LearnerContext(family, [run], options, 20, 40))
    rerun = LearnerRun(task, np.random.SeedSequence(4))
    (again,) = learner.zero_shot(LearnerContext(family, [rerun], options, 20, 40))
    np.testing.assert_array_equal(first, again)
    learned = learner.run(LearnerContext(family, [run], options, 20, 40))[0].returns
    assert first.shape == (20,) and not np.array_equal(first, learned)
    assert learned[-5:].mean() > first[-5:].mean()  # learning beats the untrained policy


def test_the_work_estimate_counts_them():
    from baselines.primitives import Primitives
    from opt_suite.runner.estimate import estimate_work
    from opt_suite.spec import parse_spec

    def steps(extra: str) -> int:
        spec = parse_spec(SPEC.format(extra=extra))
        return estimate_work(spec, [0], [Primitives, Primitives], 5, 2).env_steps

    # 2 entries x 2 test tasks x 3 episodes x 40 steps, on top of the same learning runs.
    assert steps("") - steps(", zero_shot_episodes: 0") == 2 * 2 * 3 * 40
