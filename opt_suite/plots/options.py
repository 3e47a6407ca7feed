"""Pictures of learned options in the style of the paper's Figure 2 (Garcia, Nota & Thomas 2020).

One figure per option set, one column per option:

- top row (when a test task is given): the task (start red, goal green) and the path the learned
  policy over options takes on it, coloured by the option acting;
- "μ" row: arrows of each state's most likely action argmax_a μ_o(s, a) (faint where μ is unsure),
  over a demonstration whose cells are coloured by μ_o(s_t, a_t), the probability that the option
  takes the demonstrated action;
- "π" row: π(s, o), the probability that the policy over options learned on the test task picks the
  option in each state;
- "β" row: the termination probability β_o(s).

Everything drawn comes from :mod:`opt_suite.plots.option_data`; this module only lays it out. It
uses ``matplotlib.figure.Figure`` directly (the Agg canvas, no pyplot state): it never opens a
window.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from opt_suite.families.base import TabularModel
from opt_suite.options import TabularOptionSet
from opt_suite.plots.option_data import (
    demonstrated_action_probs,
    greedy_arrows,
    grid_image,
    option_usage,
    path_cells,
)
from opt_suite.trajectory import Trajectory

__all__ = ["options_figure", "save_options_figure"]

_PANEL = 2.6  # inches per panel side (scaled by the grid's aspect)


def _blank(ax, model: TabularModel, title: str) -> None:
    """Walls dark, free cells white."""
    from matplotlib import colors

    free = grid_image(model, np.zeros(model.num_states))
    ax.imshow(np.isnan(free), cmap=colors.ListedColormap(["white", "0.3"]), vmin=0, vmax=1)
    _style(ax, title)


def _style(ax, title: str) -> None:
    ax.set_title(title, fontsize=8)
    ax.set_xticks([])
    ax.set_yticks([])


def _heatmap(ax, fig, model: TabularModel, values: np.ndarray, title: str, cmap: str) -> None:
    import matplotlib

    colormap = matplotlib.colormaps[cmap].with_extremes(bad="0.3")
    image = ax.imshow(grid_image(model, values), cmap=colormap, vmin=0.0, vmax=1.0)
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.02).ax.tick_params(labelsize=6)
    _style(ax, title)


def _mu_panel(ax, fig, model, mu, moves, demonstration: Trajectory | None, title: str) -> None:
    _blank(ax, model, title)
    if demonstration is not None:
        import matplotlib

        probs = demonstrated_action_probs(mu, demonstration)
        values = np.full(model.num_states, np.nan)
        # A state visited twice shows its last visit (the action there is what the cell shows).
        values[np.asarray(demonstration.observations)[: len(demonstration)]] = probs
        colormap = matplotlib.colormaps["viridis"].with_extremes(bad=(0, 0, 0, 0))
        image = ax.imshow(grid_image(model, values), cmap=colormap, vmin=0.0, vmax=1.0)
        fig.colorbar(image, ax=ax, fraction=0.046, pad=0.02).ax.tick_params(labelsize=6)
    arrows = greedy_arrows(model, mu, moves)
    alpha = np.clip(arrows.confidence, 0.15, 1.0)
    ax.quiver(
        arrows.cols - 0.35 * arrows.d_cols,
        arrows.rows - 0.35 * arrows.d_rows,
        arrows.d_cols,
        arrows.d_rows,
        angles="xy",
        scale_units="xy",
        scale=1 / 0.7,
        width=0.004,
        headwidth=4,
        color=np.column_stack([np.zeros((len(alpha), 3)), alpha]),
    )


def _task_panels(ax_task, ax_path, model, path, chosen, num_actions, names) -> None:
    from matplotlib import colormaps

    start = path_cells(model, [model.start])[0]
    # Only the goals the family declares: a terminal state may be a hole, not a goal.
    goals = path_cells(model, model.goals) if model.goals is not None else np.zeros((0, 2))
    for ax, title in ((ax_task, "test task"), (ax_path, "greedy policy over options")):
        _blank(ax, model, title)
        ax.scatter([start[1]], [start[0]], s=40, c="red", marker="s", zorder=3)
        ax.scatter(goals[:, 1], goals[:, 0], s=40, c="green", marker="s", zorder=3)
    if path is None or len(path) < 2:
        return
    cells = path_cells(model, path)
    palette = colormaps["tab10"]
    for t, option in enumerate(chosen):
        colour = "0.55" if option < num_actions else palette((option - num_actions) % 10)
        ax_path.plot(cells[t : t + 2, 1], cells[t : t + 2, 0], color=colour, linewidth=2)
    used = sorted({int(o) - num_actions for o in chosen if o >= num_actions})
    labels = [("primitive", "0.55")] + [(names[i], palette(i % 10)) for i in used]
    for label, colour in labels:
        ax_path.plot([], [], color=colour, linewidth=2, label=label)
    ax_path.legend(fontsize=6, loc="lower left", framealpha=0.8)


def options_figure(
    model: TabularModel,
    options: TabularOptionSet,
    moves: np.ndarray,
    *,
    demonstration: Trajectory | None = None,
    pi: np.ndarray | None = None,
    episode: tuple[np.ndarray, np.ndarray] | None = None,
    title: str = "",
):
    """The figure (a ``matplotlib.figure.Figure``) of ``options`` on the grid of ``model``.

    Args:
      model: the test task's model when ``pi``/``episode`` are given (its start and goal are drawn),
        else any task of the family.
      options: the option set to draw (m columns).
      moves: int [A, 2] (d_row, d_col) of each action.
      demonstration: a demonstration drawn under every option's arrows.
      pi: [S, A + m] a policy over primitives + options on ``model``'s task (the "π" row).
      episode: (states [T+1], acting option [T]) of an episode on ``model``'s task (top row).
      title: the figure's title.
    """
    from matplotlib.figure import Figure

    m = len(options)
    columns = max(m, 2)
    rows = ["task"] if episode is not None else []
    rows += ["mu", *(["pi"] if pi is not None else []), "beta"]
    aspect = model.shape[0] / model.shape[1] if model.shape else 1.0
    fig = Figure(figsize=(_PANEL * columns * 1.15, _PANEL * aspect * len(rows) + 0.6))
    axes = np.atleast_2d(fig.subplots(len(rows), columns, squeeze=False))
    for ax in axes.flat:
        ax.set_axis_off()
    usage = option_usage(pi, model.num_actions) if pi is not None else None
    for r, kind in enumerate(rows):
        if kind == "task":
            assert episode is not None  # the row exists only with an episode (see rows)
            axes[r, 0].set_axis_on()
            axes[r, 1].set_axis_on()
            _task_panels(axes[r, 0], axes[r, 1], model, *episode, model.num_actions, options.names)
            continue
        for o in range(m):
            ax = axes[r, o]
            ax.set_axis_on()
            name = options.names[o]
            if kind == "mu":
                _mu_panel(ax, fig, model, options.mu[o], moves, demonstration, f"{name}: argmax μ")
            elif kind == "pi":
                assert usage is not None  # the row exists only with pi (see rows)
                _heatmap(ax, fig, model, usage[o], f"{name}: π(s, o) on the test task", "magma")
            else:
                _heatmap(ax, fig, model, options.beta[o], f"{name}: β(s)", "magma")
    if m == 0:
        axes[-1, 0].set_axis_on()
        _blank(axes[-1, 0], model, "no learned options (primitives only)")
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def save_options_figure(file: str | Path, *args, dpi: int = 110, **kwargs) -> Path:
    """Draw :func:`options_figure` (same arguments) into a PNG ``file``; returns its path."""
    path = Path(file)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig = options_figure(*args, **kwargs)
    fig.savefig(path, dpi=dpi)
    return path
