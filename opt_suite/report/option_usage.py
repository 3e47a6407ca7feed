"""Option-usage statistics of the test-time learner: how often options are chosen and for how long.

Input: per evaluation run (method, seed, test task), the learner's counts per episode and per choice
(the A primitives first, then the m options): ``calls`` (decisions of the policy over options that
chose it) and ``steps`` (primitive steps taken while it ran). From them, per run and per method:

- **decisions** — choices made by the policy over options (a primitive is one decision per step, an
  option one decision for all its steps);
- **option fraction** — the fraction of decisions that chose an option (not a primitive), over all
  episodes and over the first and the last ``fraction`` of them (``ceil(fraction * episodes)``
  episodes, as the leaderboard's final return), to show whether the learner comes to rely on its
  options or learns to avoid them;
- **option step share** — the fraction of primitive steps taken inside options;
- **mean option length** — primitive steps inside options / option calls (undefined, left empty or
  ``-``, when no option was called);
- **per option** — its share of the option calls and its mean length.

Pooled numbers are ratios of sums over the runs (every decision weighs the same), not means of
per-run ratios. The pure functions here never read a store; ``opt-suite option-usage`` (the replay
that produces the counts) lives in :mod:`opt_suite.cli.option_usage`.

Length (over the 400 lines the tree aims for): usage totals, their per-run and per-episode rows
and the files written from them are one report; the replay that produces the counts is apart
(usage_replay.py).
"""

from __future__ import annotations

import csv
import dataclasses
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from opt_suite.files_guard import output_file
from opt_suite.report.metrics import final_episode_count

__all__ = [
    "RunUsage",
    "run_usage",
    "UsageTotals",
    "totals",
    "run_rows",
    "episode_rows",
    "usage_markdown",
    "write_usage_files",
    "CSV_NAME",
    "MARKDOWN_NAME",
    "EPISODES_CSV_NAME",
]

CSV_NAME = "option_usage.csv"
MARKDOWN_NAME = "option_usage.md"
EPISODES_CSV_NAME = "option_usage_episodes.csv"


@dataclasses.dataclass(frozen=True, eq=False)
class RunUsage:
    """One evaluation run's counts.

    Attributes:
      method, seed, task: the run (method entry, seed index, test task index; None: not known,
        e.g. read from the store's cells alone, which aggregates over tasks never need).
      names: the O = A + m choices, primitives first.
      num_primitives: A.
      calls: int [episodes, O], decisions that chose each choice.
      steps: int [episodes, O], primitive steps taken while each choice ran.
      frames: int [episodes, O], emulator frames those steps used (None: not counted; the
        ``tf_agents`` learner counts them).
    """

    method: str
    seed: int
    task: int | None
    names: tuple[str, ...]
    num_primitives: int
    calls: np.ndarray
    steps: np.ndarray
    frames: np.ndarray | None = None

    def __post_init__(self) -> None:
        calls, steps = np.asarray(self.calls), np.asarray(self.steps)
        if calls.ndim != 2 or calls.shape != steps.shape or calls.shape[1] != len(self.names):
            raise ValueError(
                f"{self.method} seed {self.seed} task {self.task}: calls {calls.shape} and steps"
                f" {steps.shape} are not both [episodes, {len(self.names)}]"
            )
        as_int = calls.astype(np.int64), steps.astype(np.int64)
        if (
            (as_int[0] != calls).any()
            or (as_int[1] != steps).any()
            or (calls < 0).any()
            or (steps < 0).any()
        ):
            raise ValueError(
                f"{self.method} seed {self.seed} task {self.task}: counts must be integers >= 0"
            )
        object.__setattr__(self, "calls", as_int[0])
        object.__setattr__(self, "steps", as_int[1])
        if self.frames is not None:
            frames = np.asarray(self.frames)
            if frames.shape != steps.shape or (frames < 0).any():
                raise ValueError(
                    f"{self.method} seed {self.seed} task {self.task}: frames {frames.shape} are"
                    f" not counts >= 0 of shape {steps.shape}"
                )
            object.__setattr__(self, "frames", frames.astype(np.int64))

    @property
    def option_names(self) -> tuple[str, ...]:
        """The m options' names."""
        return self.names[self.num_primitives :]

    @property
    def episodes(self) -> int:
        """Number of episodes."""
        return int(self.calls.shape[0])


