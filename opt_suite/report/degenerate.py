"""Options that are not options: a copy of a primitive action, or one the learner never chose.

Algorithm 1 can keep an option that terminates after (almost) every step and takes (almost)
always one action: it is primitive ``a`` under another name, it adds no temporal abstraction,
and a table that counts it as "an option kept" overstates what was learned (MinAtar seed 0's
second option, issue 25). An option the test-time learner never chose cannot have helped either.
Both are flagged, with the thresholds in the message:

- **a copy of primitive a**: on the states the demonstrations visit (weighted by their visits),
  the mean termination probability β ≥ :data:`COPY_TERMINATION` and the option's action
  distribution pooled over those states puts ≥ :data:`COPY_ACTION` on one action ``a``;
- **never chosen**: zero calls over every recorded evaluation episode of that seed (all test
  tasks), from the counts the learner recorded (``option_usage.npz``);
- **one step per call** (network option sets, whose actions the report cannot evaluate without
  TensorFlow): over at least :data:`MIN_CALLS` recorded calls, a mean run of at most
  :data:`ONE_STEP_LENGTH` primitive steps — it terminates after (almost) every step, the first
  half of "a copy of a primitive"; its action distribution is not checked.

The rules are pure functions; :func:`degenerate_options` reads a run's option sets and recorded
counts through its store, for ``opt-suite diagnose`` and for the leaderboard, where each line is a
caveat (a report section, :mod:`opt_suite.report.section`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from opt_suite.report.episodes import LearningCurves
from opt_suite.report.section import CaveatPlace, Column, MarkdownPlace, StoredRun
from opt_suite.stages import Stage

__all__ = [
    "SECTION",
    "DegenerateOptionsSection",
    "degenerate_options",
    "COPY_TERMINATION",
    "COPY_ACTION",
    "PrimitiveCopy",
    "copies_of_primitives",
    "never_chosen",
    "one_step_options",
    "ONE_STEP_LENGTH",
    "MIN_CALLS",
    "state_visits",
    "degenerate_messages",
]

COPY_TERMINATION = 0.95  # mean β on the demonstrated states: it ends after (almost) every step
COPY_ACTION = 0.95  # share of its action probability on one action
ONE_STEP_LENGTH = 1.05  # mean steps per call: β ≥ 0.95 a step gives about 1.05
MIN_CALLS = 20  # calls needed before a mean length says anything


@dataclasses.dataclass(frozen=True)
class PrimitiveCopy:
    """Option ``option`` acts as primitive ``action``: its mean β and its share on that action."""

    option: int
    action: int
    termination: float
    share: float


def state_visits(observations: Sequence[np.ndarray], num_states: int) -> np.ndarray:
    """How often each state index occurs among the states where an action was taken.

    ``observations``: per demonstration, its state indices s_0..s_T (s_T takes no action).
    """
    visits = np.zeros(num_states, np.float64)
    for states in observations:
        np.add.at(visits, np.asarray(states, np.int64)[:-1], 1.0)
    return visits


def copies_of_primitives(
    mu: np.ndarray, beta: np.ndarray, visits: np.ndarray
) -> list[PrimitiveCopy]:
    """Options of a tabular set that act as one primitive and end after (almost) every step.

    Args:
      mu: float [m, S, A], each option's action probabilities per state.
      beta: float [m, S], each option's termination probability per state.
      visits: float [S] >= 0, how much each state counts (the demonstrations' visits); all
        states count the same when it sums to 0.

    Returns:
      One :class:`PrimitiveCopy` per such option, in option order.
    """
    mu, beta = np.asarray(mu, np.float64), np.asarray(beta, np.float64)
    assert mu.ndim == 3 and beta.shape == mu.shape[:2], (mu.shape, beta.shape)
    weights = np.asarray(visits, np.float64)
    assert weights.shape == (mu.shape[1],) and np.all(weights >= 0), weights.shape
    total = weights.sum()
    weights = weights / total if total > 0 else np.full(mu.shape[1], 1.0 / mu.shape[1])
    termination = beta @ weights  # [m]
    pooled = np.einsum("s,msa->ma", weights, mu)  # [m, A]
    action = pooled.argmax(axis=1)
    share = pooled[np.arange(len(action)), action]
    return [
        PrimitiveCopy(o, int(action[o]), float(termination[o]), float(share[o]))
        for o in range(mu.shape[0])
        if termination[o] >= COPY_TERMINATION and share[o] >= COPY_ACTION
    ]


def never_chosen(calls: np.ndarray, num_primitives: int) -> list[int]:
    """Indices (0-based, among the options) of the options with no call in ``calls``.

    ``calls``: int [..., A + m], decisions per choice, primitives first (any leading axes:
    episodes, tasks), summed over everything but the last axis.
    """
    totals = np.asarray(calls).reshape(-1, np.shape(calls)[-1]).sum(axis=0)
    return [int(o) for o in np.flatnonzero(totals[num_primitives:] == 0)]


def one_step_options(
    calls: np.ndarray, steps: np.ndarray, num_primitives: int
) -> list[tuple[int, float, int]]:
    """(option index, mean steps per call, calls) of options that run one step per call.

    ``calls``, ``steps``: int [..., A + m], as :func:`never_chosen`'s.
    """
    width = np.shape(calls)[-1]
    total_calls = np.asarray(calls).reshape(-1, width).sum(axis=0)[num_primitives:]
    total_steps = np.asarray(steps).reshape(-1, width).sum(axis=0)[num_primitives:]
    found = []
    for o, (c, s) in enumerate(zip(total_calls.tolist(), total_steps.tolist(), strict=True)):
        if c >= MIN_CALLS and s / c <= ONE_STEP_LENGTH:
            found.append((o, s / c, int(c)))
    return found


def degenerate_messages(
    where: str,
    names: Sequence[str],
    copies: Sequence[PrimitiveCopy],
    unused: Sequence[int],
    episodes: int,
    one_step: Sequence[tuple[int, float, int]] = (),
) -> list[str]:
    """One line per degenerate option of one option set (``where``: "offline, seed 0")."""
    lines = [
        f"{where}: option {names[c.option]!r} is a copy of primitive {c.action}: on the "
        f"demonstrated states it terminates with mean β = {c.termination:.2f} (≥ "
        f"{COPY_TERMINATION}) and puts {c.share:.0%} of its choices on action {c.action} (≥ "
        f"{COPY_ACTION:.0%})"
        for c in copies
    ]
    lines += [
        f"{where}: option {names[o]!r} was never chosen by the test-time learner in {episodes} "
        "recorded evaluation episodes"
        for o in unused
    ]
    lines += [
        f"{where}: option {names[o]!r} runs {length:.2f} primitive steps per call over {calls}"
        f" calls (≤ {ONE_STEP_LENGTH} over ≥ {MIN_CALLS}): it terminates after (almost) every"
        " step, like a primitive (its actions are not checked: a network option set)"
        for o, length, calls in one_step
    ]
    return lines


def degenerate_options(
    store: Any, cells: Any, demos_by_seed: Mapping[int, Any], methods: Any = None
) -> list[str]:
    """One line per degenerate option of the viewed run.

    Copies of primitives are found in tabular option sets (on the seed's demonstrated states, or
    every state without demonstrations); options never chosen, wherever every done evaluation
    cell of that (method, seed) recorded its counts. Network option sets are not evaluated here
    (that would load TensorFlow): only their usage is. ``methods``: only these entries (None:
    all); only the seeds of ``cells`` are read.
    """
    from opt_suite.options.base import load_option_set, option_set_kind

    lines: list[str] = []
    for cell in cells:
        if cell.kind != Stage.DISCOVERY or cell.status != "done" or cell.method is None:
            continue
        if methods is not None and cell.method not in methods:
            continue
        path = store.option_set_file(cell.method, cell.seed)
        if path is None:
            continue
        copies: list[Any] = []
        if option_set_kind(path) == "tabular":
            options: Any = load_option_set(path)  # a TabularOptionSet: mu [m, S, A], beta [m, S]
            names = tuple(options.names)
            if not len(names):
                continue
            demos = demos_by_seed.get(cell.seed) or []
            visits = state_visits([d.observations for d in demos], options.mu.shape[1])
            copies = copies_of_primitives(options.mu, options.beta, visits)
        else:
            names = ()
        usage = _recorded_usage(store, cells, cell)
        unused, one_step, episodes = [], [], 0
        if usage is not None:
            calls, steps, num_primitives, usage_names = usage
            episodes = calls.shape[0]
            unused = never_chosen(calls, num_primitives)
            if not names:  # a network option set: its actions are not evaluated here
                one_step = one_step_options(calls, steps, num_primitives)
            names = names or usage_names
        if names:
            where = f"{cell.method}, seed {cell.seed}"
            lines += degenerate_messages(where, names, copies, unused, episodes, one_step)
    return lines


def _recorded_usage(store: Any, cells: Any, discovery: Any) -> tuple[Any, Any, int, tuple] | None:
    """The recorded option counts of every evaluation of a discovery's method and seed.

    Returns (calls [episodes, A + m], steps [same], A, option names), or None unless every such
    evaluation cell is done and recorded its counts.
    """
    from opt_suite.report.usage_replay import recorded_counts

    evaluations = [
        c
        for c in cells
        if c.kind == Stage.EVALUATION and (c.method, c.seed) == (discovery.method, discovery.seed)
    ]
    found = [recorded_counts(store, c.cell_id) if c.status == "done" else None
             for c in evaluations]  # fmt: skip
    if not found or any(u is None for u in found):
        return None
    usages = [u for u in found if u is not None]
    first = usages[0]
    calls = np.concatenate([np.asarray(u.calls) for u in usages])
    steps = np.concatenate([np.asarray(u.steps) for u in usages])
    return calls, steps, first.num_primitives, first.names[first.num_primitives :]


@dataclasses.dataclass(frozen=True)
class DegenerateOptionsSection:
    """Each degenerate option of the run as a caveat of the leaderboard."""

    key: str = "degenerate_options"
    # A kept option that is a primitive under another name, or never used, is no option: said
    # with what the methods produced, after the statistics' caveats.
    caveat_place: CaveatPlace = "outputs"
    markdown_place: MarkdownPlace = "after"

    def collect(
        self, cells: Sequence[Any], methods: Sequence[str], run: StoredRun
    ) -> tuple[str, ...]:
        """:func:`degenerate_options` of every done discovery cell of the run.

        Every one, not only those of ``methods``: an entry whose evaluations all failed is left
        out of the table, but the options it kept were still learned (and the leaderboard always
        said so).
        """
        return tuple(degenerate_options(run.store, cells, run.demonstrations()))

    def column(self, data: tuple[str, ...]) -> Column | None:
        """None: the lines are caveats."""
        return None

    def markdown(self, data: tuple[str, ...], curves: Mapping[str, LearningCurves]) -> str:
        """None: the lines are caveats."""
        return ""

    def json(self, data: tuple[str, ...]) -> dict[str, Any]:
        """None: the lines are in ``warnings``."""
        return {}

    def caveats(self, data: tuple[str, ...]) -> tuple[str, ...]:
        """One "degenerate option: ..." warning per line."""
        return tuple(f"degenerate option: {line}" for line in data)


SECTION = DegenerateOptionsSection()
