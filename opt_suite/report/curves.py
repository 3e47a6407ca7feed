"""``curves.png``: mean return on the test tasks vs episode, with standard-error bands.

The paper's Figure 1b: one line per method entry, the mean over all seeds x test tasks of the return
of each episode, shaded +- one standard error (of that mean, over the seeds x tasks runs).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from opt_suite.report.episodes import LearningCurves

__all__ = ["curve_bands", "write_curves_png"]


def curve_bands(curves: LearningCurves) -> tuple[np.ndarray, np.ndarray]:
    """Per-episode mean and standard error over the ``seeds x tasks`` runs, each ``[episodes]``."""
    runs = curves.returns.reshape(-1, curves.returns.shape[-1])
    mean = runs.mean(axis=0)
    if runs.shape[0] < 2:
        return mean, np.zeros_like(mean)
    return mean, runs.std(axis=0, ddof=1) / np.sqrt(runs.shape[0])


def write_curves_png(curves: Mapping[str, LearningCurves], path: Path, title: str) -> Path:
    """Draw every method entry's learning curve into ``path`` (PNG, matplotlib's Agg backend)."""
    # Imported here: the report is written at the end of a run and by `opt-suite report`, while
    # `opt-suite compare` only needs numbers and must stay quick.
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.0, 4.5), dpi=120)
    try:
        for name, c in curves.items():
            mean, se = curve_bands(c)
            x = np.arange(1, mean.size + 1)
            (line,) = ax.plot(x, mean, label=name, linewidth=1.5)
            ax.fill_between(x, mean - se, mean + se, color=line.get_color(), alpha=0.2, linewidth=0)
        first = next(iter(curves.values()))
        ax.set_xlabel("episode")
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
