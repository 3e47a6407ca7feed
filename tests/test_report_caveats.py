"""The "nothing learned" caveat reads the start of each run from the episodes that began first.

With parallel sub-envs the first episodes to *end* are the short ones; on a goal-reaching task
those are the lucky successes, and comparing the final return with them made the caveat fire on
every such run even where learning happened. Synthetic runs of 8 sub-envs stepping together, with
and without learning, pin both sides.
"""

from __future__ import annotations

import numpy as np
import pytest

from opt_suite.report.caveats import episode_starts, leaderboard_caveats, learned, start_return
from opt_suite.report.episodes import EpisodeTable, learning_curves

MAX_STEPS = 100


def parallel_episodes(rng, envs: int, batched_steps: int, success) -> list[tuple[float, int, int]]:
    """(return, steps, frames) of every episode that ends, in the order they end.

    ``envs`` sub-envs step together, one frame each per step, so the run's frames after batched
    step ``t`` are ``t * envs``. An episode succeeds with probability ``success(progress)`` in
    5..19 steps (return ``1 - 0.9 * steps / MAX_STEPS``, as MiniGrid's) or times out (return 0).
    """

    def draw(t: int) -> tuple[int, float, int]:
        if rng.random() < success(t / batched_steps):
            n = int(rng.integers(5, 20))
            return n, 1 - 0.9 * n / MAX_STEPS, t
        return MAX_STEPS, 0.0, t

    running = [draw(0) for _ in range(envs)]
    ended = []
    for t in range(1, batched_steps + 1):
        for i, (n, ret, began) in enumerate(running):
            if t - began == n:
                ended.append((ret, n, t * envs))
                running[i] = draw(t)
    return ended


def table(success, seeds: int = 5, tasks: int = 3, same_count: bool = False) -> EpisodeTable:
    rng = np.random.default_rng(0)
    runs = {
        (s, t): parallel_episodes(rng, 8, 500, success) for s in range(seeds) for t in range(tasks)
    }
    if same_count:  # a budget in episodes: every run keeps the same number
        n = min(len(r) for r in runs.values())
        runs = {key: r[:n] for key, r in runs.items()}
    return EpisodeTable.from_rows(
        [
            ("a", s, t, e, ret, steps, frames)
            for (s, t), run in runs.items()
            for e, (ret, steps, frames) in enumerate(run)
        ]
    )


def improving(progress: float) -> float:
    return 0.2 + 0.4 * progress


def constant(progress: float) -> float:
    return 0.3


def test_episode_starts_worked_by_hand():
    # Two sub-envs, one frame per step each: A ends episodes of 3 and 3 steps, B one of 5.
    # In the order they end: A at batched step 3 (frames 6), B at 5 (10), A again at 6 (12).
    # r = min(6/3, 10/5, 12/3) = 2 frames per step; starts 6 - 3*2 = 0, 10 - 5*2 = 0, 12 - 3*2 = 6.
    starts = episode_starts(np.array([3, 5, 3]), np.array([6, 10, 12]))
    np.testing.assert_array_equal(starts, [0.0, 0.0, 6.0])
    # One env: every episode begins where the previous one ended.
    np.testing.assert_array_equal(
        episode_starts(np.array([4, 2, 3]), np.array([4, 6, 9])), [0, 4, 6]
    )
    # The first to begin, not the first to end: B's 0.0 counts, A's second 1.0 does not.
    assert (
        start_return(np.array([1.0, 0.0, 1.0]), np.array([3, 5, 3]), np.array([6, 10, 12]), 2)
        == 0.5
    )


@pytest.mark.parametrize("frame_budget", [None, 4000], ids=["episodes", "frames"])
def test_learning_with_parallel_envs_is_not_called_nothing_learned(frame_budget):
    episodes = table(improving, same_count=frame_budget is None)
    curves = learning_curves(episodes, frame_budget=frame_budget)
    by_frames = frame_budget is not None
    assert not any(
        "nothing learned" in w for w in leaderboard_caveats(curves, 0.1, by_frames, episodes)
    )
    # What the caveat did before: the first points (the first episodes to end) as the start.
    assert not learned(curves["a"], 0.1, by_frames=True)


@pytest.mark.parametrize("frame_budget", [None, 4000], ids=["episodes", "frames"])
def test_no_learning_with_parallel_envs_is_still_called_nothing_learned(frame_budget):
    episodes = table(constant, same_count=frame_budget is None)
    curves = learning_curves(episodes, frame_budget=frame_budget)
    warnings = leaderboard_caveats(curves, 0.1, frame_budget is not None, episodes)
    assert any(w.startswith("nothing learned") for w in warnings)