def run_usage(method: str, seed: int, task: int | None, usage: Any) -> RunUsage:
    """One run's counts from what its learner recorded.

    ``usage`` is a :class:`opt_suite.learners.base.OptionUsage`, e.g. read back from an
    evaluation cell's ``option_usage.npz``.
    """
    return RunUsage(
        method,
        seed,
        task,
        tuple(usage.names),
        int(usage.num_primitives),
        np.asarray(usage.calls),
        np.asarray(usage.steps),
        None if usage.frames is None else np.asarray(usage.frames),
    )


@dataclasses.dataclass(frozen=True)
class UsageTotals:
    """Counts summed over some episodes of some runs, and the ratios made of them.

    Attributes:
      episodes: episodes summed over.
      decisions, option_calls, steps, option_steps: sums.
      option_calls_each, option_steps_each: per option (empty when the runs' options differ).
      frames, option_frames: emulator frames of all steps and of those inside options (None
        unless every run counted frames).
    """

    episodes: int
    decisions: int
    option_calls: int
    steps: int
    option_steps: int
    option_calls_each: tuple[int, ...] = ()
    option_steps_each: tuple[int, ...] = ()
    frames: int | None = None
    option_frames: int | None = None

    @property
    def option_frame_share(self) -> float:
        """Fraction of the emulator frames used inside options (NaN when not counted or none)."""
        if not self.frames or self.option_frames is None:
            return math.nan
        return self.option_frames / self.frames

    @property
    def option_fraction(self) -> float:
        """Fraction of decisions that chose an option (NaN without decisions)."""
        return self.option_calls / self.decisions if self.decisions else math.nan

    @property
    def option_step_share(self) -> float:
        """Fraction of primitive steps taken inside options (NaN without steps)."""
        return self.option_steps / self.steps if self.steps else math.nan

    @property
    def mean_option_length(self) -> float:
        """Primitive steps per option call (NaN when no option was called)."""
        return self.option_steps / self.option_calls if self.option_calls else math.nan

    @property
    def decisions_per_episode(self) -> float:
        """Mean decisions per episode (NaN without episodes)."""
        return self.decisions / self.episodes if self.episodes else math.nan

    def option_share(self, i: int) -> float:
        """Option i's share of the option calls (NaN when no option was called)."""
        return self.option_calls_each[i] / self.option_calls if self.option_calls else math.nan

    def option_length(self, i: int) -> float:
        """Option i's mean length in primitive steps (NaN when it was never called)."""
        calls = self.option_calls_each[i]
        return self.option_steps_each[i] / calls if calls else math.nan


def totals(runs: Sequence[RunUsage], part: str = "all", fraction: float = 0.1) -> UsageTotals:
    """The counts of ``runs`` summed over their episodes: ``part`` = ``all``, ``first``, ``last``.

    ``first`` and ``last`` take each run's first / last ``ceil(fraction * episodes)`` episodes.
    Per-option sums are kept when every run has the same option names (one run, or one seed's
    set over its test tasks).
    """
    if part not in ("all", "first", "last"):
        raise ValueError(f"part must be 'all', 'first' or 'last', got {part!r}")
    episodes = decisions = option_calls = steps = option_steps = 0
    same = len({(r.num_primitives, r.names) for r in runs}) == 1
    m = len(runs[0].option_names) if runs and same else 0
    calls_each, steps_each = np.zeros(m, np.int64), np.zeros(m, np.int64)
    counted = bool(runs) and all(r.frames is not None for r in runs)
    frames = option_frames = 0
    for r in runs:
        n = final_episode_count(r.episodes, fraction) if r.episodes else 0
        rows = {"all": slice(None), "first": slice(None, n), "last": slice(-n, None)}[part]
        calls, taken = np.asarray(r.calls)[rows], np.asarray(r.steps)[rows]
        a = r.num_primitives
        episodes += calls.shape[0]
        decisions += int(calls.sum())
        option_calls += int(calls[:, a:].sum())
        steps += int(taken.sum())
        option_steps += int(taken[:, a:].sum())
        if m:
            calls_each += calls[:, a:].sum(axis=0)
            steps_each += taken[:, a:].sum(axis=0)
        if counted:
            used = np.asarray(r.frames)[rows]
            frames += int(used.sum())
            option_frames += int(used[:, a:].sum())
    return UsageTotals(
        episodes,
        decisions,
        option_calls,
        steps,
        option_steps,
        tuple(int(c) for c in calls_each),
        tuple(int(s) for s in steps_each),
        frames if counted else None,
        option_frames if counted else None,
    )


