"""A baseline's measured gate rates: the stamp that lets ``compare`` trust its power.

A gate whose false-alarm rate and power were never measured is a gate whose PASS means nothing
known: it may be blind to the very entry it is meant to guard (the quick spec's gate caught a 20%
loss of offline-options in 0 of 20 reruns). ``opt-suite gate-rates FRESH --baseline FILE --stamp``
measures both and writes what it measured into the baseline file under ``measured_rates``:

.. code-block:: json

    "measured_rates": {"unit": "seed", "metric": "auc", "alpha": 0.05, "correction": "holm",
                       "reruns": 20, "false_alarms": 1, "power": {"0.1": 0.98, "0.2": 1.0},
                       "baseline_digest": "…64 hex…", "date": "2026-11-28"}

``baseline_digest`` is the SHA-256 of the rest of the file (:func:`content_digest`): the rates
hold for the numbers they were measured against, so a refreshed or hand-edited baseline no longer
matches its stamp. ``compare`` refuses (exit 2, :func:`unmeasured_problem`) a baseline with no
stamp, a stamp of other content, or one measured for another test (unit, metric, alpha,
correction), unless told ``--unmeasured-ok``, which it then prints loudly.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "KEY",
    "MeasuredRates",
    "DETECTABLE_POWER",
    "content_digest",
    "describe",
    "detectable_loss",
    "measured_from_document",
    "stamp",
    "unmeasured_problem",
]

#: The baseline file's top-level key holding the stamp.
KEY = "measured_rates"


@dataclasses.dataclass(frozen=True)
class MeasuredRates:
    """What ``gate-rates`` measured on a baseline (see the module docstring for the JSON).

    Attributes:
      unit, metric, alpha, correction: the test measured (as ``compare``'s options).
      reruns: groups of fresh seeds compared.
      false_alarms: reruns in which some entry was flagged although nothing changed.
      power: injected loss (a fraction of each task's range, as text: "0.1") -> share caught.
      baseline_digest: :func:`content_digest` of the baseline the rates were measured against.
      date: ISO date of the measurement.
    """

    unit: str
    metric: str
    alpha: float
    correction: str
    reruns: int
    false_alarms: int
    power: Mapping[str, float]
    baseline_digest: str
    date: str

    def as_json(self) -> dict[str, Any]:
        """The stamp's JSON object."""
        return {**dataclasses.asdict(self), "power": dict(self.power)}


def content_digest(doc: Mapping[str, Any]) -> str:
    """SHA-256 of a baseline document without its stamp, independent of key order and layout."""
    rest = {k: v for k, v in doc.items() if k != KEY}
    text = json.dumps(rest, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


def measured_from_document(value: Any) -> MeasuredRates | None:
    """The stamp of a baseline document's ``measured_rates`` value (None when absent).

    Raises:
      ValueError: the value is not shaped as :meth:`MeasuredRates.as_json` writes it (the message
        names the key and what was expected; the caller adds the file).
    """
    if value is None:
        return None
    fields = {f.name for f in dataclasses.fields(MeasuredRates)}
    if not isinstance(value, dict) or set(value) != fields:
        raise ValueError(f"{KEY} must be a mapping with exactly the keys {sorted(fields)}")
    checks = {
        "unit": value["unit"] in ("pair", "seed"),
        "metric": isinstance(value["metric"], str),
        "alpha": _number(value["alpha"]) and 0 < value["alpha"] < 1,
        "correction": value["correction"] in ("holm", "none"),
        "reruns": _count(value["reruns"]) and value["reruns"] >= 1,
        "false_alarms": _count(value["false_alarms"]) and value["false_alarms"] <= value["reruns"],
        "power": isinstance(value["power"], dict)
        and all(_number(v) and 0 <= v <= 1 for v in value["power"].values()),
        "baseline_digest": isinstance(value["baseline_digest"], str)
        and len(value["baseline_digest"]) == 64,
        "date": isinstance(value["date"], str),
    }
    bad = [name for name, ok in checks.items() if not ok]
    if bad:
        raise ValueError(
            f"{KEY}.{bad[0]} is {value[bad[0]]!r}, not what `opt-suite gate-rates --stamp`"
            " writes (remove the stamp and measure again)"
        )
    return MeasuredRates(
        unit=value["unit"],
        metric=value["metric"],
        alpha=float(value["alpha"]),
        correction=value["correction"],
        reruns=int(value["reruns"]),
        false_alarms=int(value["false_alarms"]),
        power={str(k): float(v) for k, v in value["power"].items()},
        baseline_digest=value["baseline_digest"],
        date=value["date"],
    )


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def unmeasured_problem(
    path: Path,
    measured: MeasuredRates | None,
    digest: str,
    *,
    unit: str,
    metric: str,
    alpha: float,
    correction: str,
) -> str | None:
    """Why the gate's rates for this test on this baseline are unknown, or None when measured.

    One line naming the file and its ``measured_rates``, and the two ways on.
    """
    ways = (
        f"measure them with `opt-suite gate-rates FRESH_RUN --baseline {path} --stamp` on a run"
        " of seeds the baseline does not have, or pass --unmeasured-ok to compare anyway"
    )
    test = f"the {unit} unit, metric {metric}, alpha {alpha:g}, correction {correction}"
    if measured is None:
        return (
            f"{path}: this gate's false-alarm rate and power were never measured (no {KEY}), so"
            f" a PASS would say nothing about what it can catch; {ways}"
        )
    if measured.baseline_digest != digest:
        return (
            f"{path}: {KEY} were measured on other numbers (baseline digest"
            f" {measured.baseline_digest[:12]}, this file's {digest[:12]}: it was refreshed or"
            f" edited since); {ways}"
        )
    stamped = (measured.unit, measured.metric, measured.alpha, measured.correction)
    if stamped != (unit, metric, alpha, correction):
        return (
            f"{path}: {KEY} are for the {measured.unit} unit, metric {measured.metric}, alpha"
            f" {measured.alpha:g}, correction {measured.correction}; this compare uses {test},"
            f" whose rates were never measured; compare with the measured test, or {ways}"
        )
    return None


def describe(measured: MeasuredRates) -> str:
    """One line for ``compare``'s report: the rates this gate was measured to have."""
    power = ", ".join(
        f"{float(f):.0%} loss caught {rate:.2f}" for f, rate in measured.power.items()
    )
    above = measured.false_alarms / measured.reruns > measured.alpha
    return (
        f"measured rates ({measured.date}, {measured.reruns} reruns under fresh seeds): false"
        f" alarms {measured.false_alarms}/{measured.reruns}"
        + (f" (ABOVE alpha {measured.alpha:g})" if above else "")
        + (f"; {power}" if power else "; power not measured at any loss")
    )


#: The power at which a loss counts as one the gate was built to detect (the usual design power).
DETECTABLE_POWER = 0.8


def detectable_loss(measured: MeasuredRates | None) -> float | None:
    """The gate's stated detectable effect: the smallest stamped loss caught with power >= 0.8.

    A fraction of each task's range, as ``gate-rates`` injects it; None when no loss measured
    reached :data:`DETECTABLE_POWER` (or nothing was measured): then no effect is one the gate
    is known to see. The stamp pools its power over the method entries, so this is the gate's
    detectable effect for each entry on average, not a promise for every entry.
    """
    if measured is None:
        return None
    reached = [float(f) for f, rate in measured.power.items() if rate >= DETECTABLE_POWER]
    return min(reached, default=None)


def stamp(path: Path, measured: MeasuredRates, document: Mapping[str, Any]) -> None:
    """Write ``measured`` into the baseline file at ``path`` whose content is ``document``.

    Written to a temporary file beside it and renamed over it: an interrupted stamp leaves the
    old file whole.

    Raises:
      ValueError: ``document`` is not the content ``measured`` was measured against.
    """
    if content_digest(document) != measured.baseline_digest:
        raise ValueError(f"{path}: changed while its rates were measured; measure again")
    doc = {**{k: v for k, v in document.items() if k != KEY}, KEY: measured.as_json()}
    staging = path.with_name(f".{path.name}.stamping")
    staging.write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n")
    os.replace(staging, path)
