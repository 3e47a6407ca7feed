"""``curves.png``: return on the test tasks vs episode (or env steps / frames), binned, with bands.

The paper's Figure 1b: one line per method entry. A curve of per-episode means is a saw-tooth a
reader cannot read, so each run's curve is first averaged over bins of consecutive points
(:func:`binned`: :data:`BINS` bins, the bin width stated on the figure), then averaged over the
seeds x test tasks runs; the band is a 95% interval of that mean (mean +- 1.96 standard errors over
the runs, a normal approximation). With reference returns a second panel shows the same curves on
the per-task normalised scale (0 = uniform-random policy, 1 = expert, see
:mod:`opt_suite.report.normalise`; tasks without a scale left out).

Runs whose episodes end at different points of their budget (frame budgets, parallel sub-envs,
frame skips) are plotted against that budget's axis instead, as the paper's Figures 2–3 plot
returns against training time: each run's curve is read at common counts as the return of its
latest finished episode (a step function), from the first count at which every run has finished
one episode. The axis says what it counts: emulator frames on Atari, env steps elsewhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from opt_suite.report.episodes import LearningCurves
from opt_suite.report.normalise import References, undefined

__all__ = ["BINS", "binned", "curve_bands", "frame_bands", "uses_frames", "write_curves_png"]

#: Points of the common frame axis of a frames plot.
FRAME_POINTS = 200
#: Bins of the plotted curves (fewer when a run has fewer points).
BINS = 20
#: Half-width of the band in standard errors (a 95% normal interval of the mean).
Z_95 = 1.96


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


def binned(
    x: np.ndarray, values: np.ndarray, bins: int = BINS
) -> tuple[np.ndarray, np.ndarray, int]:
    """(bin centres [B], per-run bin means [runs, B], width): consecutive points averaged.

    ``values`` is ``[runs, points]``; bins hold ``width = ceil(points / bins)`` points each (the
    last one what is left), so a bin is an average of at most ``width`` episodes (or axis points).
    """
    points = values.shape[-1]
    width = max(1, -(-points // max(1, bins)))
    starts = np.arange(0, points, width)
    sums = np.add.reduceat(values, starts, axis=-1)
    counts = np.diff(np.append(starts, points))
    centres = np.add.reduceat(np.asarray(x, dtype=np.float64), starts) / counts
    return centres, sums / counts, width


def _run_curves(c: LearningCurves, by_frames: bool) -> tuple[np.ndarray, np.ndarray]:
    """(x [K], values [seeds * tasks, K]): every run's curve on the plotted axis."""
    if by_frames:
        frames = c.frames.reshape(-1, c.frames.shape[-1])
        returns = c.returns.reshape(-1, c.returns.shape[-1])
        start, stop = frames[:, 0].max(), frames[:, -1].min()
        axis = np.unique(np.linspace(start, max(start, stop), FRAME_POINTS).round())
        latest = np.stack([np.searchsorted(f, axis, side="right") - 1 for f in frames])
        return axis, np.take_along_axis(returns, np.maximum(latest, 0), axis=1)
    return np.arange(1, c.returns.shape[-1] + 1, dtype=np.float64), c.returns.reshape(
        -1, c.returns.shape[-1]
    )


def _normalised_runs(
    c: LearningCurves, values: np.ndarray, references: References
) -> np.ndarray | None:
    """The runs' curves on the normalised scale, pairs without a scale left out (None: none).

    A (seed, task) pair has no scale where :func:`~opt_suite.report.normalise.undefined` says so.
    """
    random, expert = references.aligned(c.seeds, c.tasks)
    keep = ~undefined(random, expert).ravel()
    if not np.any(keep):
        return None
    span = np.where(keep, (expert - random).ravel(), 1.0).reshape(-1, 1)
    return ((values - random.reshape(-1, 1)) / span)[keep]


def _band(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean = values.mean(axis=0)
    if values.shape[0] < 2:
        return mean, np.zeros_like(mean)
    return mean, Z_95 * values.std(axis=0, ddof=1) / np.sqrt(values.shape[0])


def write_curves_png(
    curves: Mapping[str, LearningCurves],
    path: Path,
    title: str,
    references: References | None = None,
    frame_unit: str = "env steps",
    discovery_frames: Mapping[str, float] | None = None,
) -> Path:
    """Draw every method entry's binned learning curve into ``path`` (PNG, matplotlib's Agg).

    ``references``: also a panel on the normalised scale. ``frame_unit``: what the frame axis
    counts, for its label ("env steps", or "emulator frames" on Atari). With
    ``discovery_frames`` (entry -> frames its discovery stepped), the curves are drawn against
    the frame axis shifted right by them, on a log axis (``report/discovery_cost.py``).
    """
    # Imported here: the report is written at the end of a run and by `opt-suite report`, while
    # `opt-suite compare` only needs numbers and must stay quick.
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    by_frames = discovery_frames is not None or uses_frames(curves)
    if discovery_frames is not None:
        title = f"{title} (discovery frames included)"
    panels = [("raw", "return")]
    if references is not None:
        panels.append(("normalised", "normalised score"))
    fig, axes = plt.subplots(
        1, len(panels), figsize=(7.0 * len(panels), 4.8), dpi=120, squeeze=False
    )
    first = next(iter(curves.values()))
    try:
        width = 1
        for (kind, ylabel), ax in zip(panels, axes[0], strict=True):
            for name, c in curves.items():
                x, values = _run_curves(c, by_frames)
                if kind == "normalised":
                    assert references is not None
                    normalised = _normalised_runs(c, values, references)
                    if normalised is None:
                        continue
                    values = normalised
                centres, means, width = binned(x, values)
                if discovery_frames is not None:
                    centres = centres + discovery_frames.get(name, 0.0)
                mean, half = _band(means)
                (line,) = ax.plot(centres, mean, label=name, linewidth=1.5)
                ax.fill_between(
                    centres, mean - half, mean + half, color=line.get_color(), alpha=0.2, lw=0
                )
            ax.set_xlabel(frame_unit if by_frames else "episode")
            if discovery_frames is not None:
                ax.set_xlabel(f"{frame_unit}: discovery + learning (symmetric log scale)")
                ax.set_xscale("symlog", linthresh=1000.0)
            ax.set_ylabel(ylabel)
            if kind == "normalised" and references is not None:
                ax.set_title(
                    f"0 = uniform-random policy, 1 = {references.expert_label}", fontsize="small"
                )
            ax.grid(alpha=0.3)
            ax.legend(fontsize="small")
        unit = "points of the axis" if by_frames else "episodes"
        fig.suptitle(
            f"{title}: {len(first.seeds)} seeds × {len(first.tasks)} test tasks; each point is a"
            f" run's mean over a bin of {width} {unit}, averaged over the runs; band: mean ± 1.96"
            " s.e. over the runs",
            fontsize="small",
        )
        fig.tight_layout()
        fig.savefig(path, format="png")
    finally:
        plt.close(fig)
    return path
