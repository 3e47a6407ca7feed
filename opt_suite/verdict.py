"""The one verdict rule: is method X better than, equivalent to, worse than Y, or inconclusive?

Every comparison the suite prints (the leaderboard against its baseline, a results page's table,
``collect.py``) goes through :func:`compare`, so that one page never reads "ties" where another
reads "beats" from the same runs. The rule is described for readers in
``docs/results-and-gate.md#verdicts``.

* **The unit is the seed.** Each seed has its own demonstrations and option set, reused on every
  one of its test tasks: a study with 5 seeds and 8 test tasks replicates the thing under test 5
  times, not 40. The interval therefore resamples seeds first (:func:`opt_suite.stats.
  seed_bootstrap`): then, when every seed drew its own test tasks, the tasks within each drawn
  seed ("seeds→tasks", hierarchical); when the seeds share them, one draw of tasks for all seeds
  ("seeds×tasks", crossed).
* **The effect**, paired by (seed, task) (runs of one spec share their random numbers): on the
  normalised scale (0 = uniform-random policy, 1 = the expert) where the run measured references,
  the difference of the IQMs, IQM(X) − IQM(Y); otherwise the paired P(X > Y), the share of
  (seed, task) pairs X's run wins (ties count half).
* **Four outcomes** from where the interval lies: *better* / *worse* when it excludes no difference
  (0, or P = 0.5) on one side; *equivalent* when it lies within the equivalence margin declared in
  the spec before the run (``report.equivalence_normalised``, ``report.equivalence_p``);
  *inconclusive* otherwise, printed with the smallest difference the design could have detected
  (the interval's half-width: a true difference that large would just have put the interval clear
  of no difference).
* **Family-wise control**: the comparisons of one page or report share one 5% error rate by
  Bonferroni: each interval is at level ``1 − 0.05 / comparisons``, and the printed label says so.
* **Too few seeds**: with fewer than :data:`MIN_SEEDS` seeds a bootstrap over seeds has almost
  nothing to resample; the outcome is *inconclusive* with a caveat, whatever the interval says.
"""

from __future__ import annotations

import dataclasses
from typing import Literal

import numpy as np

from opt_suite import stats

__all__ = [
    "DEFAULT_MARGIN_NORMALISED",
    "DEFAULT_MARGIN_P",
    "FAMILY_ALPHA",
    "MIN_SEEDS",
    "OUTCOMES",
    "Margins",
    "Verdict",
    "compare",
    "familywise_statement",
    "interval_confidence",
]

Outcome = Literal["better", "equivalent", "worse", "inconclusive"]
#: The outcomes in the order a summary lists them.
OUTCOMES: tuple[Outcome, ...] = ("better", "equivalent", "worse", "inconclusive")
Scale = Literal["normalised", "P"]

#: The family-wise error rate shared by the comparisons of one page or report.
FAMILY_ALPHA = 0.05
#: Fewer seeds than this give no verdict: resampling 2 seeds yields 3 distinct seed sets.
MIN_SEEDS = 3
#: The margins a spec gets unless it declares its own (``report.equivalence_normalised`` /
#: ``report.equivalence_p``): a tenth of the random-to-expert range; P within [0.4, 0.6].
DEFAULT_MARGIN_NORMALISED = 0.1
DEFAULT_MARGIN_P = 0.1


@dataclasses.dataclass(frozen=True)
class Margins:
    """The equivalence margins a spec declares (``report.equivalence_normalised`` / ``_p``)."""

    normalised: float = DEFAULT_MARGIN_NORMALISED
    p: float = DEFAULT_MARGIN_P

    def on(self, normalised: bool) -> float:
        """The margin of a verdict on the normalised scale, or on the paired P."""
        return self.normalised if normalised else self.p


_NULL: dict[str, float] = {"normalised": 0.0, "P": 0.5}
_EFFECT_NAME: dict[str, str] = {"normalised": "IQM difference (normalised)", "P": "paired P"}


@dataclasses.dataclass(frozen=True)
class Verdict:
    """X against Y: the outcome, the effect with its interval, and what the interval means."""

    outcome: Outcome
    scale: Scale
    effect: float  # IQM(X) - IQM(Y) on the normalised scale, or the paired P(X > Y)
    ci_low: float
    ci_high: float
    resampled: str  # "seeds→tasks" (hierarchical) or "seeds×tasks" (crossed)
    confidence: float  # each interval's level, Bonferroni-adjusted over ``comparisons``
    comparisons: int
    margin: float  # equivalence: |effect - null| <= margin
    seeds: int
    #: for an inconclusive outcome, the smallest difference the design could have detected
    detectable: float | None = None
    caveat: str = ""  # non-empty: why there is no verdict (too few seeds)

    @property
    def null(self) -> float:
        """No difference on this verdict's scale: 0 (normalised) or P = 0.5."""
        return _NULL[self.scale]

    def interval_label(self) -> str:
        """What the interval is, e.g. ``99.4% CI [seeds→tasks]``."""
        return f"{_percent(self.confidence)} CI [{self.resampled}]"

    def margin_text(self) -> str:
        """The margin as declared: ``±0.10 normalised`` or ``P in [0.40, 0.60]``."""
        if self.scale == "P":
            return f"P in [{0.5 - self.margin:.2f}, {0.5 + self.margin:.2f}]"
        return f"±{self.margin:.2f} normalised"

    def text(self) -> str:
        """One cell: outcome, effect, interval, margin (and what could have been detected)."""
        out = (
            f"{self.outcome}: {_EFFECT_NAME[self.scale]} {self.effect:.2f}"
            f" [{self.ci_low:.2f}, {self.ci_high:.2f}] ({self.interval_label()});"
            f" margin {self.margin_text()}"
        )
        if self.detectable is not None:
            out += f"; detectable ≥ {self.detectable:.2f}"
        if self.caveat:
            out += f"; {self.caveat}"
        return out

    def as_dict(self) -> dict[str, object]:
        """JSON-ready fields, with the interval's label and the margin as printed."""
        return {
            **dataclasses.asdict(self),
            "interval": self.interval_label(),
            "margin_text": self.margin_text(),
        }