def _number(x: float, digits: int = 4) -> str:
    """A CSV cell: empty for NaN (undefined), else rounded."""
    return "" if math.isnan(x) else f"{round(x, digits):g}"


def run_rows(runs: Sequence[RunUsage], fraction: float = 0.1) -> list[dict[str, object]]:
    """One CSV row per run: totals, ratios (all / first / last episodes) and per-option counts.

    Per-option columns are ``<option name>_calls`` and ``<option name>_steps`` for the union of
    the runs' option names (empty where a run has no such option).
    """
    names = list(dict.fromkeys(n for r in runs for n in r.option_names))
    rows = []
    for r in runs:
        t = totals([r], "all", fraction)
        first, last = totals([r], "first", fraction), totals([r], "last", fraction)
        row: dict[str, object] = {
            "method": r.method,
            "seed": r.seed,
            "task": r.task,
            "options": len(r.option_names),
            "episodes": r.episodes,
            "steps": t.steps,
            "decisions": t.decisions,
            "option_calls": t.option_calls,
            "option_steps": t.option_steps,
            "option_fraction": _number(t.option_fraction),
            "option_fraction_first": _number(first.option_fraction),
            "option_fraction_last": _number(last.option_fraction),
            "option_step_share": _number(t.option_step_share),
            "mean_option_length": _number(t.mean_option_length),
        }
        if t.frames is not None:  # only learners that count frames add these columns
            row["frames"] = t.frames
            row["option_frames"] = t.option_frames
            row["option_frame_share"] = _number(t.option_frame_share)
        counts = zip(t.option_calls_each, t.option_steps_each, strict=True)
        own = dict(zip(r.option_names, counts, strict=True))
        for name in names:
            calls, steps = own.get(name, ("", ""))
            row[f"{name}_calls"], row[f"{name}_steps"] = calls, steps
        rows.append(row)
    return rows


def episode_rows(runs: Sequence[RunUsage]) -> list[dict[str, object]]:
    """One row per (run, episode): decisions, option calls, steps and steps inside options."""
    rows = []
    for r in runs:
        a = r.num_primitives
        calls, steps = np.asarray(r.calls), np.asarray(r.steps)
        for e in range(r.episodes):
            rows.append(
                {
                    "method": r.method,
                    "seed": r.seed,
                    "task": r.task,
                    "episode": e,
                    "steps": int(steps[e].sum()),
                    "decisions": int(calls[e].sum()),
                    "option_calls": int(calls[e, a:].sum()),
                    "option_steps": int(steps[e, a:].sum()),
                }
            )
    return rows


def _percent(x: float) -> str:
    return "–" if math.isnan(x) else f"{100 * x:.1f}%"


def _length(x: float) -> str:
    return "–" if math.isnan(x) else f"{x:.2f}"


