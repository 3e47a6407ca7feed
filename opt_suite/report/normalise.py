"""Per-task normalised scores: 0 = a uniform-random policy's return, 1 = the expert's.

Test tasks' rewards can differ by an order of magnitude (MinAtar's variations: 0.65 to 10), and an
IQM of raw returns pooled over tasks then mostly reflects the high-scale tasks. Dividing each run's
score by its task's range puts every task on one scale:

    normalised = (score - random) / (expert - random)

where ``random`` and ``expert`` are the mean returns of a uniform-random policy and of the expert
on that (seed, test task), both measured by the suite (:class:`References`). A return metric
(``auc``, ``final_return``, ``jump_start``) is normalised this way; ``improvement`` is a difference
of returns, so it is divided by the range without the offset. ``episodes_to_threshold`` is not a
return and is never normalised.

**The rule.** A (seed, test task) pair has a scale only when the expert earns *more* than the
uniform-random policy by more than :data:`REFERENCE_MARGIN` of the larger of 1 and the two
returns' magnitudes: ``expert - random > REFERENCE_MARGIN * max(1, |random|, |expert|)``. Where
the expert earns the same, less, or barely more, the score is undefined: dividing by a negative
range would rank a better run *lower*, and by a tiny one would blow a return difference up a
hundredfold. Undefined pairs are never divided by: the leaderboard names every one of them in a
caveat, and the normalised aggregates, which need a full seeds x tasks matrix, leave out every
test task with an undefined pair on some seed and say how many (seed, task) pairs remain
("n = 25 of 40 pairs"). When no task is left, there is no normalised aggregate at all, and one
caveat says so: never a verdict computed from nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from opt_suite.report.episodes import ReportDataError
from opt_suite.report.metrics import seed_task_key

__all__ = [
    "REFERENCE_MARGIN",
    "NormalisedScores",
    "References",
    "normalisation_caveat",
    "normalise_metric",
    "normalised_scores",
    "pairs_remaining",
    "reference_thresholds",
    "undefined",
    "undefined_pairs",
    "undefined_tasks",
]

#: The expert must beat the uniform-random policy by more than this fraction of the larger of 1
#: and the two returns' magnitudes for a (seed, task) pair to have a scale. 1%: a smaller range
#: would multiply return differences by more than 100 on the normalised scale.
REFERENCE_MARGIN = 0.01


@dataclasses.dataclass(frozen=True, eq=False)
class References:
    """Reference returns of every (seed, test task): ``random[s, t]`` and ``expert[s, t]``.

    Attributes:
        seeds: seed indices (rows).
        tasks: test task labels (columns), as the learning curves name them.
        random: mean return of a uniform-random policy, ``[seeds, tasks]``.
        expert: mean return of the expert, ``[seeds, tasks]``.
        expert_label: what the expert is, as the tables name it (e.g. "optimal expert").
    """

    seeds: tuple[int, ...]
    tasks: tuple[Any, ...]
    random: np.ndarray
    expert: np.ndarray
    expert_label: str = "expert"

    def __post_init__(self) -> None:
        shape = (len(self.seeds), len(self.tasks))
        for name in ("random", "expert"):
            values = np.asarray(getattr(self, name), dtype=np.float64)
            if values.shape != shape:
                raise ReportDataError(
                    f"reference returns {name!r} have shape {values.shape}, expected {shape}"
                    " (seeds x tasks)"
                )
            if not np.all(np.isfinite(values)):
                raise ReportDataError(f"reference returns {name!r} contain NaN or infinity")
            object.__setattr__(self, name, values)

    @property
    def description(self) -> str:
        """The normalisation, as the tables name it."""
        return f"0 = uniform-random policy, 1 = {self.expert_label} (per seed and test task)"

    def aligned(self, seeds: Sequence[int], tasks: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
        """(random, expert) as ``[len(seeds), len(tasks)]`` in the given order.

        Raises:
            ReportDataError: a seed or task without reference returns.
        """
        s_pos = {int(s): i for i, s in enumerate(self.seeds)}
        t_pos = {str(t): i for i, t in enumerate(self.tasks)}
        missing = [f"seed {s}" for s in seeds if int(s) not in s_pos]
        missing += [f"task {t}" for t in tasks if str(t) not in t_pos]
        if missing:
            raise ReportDataError(f"no reference returns for {', '.join(missing)}")
        rows = [s_pos[int(s)] for s in seeds]
        cols = [t_pos[str(t)] for t in tasks]
        return self.random[np.ix_(rows, cols)], self.expert[np.ix_(rows, cols)]


def undefined(random: np.ndarray, expert: np.ndarray) -> np.ndarray:
    """Where the normalised score is undefined: the expert does not beat random by the margin."""
    scale = np.maximum(1.0, np.maximum(np.abs(random), np.abs(expert)))
    return expert - random <= REFERENCE_MARGIN * scale


def undefined_pairs(references: References) -> list[tuple[int, Any]]:
    """The (seed, task) pairs without a scale (:func:`undefined`), seed by seed."""
    bad = undefined(references.random, references.expert)
    return [
        (int(s), t)
        for i, s in enumerate(references.seeds)
        for j, t in enumerate(references.tasks)
        if bad[i, j]
    ]


def undefined_tasks(references: References) -> list[Any]:
    """Tasks with an undefined pair on some seed: the normalised aggregates leave them out."""
    bad = undefined(references.random, references.expert)
    return [t for j, t in enumerate(references.tasks) if np.any(bad[:, j])]


def normalise_metric(
    metric: str, values: np.ndarray, random: np.ndarray, expert: np.ndarray
) -> np.ndarray:
    """``values`` (``[seeds, tasks]``) of a return metric on the normalised scale.

    The caller leaves out undefined tasks first (:func:`undefined_tasks`); an undefined pair here
    is an error, not an infinity or a score with its sign flipped.
    """
    if np.any(undefined(random, expert)):
        raise ReportDataError(
            "the expert does not beat the uniform-random policy by the margin"
            f" ({REFERENCE_MARGIN:g}) on some pair: the score has no scale there"
        )
    span = expert - random
    if metric == "improvement":  # a difference of returns: the offset cancels
        return values / span
    return (values - random) / span


@dataclasses.dataclass(frozen=True, eq=False)
class NormalisedScores:
    """A method entry's normalised return metrics on the tasks that have a scale.

    ``values[metric]`` is ``[seeds, len(tasks)]``; ``tasks`` leaves out the undefined ones.
    ``pairs`` of ``total_pairs`` (seed, task) pairs remain in them.
    """

    tasks: tuple[Any, ...]
    values: Mapping[str, np.ndarray]
    pairs: int
    total_pairs: int


def normalised_scores(
    seeds: Sequence[int],
    tasks: Sequence[Any],
    values: Mapping[str, np.ndarray],
    references: References,
    metrics: Sequence[str],
) -> NormalisedScores | None:
    """The normalised ``metrics`` of one method entry's runs; None when no task has a scale."""
    random, expert = references.aligned(seeds, tasks)
    keep = ~np.any(undefined(random, expert), axis=0)
    if not np.any(keep):
        return None
    kept = tuple(t for t, k in zip(tasks, keep, strict=True) if k)
    return NormalisedScores(
        kept,
        {
            k: normalise_metric(k, values[k][:, keep], random[:, keep], expert[:, keep])
            for k in metrics
        },
        pairs=len(seeds) * len(kept),
        total_pairs=len(seeds) * len(tasks),
    )


