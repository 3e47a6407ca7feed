"""Warnings printed on the leaderboard when its numbers cannot mean what they seem to.

* **Too few runs.** The stratified bootstrap resamples a method entry's seeds within each task;
  with 2 seeds a task has only 3 distinct resamples, so the intervals come out far narrower than the
  spread a rerun would show (Agarwal et al. 2021 warn that percentile bootstrap CIs understate
  uncertainty with few runs). Below :data:`MIN_SEEDS` seeds the leaderboard says so.
* **Nothing learned.** A learning curve whose last episodes are no better than its first ones means
  the learner did not learn on the test tasks (too small a budget, a broken learner): every
  metric then measures noise around the starting policy, and the ranking is noise. When no method
  entry's final return improves significantly on its first episodes, the leaderboard says so.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from opt_suite.report.episodes import LearningCurves
from opt_suite.report.metrics import final_episode_count

__all__ = ["MIN_SEEDS", "leaderboard_caveats", "learned", "too_few_runs"]

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


def learned(curves: LearningCurves, final_fraction: float) -> bool:
    """Whether the runs' final return improves significantly on their first episodes.

    Per run: mean return of the last ``k`` episodes minus that of the first ``k`` (``k`` as
    ``final_return`` counts them); improved when the mean over runs exceeds
    :data:`IMPROVEMENT_SE` standard errors (or, with a single run, is positive).
    """
    returns = np.asarray(curves.returns, dtype=np.float64)
    episodes = returns.shape[-1]
    k = final_episode_count(episodes, final_fraction)
    gain = (returns[..., -k:].mean(axis=-1) - returns[..., :k].mean(axis=-1)).ravel()
    if gain.size < 2:
        return bool(gain.size and gain[0] > 0)
    se = float(np.std(gain, ddof=1) / np.sqrt(gain.size))
    return float(np.mean(gain)) > IMPROVEMENT_SE * se and float(np.mean(gain)) > 0


def leaderboard_caveats(
    curves: Mapping[str, LearningCurves], final_fraction: float, by_frames: bool = False
) -> tuple[str, ...]:
    """Every warning the leaderboard should carry (empty when none applies).

    ``by_frames``: the budget was emulator frames (the curves are points of the frame axis).
    """
    out = []
    few = too_few_runs(curves)
    if few:
        out.append(few)
    if curves and not any(learned(c, final_fraction) for c in curves.values()):
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