def _method_section(method: str, runs: Sequence[RunUsage], fraction: float) -> list[str]:
    parts = {p: totals(runs, p, fraction) for p in ("all", "first", "last")}
    episodes = sorted({r.episodes for r in runs})
    seeds = sorted({r.seed for r in runs})
    n_edge = ", ".join(str(final_episode_count(e, fraction)) for e in episodes)
    counts = ", ".join(map(str, episodes))
    if len(episodes) > 3:  # a frame budget: every run ends its own number of episodes
        n_edge = f"{100 * fraction:g}% of the"
        counts = f"{episodes[0]}–{episodes[-1]}"
    lines = [
        f"## {method}",
        "",
        f"{len(runs)} runs ({len(seeds)} seeds × {len({r.task for r in runs})} test tasks), "
        f"{counts} episodes each; options per seed: "
        + ", ".join(f"{len(_seed_runs(runs, s)[0].option_names)}" for s in seeds)
        + ".",
        "",
        f"| | all episodes | first {n_edge} episodes | last {n_edge} episodes |",
        "|---|---:|---:|---:|",
        "| decisions per episode | "
        + " | ".join(f"{parts[p].decisions_per_episode:.1f}" for p in parts)
        + " |",
        "| decisions that chose an option | "
        + " | ".join(_percent(parts[p].option_fraction) for p in parts)
        + " |",
        "| primitive steps inside options | "
        + " | ".join(_percent(parts[p].option_step_share) for p in parts)
        + " |",
        "| mean option length (steps) | "
        + " | ".join(_length(parts[p].mean_option_length) for p in parts)
        + " |",
    ]
    if parts["all"].frames is not None:
        lines.append(
            "| emulator frames inside options | "
            + " | ".join(_percent(parts[p].option_frame_share) for p in parts)
            + " |"
        )
    per_run = np.array([totals([r]).option_fraction for r in runs], dtype=np.float64)
    per_run = per_run[~np.isnan(per_run)]
    if per_run.size > 1:
        lines += [
            "",
            f"Per run, the fraction of decisions that chose an option ranges "
            f"{_percent(float(per_run.min()))}–{_percent(float(per_run.max()))} "
            f"(mean {_percent(float(per_run.mean()))}).",
        ]
    lines += [
        "",
        "Per option, over all episodes of a seed's test tasks (each seed has its own option set):",
        "",
        "| seed | option | share of option calls | calls per episode | mean length (steps) |",
        "|---:|---|---:|---:|---:|",
    ]
    for s in seeds:
        mine = _seed_runs(runs, s)
        t = totals(mine)
        if not mine[0].option_names:
            lines.append(f"| {s} | (no options) | – | – | – |")
        for i, name in enumerate(mine[0].option_names):
            per_episode = t.option_calls_each[i] / t.episodes if t.episodes else math.nan
            lines.append(
                f"| {s} | {name} | {_percent(t.option_share(i))} | {per_episode:.2f} | "
                f"{_length(t.option_length(i))} |"
            )
    return lines + [""]


def _seed_runs(runs: Sequence[RunUsage], seed: int) -> list[RunUsage]:
    return [r for r in runs if r.seed == seed]


def usage_markdown(
    runs: Sequence[RunUsage],
    fraction: float = 0.1,
    title: str = "",
    notes: Sequence[str] = (),
    learner: str = "SMDP Q-learning over primitives + options",
) -> str:
    """The Markdown summary: per method, option fraction (all / first / last), length, per option.

    Raises:
      ValueError: a seed's runs of one method have different option sets (names).
    """
    methods = list(dict.fromkeys(r.method for r in runs))
    for method in methods:
        mine = [r for r in runs if r.method == method]
        for s in {r.seed for r in mine}:
            if len({(r.num_primitives, r.names) for r in _seed_runs(mine, s)}) != 1:
                raise ValueError(f"{method}, seed {s}: its test tasks used different option sets")
    lines = [
        f"# Option usage{': ' + title if title else ''}",
        "",
        f"How the test-time learner ({learner}) used each method's "
        "options. A *decision* is one choice of the policy over options (a primitive action or an "
        "option); an option runs for several primitive steps until it terminates. Numbers pooled "
        "over runs are ratios of sums. First / last: each run's first and last "
        f"{100 * fraction:g}% of its episodes.",
        "",
    ]
    lines += [f"- {note}" for note in notes]
    if notes:
        lines.append("")
    for method in methods:
        lines += _method_section(method, [r for r in runs if r.method == method], fraction)
    return "\n".join(lines)


def _write_csv(path: Path, rows: Sequence[dict[str, object]]) -> Path:
    fields = list(dict.fromkeys(k for row in rows for k in row))
    path = output_file(path, "an option-usage table")  # never written through a symlink
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=fields, restval="")
        writer.writeheader()
        writer.writerows(rows)
    return path


def write_usage_files(
    runs: Sequence[RunUsage],
    directory: str | Path,
    fraction: float = 0.1,
    title: str = "",
    notes: Sequence[str] = (),
    per_episode: bool = False,
    learner: str = "SMDP Q-learning over primitives + options",
) -> list[Path]:
    """Write ``option_usage.csv`` and ``option_usage.md`` (and the per-episode CSV if asked)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    markdown = usage_markdown(runs, fraction, title, notes, learner)  # checks before any write
    written = [_write_csv(directory / CSV_NAME, run_rows(runs, fraction))]
    path = output_file(directory / MARKDOWN_NAME, "the option-usage page")
    path.write_text(markdown, encoding="utf-8")
    written.append(path)
    if per_episode:
        written.append(_write_csv(directory / EPISODES_CSV_NAME, episode_rows(runs)))
    return written
