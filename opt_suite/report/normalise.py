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

A task where random and expert earn the same (within :data:`EQUAL_TOLERANCE` relative) has no
scale: it is left out of every normalised aggregate, and the leaderboard names it in a caveat,
never a division by zero or an infinite score.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from opt_suite.report.episodes import ReportDataError
from opt_suite.report.metrics import seed_task_key

__all__ = [
    "EQUAL_TOLERANCE",
    "NormalisedScores",
    "References",
    "degenerate_tasks",
    "normalisation_caveat",
    "normalise_metric",
    "normalised_scores",
    "reference_thresholds",
]

#: Random and expert returns closer than this (relative to the larger of 1 and their magnitudes)
#: count as equal: the task has no scale to normalise by.
EQUAL_TOLERANCE = 1e-9


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


def _equal(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    scale = np.maximum(1.0, np.maximum(np.abs(a), np.abs(b)))
    return np.abs(a - b) <= EQUAL_TOLERANCE * scale


def degenerate_pairs(references: References) -> set[tuple[int, Any]]:
    """The (seed, task) pairs where random and expert earn the same (no scale there)."""
    equal = _equal(references.random, references.expert)
    return {
        (int(s), t)
        for i, s in enumerate(references.seeds)
        for j, t in enumerate(references.tasks)
        if equal[i, j]
    }


def degenerate_tasks(references: References) -> list[Any]:
    """Tasks where random and expert earn the same on some seed (no scale to normalise by)."""
    equal = _equal(references.random, references.expert)
    return [t for j, t in enumerate(references.tasks) if np.any(equal[:, j])]


def normalise_metric(
    metric: str, values: np.ndarray, random: np.ndarray, expert: np.ndarray
) -> np.ndarray:
    """``values`` (``[seeds, tasks]``) of a return metric on the normalised scale.

    The caller leaves out degenerate tasks first (:func:`degenerate_tasks`); an equal pair here is
    an error, not an infinity.
    """
    if np.any(_equal(random, expert)):
        raise ReportDataError("random and expert returns are equal: the score has no scale")
    span = expert - random
    if metric == "improvement":  # a difference of returns: the offset cancels
        return values / span
    return (values - random) / span


@dataclasses.dataclass(frozen=True, eq=False)
class NormalisedScores:
    """A method entry's normalised return metrics on the tasks that have a scale.

    ``values[metric]`` is ``[seeds, len(tasks)]``; ``tasks`` leaves out the degenerate ones.
    """

    tasks: tuple[Any, ...]
    values: Mapping[str, np.ndarray]


def normalised_scores(
    seeds: Sequence[int],
    tasks: Sequence[Any],
    values: Mapping[str, np.ndarray],
    references: References,
    metrics: Sequence[str],
) -> NormalisedScores | None:
    """The normalised ``metrics`` of one method entry's runs; None when no task has a scale."""
    random, expert = references.aligned(seeds, tasks)
    keep = ~np.any(_equal(random, expert), axis=0)
    if not np.any(keep):
        return None
    kept = tuple(t for t, k in zip(tasks, keep, strict=True) if k)
    return NormalisedScores(
        kept,
        {
            k: normalise_metric(k, values[k][:, keep], random[:, keep], expert[:, keep])
            for k in metrics
        },
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


def normalisation_caveat(references: References) -> str | None:
    """The leaderboard warning naming tasks without a scale, or None."""
    bad = degenerate_tasks(references)
    if not bad:
        return None
    listed = ", ".join(str(t) for t in bad)
    return (
        f"test task{'s' if len(bad) > 1 else ''} {listed}: the uniform-random policy and the"
        f" {references.expert_label} earn the same return, so the normalised score is undefined"
        " there; the normalised aggregates leave"
        f" {'them' if len(bad) > 1 else 'it'} out ({len(bad)} of {len(references.tasks)} tasks)"
    )
