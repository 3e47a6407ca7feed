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

The functions are pure: the store is read by :mod:`opt_suite.report.source` and
``opt-suite diagnose``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

__all__ = [
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
