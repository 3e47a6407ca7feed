"""Pictures of options on image families (the paper's Figs. 4–5): an option executed until it ends.

For each option: reset an env of a train task — a start state drawn from the distribution the
demonstrations start from — run the option (actions sampled from μ_o, termination drawn from
min(1, β_o + bump·j) after its j-th step, the learner's rule) until it terminates or the episode
ends, and draw the screens it went through in one strip, each captioned with its step, the action
taken and β_o there. Deterministic in the seed.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["OptionRun", "run_option", "save_option_strip"]


@dataclasses.dataclass(frozen=True)
class OptionRun:
    """One execution of one option.

    Attributes:
      screens: [k + 1] RGB screens (or observation frames) from the start to where it ended.
      actions: [k] actions taken.
      betas: [k + 1] β_o at each screen (the first is never used to stop).
      ended_by: ``"termination"``, ``"episode"`` (the game ended or was cut) or ``"cap"``.
    """

    screens: list[np.ndarray]
    actions: list[int]
    betas: list[float]
    ended_by: str


def _screen(env: Any, obs: np.ndarray) -> np.ndarray:
    screen = env.render() if getattr(env, "render_mode", None) == "rgb_array" else None
    return np.asarray(screen) if screen is not None else np.asarray(obs)[..., -1]


def run_option(
    env: Any,
    options: Any,
    index: int,
    seed: int,
    termination_bump: float = 0.05,
    max_steps: int = 100,
) -> OptionRun:
    """Execute option ``index`` of ``options`` in ``env`` from ``env.reset(seed=seed)``."""
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    screens = [_screen(env, obs)]
    actions: list[int] = []
    betas: list[float] = []
    mu, beta = options.probabilities(np.asarray(obs)[None])
    betas.append(float(beta[0, index]))
    for step in range(max_steps):
        if step > 0 and rng.random() < betas[-1] + termination_bump * step:
            return OptionRun(screens, actions, betas, "termination")
        probs = np.asarray(mu[0, index], np.float64)
        action = int(rng.choice(len(probs), p=probs / probs.sum()))
        obs, _, terminated, truncated, _ = env.step(action)
        actions.append(action)
        screens.append(_screen(env, obs))
        mu, beta = options.probabilities(np.asarray(obs)[None])
        betas.append(float(beta[0, index]))
        if terminated or truncated:
            return OptionRun(screens, actions, betas, "episode")
    return OptionRun(screens, actions, betas, "cap")


def save_option_strip(
    path: Path, run: OptionRun, action_names: list[str] | None, title: str, columns: int = 7
) -> Path:
    """Draw ``run``'s screens in rows of ``columns`` into ``path`` (PNG, matplotlib Agg)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    count = len(run.screens)
    rows = -(-count // columns)
    width = min(count, columns)
    fig, axes = plt.subplots(
        rows, width, figsize=(1.6 * width, 2.2 * rows + 0.5), dpi=100, squeeze=False
    )
    try:
        for ax in axes.flat:
            ax.axis("off")
        for t, screen in enumerate(run.screens):
            ax = axes.flat[t]
            ax.imshow(screen, cmap=None if screen.ndim == 3 else "gray", interpolation="nearest")
            caption = f"t={t} β={run.betas[t]:.2f}"
            if t < len(run.actions):
                a = run.actions[t]
                name = action_names[a] if action_names and a < len(action_names) else str(a)
                caption += f"\n→ {name}"
            else:
                caption += f"\nend: {run.ended_by}"
            ax.set_title(caption, fontsize=7)
        fig.suptitle(title, fontsize=9)
        fig.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, format="png")
    finally:
        plt.close(fig)
    return path