def _percent(level: float) -> str:
    text = f"{100 * level:.2f}".rstrip("0").rstrip(".")
    return f"{text}%"


def interval_confidence(comparisons: int, alpha: float = FAMILY_ALPHA) -> float:
    """Each interval's level so that ``comparisons`` intervals share ``alpha`` (Bonferroni)."""
    if comparisons < 1:
        raise ValueError(f"comparisons must be >= 1, got {comparisons}")
    return 1.0 - alpha / comparisons


def familywise_statement(comparisons: int, alpha: float = FAMILY_ALPHA) -> str:
    """The sentence a page or report prints once above its verdicts."""
    plural = "s" if comparisons != 1 else ""
    return (
        f"Family-wise control (Bonferroni): {comparisons} comparison{plural} at a"
        f" {_percent(1 - alpha)} family-wise confidence, each interval at"
        f" {_percent(interval_confidence(comparisons, alpha))}."
    )


def _outcome(low: float, high: float, null: float, margin: float) -> Outcome:
    # Significance first: an interval clear of no difference is better / worse even when it also
    # lies within the margin (the margin declares what counts as no *practical* difference; a
    # detected difference is still reported as one, with its size beside it).
    if low > null:
        return "better"
    if high < null:
        return "worse"
    if null - margin <= low and high <= null + margin:
        return "equivalent"
    return "inconclusive"


def compare(
    x: np.ndarray,
    y: np.ndarray,
    *,
    normalised: bool,
    margin: float,
    tasks_per_seed: bool,
    comparisons: int,
    reps: int,
    rng: np.random.Generator,
) -> Verdict:
    """X against Y, ``[seeds, tasks]`` each, higher better, run ``[s, t]`` paired with ``[s, t]``.

    Args:
        x: X's scores: normalised scores when ``normalised``, else any metric oriented so that
            higher is better (only the order within a pair counts).
        y: Y's scores, the same shape, seeds and tasks as ``x``.
        normalised: the effect is IQM(X) - IQM(Y) (else the paired P).
        margin: the equivalence margin on that scale (P: half-width of the band around 0.5).
        tasks_per_seed: each seed drew its own test tasks (hierarchical resampling), else the
            seeds share them (crossed).
        comparisons: the comparisons of the page or report this one belongs to (Bonferroni).
        reps: bootstrap resamples.
        rng: the only source of randomness.

    Raises:
        ValueError: shapes differ, NaN or infinite scores, a margin outside its range.
    """
    scale: Scale = "normalised" if normalised else "P"
    upper = 1.0 if normalised else 0.5
    if not 0.0 < margin <= upper:
        raise ValueError(
            f"equivalence margin on the {scale} scale must be in (0, {upper}], got {margin}"
        )
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.shape != y.shape:
        raise ValueError(f"paired runs need the same (seeds, tasks), got {x.shape} and {y.shape}")
    confidence = interval_confidence(comparisons)
    tasks_per_seed = bool(tasks_per_seed)
    if normalised:
        effect = float(stats.iqm(x) - stats.iqm(y))
        dist = stats.seed_bootstrap(
            (x, y), lambda a, b: stats.iqm(a) - stats.iqm(b), reps, rng, tasks_per_seed
        )
    else:
        wins = stats.paired_wins(x, y)
        effect = float(stats.mean(wins))
        dist = stats.seed_bootstrap((wins,), stats.mean, reps, rng, tasks_per_seed)
    low, high = stats.percentile_interval(dist, 1.0 - confidence)
    null = _NULL[scale]
    seeds = x.shape[0]
    outcome = _outcome(low, high, null, margin)
    caveat = ""
    if seeds < MIN_SEEDS:
        outcome = "inconclusive"
        caveat = (
            f"NO VERDICT: {seeds} seed{'s' if seeds != 1 else ''}, fewer than {MIN_SEEDS}; the"
            " seed is the unit of replication"
        )
    return Verdict(
        outcome=outcome,
        scale=scale,
        effect=effect,
        ci_low=low,
        ci_high=high,
        resampled="seeds→tasks" if tasks_per_seed else "seeds×tasks",
        confidence=confidence,
        comparisons=comparisons,
        margin=margin,
        seeds=seeds,
        detectable=(high - low) / 2 if outcome == "inconclusive" else None,
        caveat=caveat,
    )
