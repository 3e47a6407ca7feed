"""``fig1a.png``: Algorithm 1's training curves across its rounds — the paper's Figure 1a.

Garcia, Nota & Thomas (2020), Fig. 1a: per training epoch, Ĵ's two parts while options are added
one at a time — the probability of generating the demonstrations rising, the expected number of
decisions falling, with a jump whenever a new option (and π) enters. Drawn here from the curves a
discovery cell records (``offline_options``: ``jhat``, ``likelihood``, ``terminations``,
``option_round``), one colour per method entry and one line per seed, epochs of all rounds end to
end (the first seed bold and named in the legend, the others faint under one legend entry); a
dotted line marks where each round starts (the first seed's rounds, in the entry's colour).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["FIG1A_CURVES", "TrainingCurves", "fig1a_figure", "training_curves", "write_fig1a_png"]

#: The curves a discovery cell must record to be drawn.
FIG1A_CURVES = ("jhat", "likelihood", "terminations", "option_round")

#: method entry -> seed -> curve name -> values per epoch (all rounds, in order).
TrainingCurves = Mapping[str, Mapping[int, Mapping[str, np.ndarray]]]

_PANELS = (
    ("jhat", "J-hat"),
    ("likelihood", "likelihood term\n(Pr(h) or log Pr(h)/|h|)"),
    ("terminations", "E[#terminations] / |h|"),
)


def training_curves(rows: Iterable[Any]) -> dict[str, dict[int, dict[str, np.ndarray]]]:
    """Group curve rows (``method, seed, name, step, value``, ordered by step) for Figure 1a.

    Only (method, seed) pairs that recorded every curve of :data:`FIG1A_CURVES` are kept.
    """
    grouped: dict[str, dict[int, dict[str, list[float]]]] = {}
    for r in rows:
        if r.name in FIG1A_CURVES:
            grouped.setdefault(r.method, {}).setdefault(r.seed, {}).setdefault(r.name, []).append(
                r.value
            )
    out: dict[str, dict[int, dict[str, np.ndarray]]] = {}
    for method, seeds in grouped.items():
        for seed, curves in seeds.items():
            if set(curves) == set(FIG1A_CURVES):
                out.setdefault(method, {})[seed] = {k: np.asarray(v) for k, v in curves.items()}
    return out


def fig1a_figure(curves: TrainingCurves, title: str) -> Any:
    """Figure 1a for every entry and seed in ``curves``: a matplotlib figure (Agg backend)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(_PANELS), 1, figsize=(7.5, 7.5), dpi=120, sharex=True)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    try:
        for i, (method, seeds) in enumerate(curves.items()):
            colour = colours[i % len(colours)]
            for j, seed in enumerate(sorted(seeds)):
                values = seeds[seed]
                epochs = np.arange(1, len(values["jhat"]) + 1)
                for ax, (name, _) in zip(axes, _PANELS, strict=True):
                    ax.plot(
                        epochs,
                        values[name],
                        color=colour,
                        linewidth=1.2 if j == 0 else 0.8,
                        alpha=1.0 if j == 0 else 0.45,
                        label=f"{method}, seed {seed}" if (j == 0 and name == "jhat") else None,
                    )
                if j == 0:
                    starts = np.flatnonzero(np.diff(values["option_round"])) + 1.5
                    for ax in axes:
                        for x in starts:
                            ax.axvline(x, color=colour, linestyle=":", linewidth=0.8)
        for ax, (_, label) in zip(axes, _PANELS, strict=True):
            ax.set_ylabel(label, fontsize="small")
            ax.grid(alpha=0.3)
        axes[-1].set_xlabel("training epoch (all rounds; a dotted line starts a new option)")
        axes[0].set_title(f"{title}: Algorithm 1 training curves (Fig. 1a)", fontsize="medium")
        if any(len(seeds) > 1 for seeds in curves.values()):
            # Every seed is drawn, the first bold: the legend names what the faint lines are.
            axes[0].plot(
                [], [], color="grey", linewidth=0.8, alpha=0.45, label="other seeds (faint)"
            )
        axes[0].legend(fontsize="small")
        fig.tight_layout()
    except BaseException:
        plt.close(fig)
        raise
    return fig


def write_fig1a_png(curves: TrainingCurves, path: Path, title: str) -> Path:
    """Draw Figure 1a for every entry and seed in ``curves`` into ``path`` (PNG)."""
    import matplotlib.pyplot as plt

    fig = fig1a_figure(curves, title)
    try:
        fig.savefig(path, format="png")
    finally:
        plt.close(fig)
    return path
