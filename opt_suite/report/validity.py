"""The report's validity check: can this family tell useful options from one cloned option?

A family where the test tasks share the demonstrators' policy is one where imitating the
demonstrations is predicted to win, and then "the learned options tie the cloned option" says
nothing about temporal abstraction (issue 35). A spec that declares positive controls -- options
known to be useful on its tasks, e.g. four rooms' hallway options (``report.positive_controls``)
-- and the cloned-option comparator (``report.clone``, e.g. ``bc-option-never``) gets each control
judged against the clone on ``auc`` by the one verdict rule (:func:`opt_suite.report.verdicts.
entry_verdict`). Where no control is *better*, the family cannot discriminate: the leaderboard says
so loudly, as a warning above everything and at the top of its verdicts (and in
``leaderboard.json``), so that no verdict of the report is read as evidence either way.

The check's verdicts share the report's Bonferroni family with its verdicts against the baseline
(the caller counts them in ``Design.comparisons``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from opt_suite.report.metrics import MethodMetrics
from opt_suite.report.verdicts import Design, entry_verdict
from opt_suite.verdict import Verdict

__all__ = ["METRIC", "Validity", "check_validity", "validity_pairs"]

#: The metric the check judges on: the leaderboard's primary one, as its verdicts.
METRIC = "auc"


@dataclasses.dataclass(frozen=True)
class Validity:
    """Each positive control against the cloned option, and what that says about the family.

    Attributes:
        clone: the cloned-option entry (``report.clone``).
        controls: the positive-control entries (``report.positive_controls``), in spec order.
        verdicts: control -> its verdict against the clone (controls with paired runs only).
        missing: why a control could not be judged (no runs, other seeds or tasks), one line each.
    """

    clone: str
    controls: tuple[str, ...]
    verdicts: Mapping[str, Verdict]
    missing: tuple[str, ...] = ()

    @property
    def discriminates(self) -> bool:
        """Some positive control is better than the clone: the family can tell them apart."""
        return any(v.outcome == "better" for v in self.verdicts.values())

    def caveat(self) -> str | None:
        """The loud sentence when no control beats the clone (None when one does)."""
        if self.discriminates:
            return None
        found = [f"{name} {v.outcome}" for name, v in self.verdicts.items()]
        found += list(self.missing)
        return (
            f"THIS FAMILY CANNOT DISCRIMINATE: no positive control"
            f" ({', '.join(self.controls)}) is better than the cloned option {self.clone} on"
            f" {METRIC} by the one verdict rule ({'; '.join(found)}), so a method that ties or"
            f" loses to {self.clone} here says nothing about whether its options help beyond"
            " imitation (validity check: report.positive_controls, report.clone)"
        )

    def as_dict(self) -> dict[str, object]:
        """``leaderboard.json``'s ``verdicts.validity``."""
        return {
            "clone": self.clone,
            "positive_controls": list(self.controls),
            "metric": METRIC,
            "discriminates": self.discriminates,
            "caveat": self.caveat() or "",
            "methods": {name: v.as_dict() for name, v in self.verdicts.items()},
            "missing": list(self.missing),
        }


def validity_pairs(
    metrics: Mapping[str, MethodMetrics], controls: Sequence[str], clone: str | None
) -> tuple[list[str], list[str]]:
    """The controls that can be judged against ``clone`` (paired runs), and why the others not."""
    if clone is None or not controls:
        return [], []
    judged, missing = [], []
    base = metrics.get(clone)
    for name in controls:
        m = metrics.get(name)
        if base is None or m is None:
            absent = clone if base is None else name
            missing.append(f"{name} not judged: no runs of {absent}")
        elif (m.seeds, m.tasks) != (base.seeds, base.tasks):
            missing.append(f"{name} not judged: other seeds or tasks than {clone}")
        else:
            judged.append(name)
    return judged, missing


def check_validity(
    metrics: Mapping[str, MethodMetrics],
    controls: Sequence[str],
    clone: str,
    design: Design,
    rng_for: Callable[..., np.random.Generator],
) -> Validity:
    """Judge each positive control against the clone (``design`` counts these comparisons).

    ``rng_for(*names)`` gives each verdict's bootstrap its own stream, named by the two entries.
    """
    judged, missing = validity_pairs(metrics, controls, clone)
    verdicts = {}
    for name in judged:
        m, base = metrics[name], metrics[clone]
        verdicts[name] = entry_verdict(
            METRIC,
            m.seeds,
            m.tasks,
            m.values,
            base.values,
            design,
            rng_for(name, clone, METRIC, "validity"),
        )
    return Validity(clone, tuple(controls), verdicts, tuple(missing))
