"""The report's validity check: positive controls against the cloned option, loud when none wins."""

from __future__ import annotations

import numpy as np
import pytest

from opt_suite.report.leaderboard import build_leaderboard
from opt_suite.report.metrics import METRICS, MethodMetrics
from opt_suite.report.tables import leaderboard_json, leaderboard_markdown

SEEDS, TASKS = (0, 1, 2, 3, 4), (0, 1, 2, 3)


def _entry(name: str, auc: np.ndarray) -> MethodMetrics:
    return MethodMetrics(
        name, SEEDS, TASKS, {k: np.asarray(auc, dtype=np.float64) for k in METRICS}
    )


def _board(hallway_gain: float, **kwargs):
    noise = np.random.default_rng(0).normal(size=(len(SEEDS), len(TASKS)))
    clone = noise
    metrics = {
        "primitives": _entry("primitives", noise - 1.0),
        "bc-option-never": _entry("bc-option-never", clone),
        # every (seed, task) pair of the control differs from the clone's by hallway_gain
        "hallway-options": _entry("hallway-options", clone + hallway_gain),
    }
    settings = {"positive_controls": ("hallway-options",), "clone": "bc-option-never"}
    return build_leaderboard(
        metrics,
        spec_name="s",
        spec_hash="h" * 64,
        episodes=10,
        baseline="primitives",
        bootstrap=500,
        thresholds={},
        tasks_per_seed=True,
        **{**settings, **kwargs},
    )


def test_a_control_that_beats_the_clone_gives_no_caveat():
    board = _board(hallway_gain=5.0)
    assert board.validity is not None and board.validity.discriminates
    assert board.validity.verdicts["hallway-options"].outcome == "better"
    assert not any("CANNOT DISCRIMINATE" in w for w in board.warnings)
    doc = leaderboard_json(board)
    assert doc["verdicts"]["validity"]["discriminates"] is True
    assert doc["verdicts"]["validity"]["caveat"] == ""
    assert "This family can discriminate" in leaderboard_markdown(board)


@pytest.mark.parametrize("gain", [-5.0, 0.0])
def test_a_control_that_does_not_beat_the_clone_says_so_loudly(gain):
    board = _board(hallway_gain=gain)
    assert board.validity is not None and not board.validity.discriminates
    caveat = board.validity.caveat()
    assert caveat is not None and caveat.startswith("THIS FAMILY CANNOT DISCRIMINATE")
    assert "hallway-options worse" in caveat if gain < 0 else "hallway-options" in caveat
    assert caveat in board.warnings
    doc = leaderboard_json(board)
    assert doc["verdicts"]["validity"]["discriminates"] is False
    assert doc["verdicts"]["validity"]["caveat"] == caveat and caveat in doc["warnings"]
    text = leaderboard_markdown(board)
    # at the top of the verdicts: the validity table comes before the verdicts against baseline
    assert text.index("Validity check") < text.index("Verdicts against primitives")
    assert "THIS FAMILY CANNOT DISCRIMINATE" in text[text.index("Validity check") :]


def test_the_check_shares_the_reports_bonferroni_family():
    board = _board(hallway_gain=5.0)
    # two entries against the baseline plus one control against the clone
    assert board.verdicts == 3
    assert all(r.verdict.comparisons == 3 for r in board.rows if r.verdict)
    assert board.validity is not None
    assert board.validity.verdicts["hallway-options"].comparisons == 3
    assert "3 comparisons" in leaderboard_json(board)["verdicts"]["familywise"]


def test_a_control_without_runs_is_no_verdict_and_the_caveat_says_why():
    board = _board(hallway_gain=5.0, positive_controls=("hallway-options", "eigenoptions"))
    assert board.validity is not None and board.validity.discriminates  # hallway still judged
    board = _board(hallway_gain=5.0, positive_controls=("eigenoptions",))
    assert board.validity is not None and not board.validity.verdicts
    caveat = board.validity.caveat()
    assert caveat is not None and "eigenoptions not judged: no runs of eigenoptions" in caveat


def test_no_check_without_the_spec_keys():
    board = _board(hallway_gain=5.0, positive_controls=(), clone=None)
    assert board.validity is None and "validity" not in leaderboard_json(board)["verdicts"]
