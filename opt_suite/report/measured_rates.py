"""A baseline's measured gate rates: the stamp that lets ``compare`` trust its power.

A gate whose false-alarm rate and power were never measured is a gate whose PASS means nothing
known: it may be blind to the very entry it is meant to guard (the quick spec's gate caught a 20%
loss of offline-options in 0 of 20 reruns). ``opt-suite gate-rates FRESH --baseline FILE --stamp``
measures both and writes what it measured into the baseline file under ``measured_rates``:

.. code-block:: json

    "measured_rates": {"unit": "seed", "metric": "auc", "alpha": 0.05, "correction": "holm",
                       "reruns": 20, "false_alarms": 1, "power": {"0.1": 0.98, "0.2": 1.0},
                       "power_by_entry": {"0.1": {"primitives": 1.0, "offline-options": 0.9, …},
                                          "0.2": {"primitives": 1.0, "offline-options": 1.0, …}},
                       "baseline_digest": "…64 hex…", "date": "2026-11-28"}

``power`` pools the method entries (the share of (rerun, entry) cases caught); ``power_by_entry``
is each entry's own share of reruns caught, since the gate must guard every entry and a pooled
share can hide an entry it never catches (the quick spec's offline-options, above). The gate's
detectable effect is therefore per entry (:func:`detectable_losses`). A stamp written before
``power_by_entry`` existed reads with ``power_by_entry`` None, and ``compare`` refuses it like an
unmeasured gate (measure again).

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
import math
import os
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "KEY",
    "UNITS",
    "MeasuredRates",
    "DETECTABLE_POWER",
    "content_digest",
    "describe",
    "detectable_losses",
    "measured_from_document",
    "stamp",
    "unmeasured_problem",
]

#: The baseline file's top-level key holding the stamp.
KEY = "measured_rates"

#: The gate's test units a stamp (and ``settings.gate_unit``) can name: the (seed, task) pair, the
#: seed (paired), the pool of other seeds (unpaired); :mod:`opt_suite.report.gate` says what each
#: is.
UNITS = ("pair", "seed", "pool")


@dataclasses.dataclass(frozen=True)
class MeasuredRates:
    """What ``gate-rates`` measured on a baseline (see the module docstring for the JSON).

    Attributes:
      unit, metric, alpha, correction: the test measured (as ``compare``'s options).
      reruns: groups of fresh seeds compared.
      false_alarms: reruns in which some entry was flagged although nothing changed.
      power: injected loss (a fraction of each task's range, as text: "0.1") -> share of
        (rerun, method entry) cases caught, pooled over the entries.
      power_by_entry: the same losses -> method entry -> share of reruns in which that entry's
        loss was caught; None for a stamp written before it was recorded (then which entries the
        gate can guard is unknown, and ``compare`` refuses the stamp).
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
    power_by_entry: Mapping[str, Mapping[str, float]] | None
    baseline_digest: str
    date: str

    def as_json(self) -> dict[str, Any]:
        """The stamp's JSON object (one kept from before per-entry power stays without it)."""
        doc = {**dataclasses.asdict(self), "power": dict(self.power)}
        if self.power_by_entry is None:
            del doc["power_by_entry"]
        else:
            doc["power_by_entry"] = {f: dict(per) for f, per in self.power_by_entry.items()}
        return doc


def content_digest(doc: Mapping[str, Any]) -> str:
    """SHA-256 of a baseline document without its stamp, independent of key order and layout."""
    rest = {k: v for k, v in doc.items() if k != KEY}
    text = json.dumps(rest, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


#: The key a stamp written before power was recorded per entry lacks (it still reads).
_PER_ENTRY = "power_by_entry"


def measured_from_document(
    value: Any, entries: Collection[str] | None = None
) -> MeasuredRates | None:
    """The stamp of a baseline document's ``measured_rates`` value (None when absent).

    ``entries``: the baseline's method entries, which ``power_by_entry`` must name at each loss.

    Raises:
      ValueError: the value is not shaped as :meth:`MeasuredRates.as_json` writes it (the message
        names the key and what was expected; the caller adds the file).
    """
    if value is None:
        return None
    fields = {f.name for f in dataclasses.fields(MeasuredRates)}
    if not isinstance(value, dict) or set(value) not in (fields, fields - {_PER_ENTRY}):
        raise ValueError(f"{KEY} must be a mapping with exactly the keys {sorted(fields)}")
    checks = {
        "unit": value["unit"] in UNITS,
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
    bad = next((f"{KEY}.{name} is {value[name]!r}" for name, ok in checks.items() if not ok), None)
    if bad is None and _PER_ENTRY in value:
        bad = _per_entry_problem(value[_PER_ENTRY], value["power"], entries)
    if bad is not None:
        raise ValueError(
            f"{bad}, not what `opt-suite gate-rates --stamp` writes (remove the stamp and"
            " measure again)"
        )
    per_entry = value.get(_PER_ENTRY)
    return MeasuredRates(
        unit=value["unit"],
        metric=value["metric"],
        alpha=float(value["alpha"]),
        correction=value["correction"],
        reruns=int(value["reruns"]),
        false_alarms=int(value["false_alarms"]),
        power={str(k): float(v) for k, v in value["power"].items()},
        power_by_entry=None
        if per_entry is None
        else {
            str(f): {str(name): float(v) for name, v in per.items()} for f, per in per_entry.items()
        },
        baseline_digest=value["baseline_digest"],
        date=value["date"],
    )


def _per_entry_problem(
    per_entry: Any, power: Mapping[str, Any], entries: Collection[str] | None
) -> str | None:
    """What is wrong with a stamp's ``power_by_entry``, naming its key; None when nothing is.

    It must hold a share in [0, 1] per entry at each loss ``power`` holds, name the baseline's
    entries, and average to ``power`` (the pooled share of the same cases): a hand-edited entry
    is caught even where its digest still matches.
    """
    key = f"{KEY}.{_PER_ENTRY}"
    if not isinstance(per_entry, dict) or set(per_entry) != set(power):
        return f"{key} is {per_entry!r}, not the losses of power ({sorted(power)})"
    for fraction, per in per_entry.items():
        at = f"{key}[{fraction!r}]"
        if not isinstance(per, dict) or not per:
            return f"{at} is {per!r}, not a mapping of method entry -> share caught"
        for name, share in per.items():
            if not (_number(share) and 0 <= share <= 1):
                return f"{at}[{name!r}] is {share!r}, not a share caught in [0, 1]"
        if entries is not None and set(per) != set(entries):
            return f"{at} names the entries {sorted(per)}, not the baseline's {sorted(entries)}"
        mean = sum(per.values()) / len(per)
        if not math.isclose(mean, power[fraction], rel_tol=1e-9, abs_tol=1e-12):
            return f"{at} averages {mean:.6g}, not power[{fraction!r}] {power[fraction]!r}"
    return None


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
    if measured.power_by_entry is None:
        return (
            f"{path}: {KEY} were stamped before power was recorded per method entry (no"
            f" {_PER_ENTRY}), so which entries this gate can guard is unknown; measure again:"
            f" {ways}"
        )
    return None


#: The power at which a loss counts as one the gate was built to detect (the usual design power).
DETECTABLE_POWER = 0.8


def describe(measured: MeasuredRates) -> str:
    """One line for ``compare``'s report: the rates this gate was measured to have.

    It names the entries whose power at the largest loss measured is below
    :data:`DETECTABLE_POWER`: a loss of theirs of that size or less is not one the gate guards.
    """
    power = ", ".join(
        f"{float(f):.0%} loss caught {rate:.2f}" for f, rate in measured.power.items()
    )
    above = measured.false_alarms / measured.reruns > measured.alpha
    return (
        f"measured rates ({measured.date}, {measured.reruns} reruns under fresh seeds): false"
        f" alarms {measured.false_alarms}/{measured.reruns}"
        + (f" (ABOVE alpha {measured.alpha:g})" if above else "")
        + (f"; {power}" if power else "; power not measured at any loss")
        + _unguarded(measured)
    )


def _unguarded(measured: MeasuredRates) -> str:
    """The entries caught with power below 0.8 at the largest loss measured, as a clause."""
    if not measured.power:
        return ""
    if measured.power_by_entry is None:
        return "; power per entry not recorded"
    largest = max(measured.power, key=float)
    weak = [(n, p) for n, p in measured.power_by_entry[largest].items() if p < DETECTABLE_POWER]
    at = f"{float(largest):.0%} loss"
    if not weak:
        return f"; every entry caught with power >= {DETECTABLE_POWER:g} at {at}"
    names = ", ".join(f"{name} {p:.2f}" for name, p in weak)
    return f"; NOT GUARDED (power < {DETECTABLE_POWER:g} at {at}): {names}"


def detectable_losses(measured: MeasuredRates | None) -> dict[str, float | None]:
    """The gate's stated detectable effect per method entry.

    Each entry's is the smallest stamped loss at which *that entry* was caught with power >=
    :data:`DETECTABLE_POWER`, a fraction of each task's range as ``gate-rates`` injects it; None
    when no loss measured reached that power for it: no effect on it is one the gate is known to
    see. Empty when nothing was measured, or the stamp predates per-entry power.
    """
    if measured is None or measured.power_by_entry is None:
        return {}
    losses: dict[str, float | None] = {}
    smallest_first = sorted(measured.power_by_entry.items(), key=lambda item: float(item[0]))
    for fraction, per in smallest_first:
        for name, rate in per.items():
            if losses.get(name) is None:
                losses[name] = float(fraction) if rate >= DETECTABLE_POWER else None
    return losses


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
