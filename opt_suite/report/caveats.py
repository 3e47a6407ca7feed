"""Warnings printed on the leaderboard when its numbers cannot mean what they seem to.

* **Too few runs.** The stratified bootstrap resamples a method entry's seeds within each task;
  with 2 seeds a task has only 3 distinct resamples, so the intervals come out far narrower than the
  spread a rerun would show (Agarwal et al. 2021 warn that percentile bootstrap CIs understate
  uncertainty with few runs). Below :data:`MIN_SEEDS` seeds the leaderboard says so.
* **Nothing learned.** A learning curve whose last episodes are no better than its first ones means
  the learner did not learn on the test tasks (too small a budget, a broken learner): every
  metric then measures noise around the starting policy, and the ranking is noise. When no method
  entry's final return improves significantly on its first episodes, the leaderboard says so.
  "First" means the episodes that *began* first: with parallel sub-envs the first to *end* are the
  short ones, on goal-reaching tasks the lucky successes, which made every run look unlearned.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from opt_suite.report.episodes import EpisodeTable, LearningCurves
from opt_suite.report.metrics import final_episode_count

__all__ = [
    "MIN_SEEDS",
    "episode_starts",
    "leaderboard_caveats",
    "learned",
    "start_return",
    "too_few_runs",
]

MIN_SEEDS = 5
# An improvement counts when the mean per-run improvement exceeds this many standard errors.
IMPROVEMENT_SE = 2.0


def too_few_runs(curves: Mapping[str, LearningCurves]) -> str | None:
    """A warning naming the method entries with fewer than :data:`MIN_SEEDS` seeds, or None."""
    few = {name: len(c.seeds) for name, c in curves.items() if len(c.seeds) < MIN_SEEDS}
    if not few:
        return None
    counts = sorted(set(few.values()))
    seeds = " or ".join(str(n) for n in counts)
    return (
        f"too few runs for the intervals to mean much: {', '.join(few)} ha"
        f"{'s' if len(few) == 1 else 've'} {seeds} seed{'s' if counts != [1] else ''} per task;"
        f" the stratified bootstrap resamples seeds within tasks and understates the uncertainty"
        f" with fewer than {MIN_SEEDS} (raise evaluation.seeds)"
    )


def episode_starts(steps: np.ndarray, frames: np.ndarray) -> np.ndarray:
    """When each episode of one run began, on the run's frame axis, from its steps and end frame.

    ``frames[i]`` is the run's frames (all parallel sub-envs together) when episode ``i`` ended.
    With ``n`` sub-envs stepping together and ``k`` frames per step, an episode of ``s`` steps
    covers ``s * n * k`` of them, so it began at ``frames - steps * r`` with ``r = n * k``. Neither
    is stored, but the first episode of each sub-env began at frame 0 and every other one later,
    so ``r`` is the smallest ``frames / steps`` of the run (exact with one env: the previous end).
    """
    steps = np.asarray(steps, dtype=np.float64)
    frames = np.asarray(frames, dtype=np.float64)
    positive = steps > 0
    if not np.any(positive):
        return frames.copy()
    rate = float(np.min(frames[positive] / steps[positive]))
    return frames - steps * rate


def start_return(returns: np.ndarray, steps: np.ndarray, frames: np.ndarray, k: int) -> float:
    """Mean return of the ``k`` episodes of one run that *began* first.

    Not the first ``k`` to *end*: with parallel sub-envs those are the ones short enough to end
    early — on goal-reaching tasks the lucky successes — and their mean is far above what the
    starting policy earns, so a run that learned would look as if it had not.
    """
    order = np.argsort(episode_starts(steps, frames), kind="stable")
    return float(np.mean(np.asarray(returns, dtype=np.float64)[order[:k]]))


def learned(
    curves: LearningCurves,
    final_fraction: float,
    episodes: EpisodeTable | None = None,
    by_frames: bool = False,
) -> bool:
    """Whether the runs' final return improves significantly on their start.

    Per run: its ``final_return`` as the metrics read it (the last ``final_fraction`` of the
    curve's points: episodes, or points of the frame axis) minus the mean return of the episodes
    that began first (as many as ``final_return`` averages of them, see :func:`start_return`);
    improved when the mean over runs exceeds :data:`IMPROVEMENT_SE` standard errors (or, with a
    single run, is positive).

    The episodes come from ``episodes`` (the table the curves were made from) when given, else
    from the curves. Curves on the frame axis (``by_frames``) no longer hold single episodes:
    without the table, their first points stand for the start.
    """
    returns = np.asarray(curves.returns, dtype=np.float64)
    k_points = final_episode_count(returns.shape[-1], final_fraction)
    end = returns[..., -k_points:].mean(axis=-1)
    start = np.empty_like(end)
    for i, seed in enumerate(curves.seeds):
        for j, task in enumerate(curves.tasks):
            if episodes is not None:
                rows = np.flatnonzero(
                    (episodes.method == curves.method)
                    & (episodes.seed == seed)
                    & np.array([t == task for t in episodes.task.tolist()], dtype=bool)
                )
                rows = rows[np.argsort(episodes.episode[rows], kind="stable")]
                run = (episodes.returns[rows], episodes.steps[rows], episodes.frames[rows])
            elif by_frames:
                start[i, j] = returns[i, j, :k_points].mean()
                continue
            else:
                run = (returns[i, j], curves.steps[i, j], curves.frames[i, j])
            start[i, j] = start_return(*run, final_episode_count(len(run[0]), final_fraction))
    gain = (end - start).ravel()
    if gain.size < 2:
        return bool(gain.size and gain[0] > 0)
    se = float(np.std(gain, ddof=1) / np.sqrt(gain.size))
    return float(np.mean(gain)) > IMPROVEMENT_SE * se and float(np.mean(gain)) > 0


def leaderboard_caveats(
    curves: Mapping[str, LearningCurves],
    final_fraction: float,
    by_frames: bool = False,
    episodes: EpisodeTable | None = None,
) -> tuple[str, ...]:
    """Every warning the leaderboard should carry (empty when none applies).

    ``by_frames``: the budget was emulator frames (the curves are points of the frame axis).
    ``episodes``: the episodes the curves were made from (see :func:`learned`).
    """
    out = []
    few = too_few_runs(curves)
    if few:
        out.append(few)
    if curves and not any(learned(c, final_fraction, episodes, by_frames) for c in curves.values()):
        pct = f"{100 * final_fraction:g}%"
        unit, budget = (
            ("frames", "evaluation.frames") if by_frames else ("episodes", "evaluation.episodes")
        )
        out.append(
            f"nothing learned: no method entry's final return (last {pct} of the {unit}) improves"
            f" on its first {pct}, so every metric measures the starting policy and the ranking is"
            f" noise (raise {budget} or check the learner)"
        )
    return tuple(out)
