"""The report's demonstrations section and its warning when demonstrations score nothing."""

import numpy as np

from opt_suite.report.demonstrations import (
    demonstrations_markdown,
    demonstrations_warning,
    summarise_demonstrations,
)
from opt_suite.trajectory import Trajectory


def _demo(task: str, rewards: list[float]) -> Trajectory:
    n = len(rewards)
    return Trajectory(task, np.zeros(n + 1, np.int64), np.zeros(n, np.int64), np.array(rewards))


def test_returns_per_seed_and_train_task_in_order():
    summary = summarise_demonstrations(
        [
            (
                0,
                [
                    _demo("a/train/0", [1.0, 2.0]),
                    _demo("a/train/1", [0.0]),
                    _demo("a/train/0", [0.5]),
                ],
            )
        ]
    )
    assert [(s.seed, s.task_id, s.returns, s.lengths) for s in summary] == [
        (0, "a/train/0", (3.0, 0.5), (2, 1)),
        (0, "a/train/1", (0.0,), (1,)),
    ]
    text = demonstrations_markdown(summary)
    assert "| 0 | a/train/0 | 2 | 1.75 [0.5, 3] | 3, 0.5 | 1.5 |" in text


def test_warning_when_all_or_some_tasks_score_nothing():
    silent = summarise_demonstrations(
        [(0, [_demo("a/train/0", [0.0, 0.0]), _demo("a/train/1", [0.0])])]
    )
    assert "none of the 2 demonstrations received any reward" in demonstrations_warning(silent)
    mixed = summarise_demonstrations([(0, [_demo("a/train/0", [0.0]), _demo("a/train/1", [1.0])])])
    assert "on 1 train task(s) (a/train/0): 1 of 2" in demonstrations_warning(mixed)
    playing = summarise_demonstrations([(0, [_demo("a/train/0", [0.0, 1.0])])])
    assert demonstrations_warning(playing) is None
    assert demonstrations_warning(()) is None and demonstrations_markdown(()) == ""


def test_a_return_of_zero_that_reached_the_goal_is_not_silent():
    # Four rooms: -1 a step and +10 at the goal, so an 11-step path to the goal returns exactly 0.
    path = _demo("fr/train/3", [-1.0] * 10 + [10.0])
    summary = summarise_demonstrations([(0, [path, _demo("fr/train/0", [-1.0, 10.0])])])
    assert summary[0].returns == (0.0,)
    assert demonstrations_warning(summary) is None


def test_warning_when_a_train_task_kept_fewer_demonstrations_than_asked():
    """A source that drops cut demonstrations leaves fewer: the report says which tasks."""
    from report_fakes import stored_run

    from opt_suite.report.demonstrations import SECTION

    summary = summarise_demonstrations(
        [(0, [_demo("a/train/0", [1.0]), _demo("a/train/0", [1.0]), _demo("a/train/1", [1.0])])]
    )
    assert demonstrations_warning(summary, asked=2) == (
        "demonstrations dropped: 1 train task(s) kept fewer than the 2 demonstrations asked for "
        "(a/train/1 (seed 0): 1); the source dropped cut or failed ones (its warnings are in the "
        "worker output)"
    )
    assert demonstrations_warning(summary, asked=1) is None
    # The section reads the number asked from the stored spec, the demonstrations from the store.
    demos = {0: [_demo("a/train/0", [1.0]), _demo("a/train/1", [1.0])]}
    asked = stored_run(demos, "demonstrations: {trajectories_per_task: 4}\n")
    kept = SECTION.collect([], [], asked)
    assert kept.asked == 4 and [t.task_id for t in kept.tasks] == ["a/train/0", "a/train/1"]
    [line] = SECTION.caveats(kept)
    assert line.startswith("demonstrations dropped: 2 train task(s) kept fewer than the 4")
    assert SECTION.collect([], [], stored_run(demos)).asked is None
    assert not SECTION.collect([], [], stored_run())  # no demonstrations: no section
