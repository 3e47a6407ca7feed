"""``discovery.png``: the learning curves of methods that discover options by interacting.

Option-critic (Bacon, Harb & Precup 2017) learns its options while solving its training tasks; its
paper judges it by the steps per episode during that learning (their four-rooms figure: a fast drop
to a short path, a jump when the goal moves, a recovery). A discovery cell of such a method records
``steps_per_episode`` (and ``mean_option_duration``: primitive steps per option call) per
training episode, all training tasks end to end; this figure draws their mean over seeds with a
standard-error band, one colour per method entry, so a run can be set beside the published curve.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["INTERACTION_CURVES", "InteractionCurves", "interaction_curves", "write_discovery_png"]

#: The curves drawn (the first is required for a (method, seed) to be drawn).
INTERACTION_CURVES = ("steps_per_episode", "mean_option_duration")

#: method entry -> curve name -> [seeds, episodes] (seeds with curves of one length only).
InteractionCurves = Mapping[str, Mapping[str, np.ndarray]]

_LABELS = {
    "steps_per_episode": "steps per episode (log scale)",
    "mean_option_duration": "mean option duration (steps)",
}


def interaction_curves(rows: Iterable[Any]) -> dict[str, dict[str, np.ndarray]]:
    """Group curve rows (``method, seed, name, step, value``, ordered by step) per method entry.

    A method entry is kept when its seeds recorded ``steps_per_episode``; each curve becomes a
    [seeds, episodes] array (NaN where a seed recorded NaN). Seeds that ran different numbers of
    episodes (an interaction budget in steps ends each seed after its own count) are cut to the
    shortest, so that every point of the mean is over every seed.
    """
    grouped: dict[str, dict[str, dict[int, list[float]]]] = {}
    for r in rows:
        if r.name in INTERACTION_CURVES:
            by_seed = grouped.setdefault(r.method, {}).setdefault(r.name, {})
            by_seed.setdefault(r.seed, []).append(r.value)
    out: dict[str, dict[str, np.ndarray]] = {}
    for method, curves in grouped.items():
        steps = curves.get(INTERACTION_CURVES[0])
        if not steps:
            continue
        seeds = sorted(steps)
        out[method] = {}
        for name, by_seed in curves.items():
            if sorted(by_seed) == seeds:
                shortest = min(len(v) for v in by_seed.values())
                out[method][name] = np.array([by_seed[s][:shortest] for s in seeds], dtype=float)
    return out


def _mean_and_se(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard error over seeds (axis 0) of the finite values; NaN where none is."""
    finite = np.isfinite(values)
    count = finite.sum(axis=0)
    total = np.where(finite, values, 0.0).sum(axis=0)
    mean = np.divide(total, count, out=np.full(count.shape, np.nan), where=count > 0)
    squares = np.where(finite, (values - mean) ** 2, 0.0).sum(axis=0)
    var = np.divide(squares, count, out=np.full(count.shape, np.nan), where=count > 0)
    return mean, np.sqrt(var) / np.sqrt(np.maximum(count, 1))


def write_discovery_png(curves: InteractionCurves, path: Path, title: str) -> Path:
    """Draw the mean ± s.e. over seeds of every curve in ``curves`` into ``path`` (PNG, Agg)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [n for n in INTERACTION_CURVES if any(n in c for c in curves.values())]
    fig, axes = plt.subplots(len(names), 1, figsize=(7.5, 2.8 * len(names) + 0.6), dpi=120)
    axes = np.atleast_1d(axes)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    try:
        for i, (method, by_name) in enumerate(curves.items()):
            for ax, name in zip(axes, names, strict=True):
                if name not in by_name:
                    continue
                values = by_name[name]
                episodes = np.arange(1, values.shape[1] + 1)
                mean, se = _mean_and_se(values)
                colour = colours[i % len(colours)]
                label = f"{method} ({values.shape[0]} seeds)"
                ax.plot(episodes, mean, color=colour, linewidth=1.0, label=label)
                ax.fill_between(episodes, mean - se, mean + se, color=colour, alpha=0.25)
        for ax, name in zip(axes, names, strict=True):
            ax.set_ylabel(_LABELS[name])
            ax.grid(alpha=0.3)
            if name == "steps_per_episode":
                ax.set_yscale("log")
        axes[0].legend(fontsize=8)
        axes[0].set_title(f"{title}: option discovery by interaction (training episodes)")
        axes[-1].set_xlabel("training episode (all training tasks, in order)")
        fig.tight_layout()
        fig.savefig(path)
    finally:
        plt.close(fig)
    return path