def reference_thresholds(
    references: References, tasks: Sequence[Any], fraction: float, per_seed: bool = False
) -> dict[Any, float]:
    """Task -> ``random + fraction * (expert - random)``, means over seeds.

    The threshold of ``episodes_to_threshold`` that no compared method entry sets: ``fraction`` of
    the way from the random policy's return to the expert's. ``per_seed`` (test tasks drawn per
    seed, so a task index names a different task on every seed): one threshold per (seed, task),
    keyed by :func:`~opt_suite.report.metrics.seed_task_key`, from that seed's own references.
    """
    random, expert = references.aligned(references.seeds, tasks)
    levels = random + fraction * (expert - random)
    if per_seed:
        return {
            seed_task_key(seed, t): float(levels[i, j])
            for i, seed in enumerate(references.seeds)
            for j, t in enumerate(tasks)
        }
    return {t: float(v) for t, v in zip(tasks, np.mean(levels, axis=0), strict=True)}


def pairs_remaining(references: References) -> tuple[int, int]:
    """(pairs, of pairs): the (seed, task) pairs the normalised aggregates keep, of all."""
    kept = len(references.tasks) - len(undefined_tasks(references))
    return len(references.seeds) * kept, len(references.seeds) * len(references.tasks)


def normalisation_caveat(references: References) -> str | None:
    """The leaderboard warning naming every pair without a scale, or None when there is none."""
    bad = undefined_pairs(references)
    if not bad:
        return None
    listed = ", ".join(f"seed {s} task {t}" for s, t in bad)
    pairs, total = pairs_remaining(references)
    rule = (
        f"the {references.expert_label} does not beat the uniform-random policy by more than"
        f" {REFERENCE_MARGIN:g} x max(1, |returns|), so the normalised score is undefined on"
        f" {len(bad)} of {total} (seed, task) pairs ({listed})"
    )
    if pairs == 0:
        return (
            f"NO NORMALISED SCORES: {rule}; every test task has such a pair, so no normalised"
            " aggregate is computed (n = 0 of"
            f" {total} pairs): compare the raw returns, and see the reference returns"
        )
    dropped = undefined_tasks(references)
    return (
        f"{rule}; the normalised aggregates leave out test"
        f" task{'s' if len(dropped) > 1 else ''} {', '.join(str(t) for t in dropped)}"
        f" (n = {pairs} of {total} pairs remain)"
    )
