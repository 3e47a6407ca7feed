"""Pictures of options on image families (the paper's Figs. 4–5): an option executed until it ends.

For each option: bring an env of a train task into a state *inside a demonstration* — reset it
with the demonstration's recorded seed and replay the demonstrator's actions up to a chosen step
(the env is deterministic: sticky actions are off, and the replayed observation is checked
against the recorded one) — then run the option (actions sampled from μ_o, termination drawn from
min(1, β_o + bump·j) after its j-th step, the learner's rule) until it terminates or the episode
ends, and draw the screens it went through in one strip, each captioned with its step, the action
taken and β_o there. Deterministic in the seed.

Which step: the demonstration state where the option best fits what the demonstrator did next and
is least likely to stop at once — the maximum over every (trajectory, step) of
log μ_o(s_t, a_t) + log(1 − β_o(s_t)) (:func:`demonstration_start`), i.e. a state from which the
demonstrations suggest the option would be called. Demonstrations recorded without reset seeds
(older runs, Minari datasets) cannot be replayed: the option then starts from a reset, and the
strip's title says so.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np

from opt_suite.options.termination import terminates

__all__ = [
    "DemonstrationStart",
    "OptionRun",
    "ReplayError",
    "demonstration_start",
    "replay_demonstration",
    "run_option",
    "save_option_strip",
    "strip_figure",
    "wrap_title",
]


class ReplayError(RuntimeError):
    """Replaying a demonstration's actions did not reproduce its observations."""


@dataclasses.dataclass(frozen=True)
class DemonstrationStart:
    """A state inside a demonstration: ``trajectory``'s state after ``step`` of its actions."""

    trajectory: int
    step: int
    score: float


def demonstration_start(options: Any, index: int, demonstrations: Any) -> DemonstrationStart | None:
    """The replayable demonstration state that suits option ``index`` best (module docstring).

    Only trajectories with a ``reset_seed`` are candidates; None when there is none. Ties go to
    the earliest (trajectory, step).
    """
    best: DemonstrationStart | None = None
    for k, trajectory in enumerate(demonstrations or ()):
        if trajectory.reset_seed is None or len(trajectory) == 0:
            continue
        states = np.asarray(trajectory.observations)[:-1]
        scores = []
        for chunk in range(0, len(states), 256):  # bounded memory on long trajectories
            mu, beta = options.probabilities(states[chunk : chunk + 256])
            rows = np.arange(len(mu))
            taken = np.asarray(trajectory.actions)[chunk : chunk + 256]
            with np.errstate(divide="ignore"):
                scores.append(
                    np.log(np.asarray(mu, np.float64)[rows, index, taken])
                    + np.log1p(-np.asarray(beta, np.float64)[rows, index])
                )
        score = np.concatenate(scores)
        t = int(np.argmax(score))
        if best is None or score[t] > best.score:
            best = DemonstrationStart(k, t, float(score[t]))
    return best


def replay_demonstration(env: Any, trajectory: Any, step: int) -> np.ndarray:
    """Reset ``env`` with ``trajectory.reset_seed`` and replay its first ``step`` actions.

    Returns the observation reached, which must equal the recorded ``observations[step]``.

    Raises:
      ReplayError: no reset seed, ``step`` out of range, or the env diverged from the recording
        (a nondeterministic env, or a demonstration of another task).
    """
    if trajectory.reset_seed is None:
        raise ReplayError(f"demonstration of {trajectory.task_id} has no reset seed to replay")
    if not 0 <= step <= len(trajectory):
        raise ReplayError(f"step {step} is not in 0..{len(trajectory)} of the demonstration")
    obs, _ = env.reset(seed=int(trajectory.reset_seed))
    for t in range(step + 1):
        if not np.array_equal(np.asarray(obs), np.asarray(trajectory.observations[t])):
            raise ReplayError(
                f"replaying the demonstration of {trajectory.task_id} diverged at step {t}: the "
                "env is not deterministic in its reset seed and actions, or the demonstration "
                "comes from another task"
            )
        if t < step:
            obs, _, terminated, truncated, _ = env.step(int(trajectory.actions[t]))
            if (terminated or truncated) and t + 1 < step:
                raise ReplayError(f"the replayed episode ended at step {t + 1} < {step}")
    return np.asarray(obs)


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
    start: np.ndarray | None = None,
) -> OptionRun:
    """Execute option ``index`` of ``options`` in ``env``; draws from ``seed``.

    From ``start``, the observation of the state ``env`` is already in (e.g. after
    :func:`replay_demonstration`), or else from ``env.reset(seed=seed)``.
    """
    rng = np.random.default_rng(seed)
    obs = env.reset(seed=seed)[0] if start is None else start
    screens = [_screen(env, obs)]
    actions: list[int] = []
    betas: list[float] = []
    mu, beta = options.probabilities(np.asarray(obs)[None])
    betas.append(float(beta[0, index]))
    for step in range(max_steps):
        if step > 0 and terminates(rng.random(), betas[-1], termination_bump, step):
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


#: The strip title's font size (points), and the width of one of its characters in points (a
#: generous average for DejaVu Sans), used to wrap the title to the figure's width.
TITLE_POINTS = 9.0
_CHAR_POINTS = 0.62 * TITLE_POINTS


def wrap_title(title: str, width_inches: float) -> str:
    """``title`` broken into lines that fit a figure ``width_inches`` wide at TITLE_POINTS."""
    import textwrap

    chars = max(12, int(width_inches * 72 / _CHAR_POINTS))
    return "\n".join(textwrap.wrap(title, chars, break_long_words=True)) or title


def save_option_strip(
    path: Path, run: OptionRun, action_names: list[str] | None, title: str, columns: int = 7
) -> Path:
    """Draw ``run``'s screens in rows of ``columns`` into ``path`` (PNG, matplotlib Agg)."""
    import matplotlib.pyplot as plt

    fig = strip_figure(run, action_names, title, columns)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, format="png")
    finally:
        plt.close(fig)
    return path


def strip_figure(
    run: OptionRun, action_names: list[str] | None, title: str, columns: int = 7
) -> Any:
    """The strip as a matplotlib figure; the title is wrapped so that none of it is cut off.

    A short run (an option that ended after one step) is a narrow figure: its title, one line on a
    wide strip, takes several lines here, and the figure grows to hold them.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    count = len(run.screens)
    rows = -(-count // columns)
    width = min(count, columns)
    fig_width = max(1.6 * width, 2.4)
    wrapped = wrap_title(title, fig_width)
    title_lines = wrapped.count("\n") + 1
    fig, axes = plt.subplots(
        rows,
        width,
        figsize=(fig_width, 2.2 * rows + 0.3 + 0.2 * title_lines),
        dpi=100,
        squeeze=False,
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
        fig.suptitle(wrapped, fontsize=TITLE_POINTS)
        fig.tight_layout()
    except BaseException:
        plt.close(fig)
        raise
    return fig
