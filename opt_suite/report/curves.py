"""``curves.png``: mean return on the test tasks vs episode (or frames), with standard-error bands.

The paper's Figure 1b: one line per method entry, the mean over all seeds x test tasks of the return
of each episode, shaded +- one standard error (of that mean, over the seeds x tasks runs).

Families that skip frames (Atari) are plotted against emulator frames instead, as the paper's
Figures 2–3 plot returns against training time: runs then end their episodes at different frames,
so each run's curve is read at common frame counts as the return of its latest finished episode
(a step function), from the first frame count at which every run has finished one episode.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from opt_suite.report.episodes import LearningCurves

__all__ = ["curve_bands", "frame_bands", "uses_frames", "write_curves_png"]

#: Points of the common frame axis of a frames plot.
FRAME_POINTS = 200


def curve_bands(curves: LearningCurves) -> tuple[np.ndarray, np.ndarray]:
    """Per-episode mean and standard error over the ``seeds x tasks`` runs, each ``[episodes]``."""
    runs = curves.returns.reshape(-1, curves.returns.shape[-1])
    mean = runs.mean(axis=0)
    if runs.shape[0] < 2:
        return mean, np.zeros_like(mean)
    return mean, runs.std(axis=0, ddof=1) / np.sqrt(runs.shape[0])


def uses_frames(curves: Mapping[str, LearningCurves]) -> bool:
    """Whether to plot against frames: some run spent other than one frame per primitive step."""
    return any(not np.array_equal(c.frames, np.cumsum(c.steps, axis=-1)) for c in curves.values())


def frame_bands(
    curves: LearningCurves, points: int = FRAME_POINTS
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(frames [K], mean [K], s.e. [K]): every run's latest finished episode's return at each frame.

    The axis runs from the first frame count by which every run has finished an episode to the
    last one by which every run has finished all of them (no run is extrapolated past its end).
    """
    frames = curves.frames.reshape(-1, curves.frames.shape[-1])
    returns = curves.returns.reshape(-1, curves.returns.shape[-1])
    start, stop = frames[:, 0].max(), frames[:, -1].min()
    axis = np.unique(np.linspace(start, max(start, stop), points).round().astype(np.int64))
    # The latest finished episode of each run at each point (frames are non-decreasing per run).
    latest = np.stack([np.searchsorted(f, axis, side="right") - 1 for f in frames])
    values = np.take_along_axis(returns, np.maximum(latest, 0), axis=1)
    mean = values.mean(axis=0)
    if values.shape[0] < 2:
        return axis, mean, np.zeros_like(mean)
    return axis, mean, values.std(axis=0, ddof=1) / np.sqrt(values.shape[0])


def write_curves_png(
    curves: Mapping[str, LearningCurves],
    path: Path,
    title: str,
    discovery_frames: Mapping[str, float] | None = None,
) -> Path:
    """Draw every method entry's learning curve into ``path`` (PNG, matplotlib's Agg backend).

    With ``discovery_frames`` (entry -> frames its discovery stepped), the curves are drawn
    against frames shifted right by them, on a log axis (``report/discovery_cost.py``).
    """
    # Imported here: the report is written at the end of a run and by `opt-suite report`, while
    # `opt-suite compare` only needs numbers and must stay quick.
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    by_frames = discovery_frames is not None or uses_frames(curves)
    fig, ax = plt.subplots(figsize=(7.0, 4.5), dpi=120)
    try:
        for name, c in curves.items():
            if by_frames:
                x, mean, se = frame_bands(c)
                x = x + (discovery_frames or {}).get(name, 0.0)
            else:
                mean, se = curve_bands(c)
                x = np.arange(1, mean.size + 1)
            (line,) = ax.plot(x, mean, label=name, linewidth=1.5)
            ax.fill_between(x, mean - se, mean + se, color=line.get_color(), alpha=0.2, linewidth=0)
        first = next(iter(curves.values()))
        ax.set_xlabel("emulator frames" if by_frames else "episode")
        if discovery_frames is not None:
            ax.set_xlabel("frames: discovery + learning (log scale)")
            ax.set_xscale("symlog", linthresh=1000.0)
            title = f"{title} (discovery frames included)"
        ax.set_ylabel("average return (± s.e.)")
        ax.set_title(
            f"{title}: {len(first.seeds)} seeds × {len(first.tasks)} test tasks", fontsize="medium"
        )
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
        fig.tight_layout()
        fig.savefig(path, format="png")
    finally:
        plt.close(fig)
    return path
