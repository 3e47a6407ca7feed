"""The gate's stamp (``measured_rates``) holds power per method entry and names what it misses.

Pure functions of :mod:`opt_suite.report.measured_rates` on hand-written stamps; what the CLI does
with them (compare's refusals, gate-rates --stamp) is in tests/faults/test_faults_measured_rates.py.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from opt_suite.report.measured_rates import (
    MeasuredRates,
    describe,
    detectable_losses,
    measured_from_document,
    unmeasured_problem,
)

ENTRIES = ("a", "b")
# a is caught in 18 of 20 reruns at 10% of the range, b in 6: pooled, 0.6 at 10% would state no
# detectable effect for either; per entry, a's is 10% and b's 20%.
STAMP = MeasuredRates(
    unit="pair",
    metric="auc",
    alpha=0.05,
    correction="holm",
    reruns=20,
    false_alarms=1,
    power={"0.1": 0.6, "0.2": 0.925},
    power_by_entry={"0.1": {"a": 0.9, "b": 0.3}, "0.2": {"a": 1.0, "b": 0.85}},
    baseline_digest="d" * 64,
    date="2026-11-29",
)


def _document(stamp: MeasuredRates = STAMP) -> dict:
    """The stamp as a baseline file holds it: through JSON text and back."""
    return json.loads(json.dumps(stamp.as_json()))


def test_a_stamp_reads_back_as_written():
    assert measured_from_document(_document(), ENTRIES) == STAMP
    assert _document()["power_by_entry"] == {
        "0.1": {"a": 0.9, "b": 0.3},
        "0.2": {"a": 1.0, "b": 0.85},
    }


def test_the_detectable_effect_is_per_entry():
    # a at 0.9 and b at 0.3 at a loss of 10%: a's effect is 10%, b's the next loss it reached.
    assert detectable_losses(STAMP) == {"a": 0.1, "b": 0.2}
    blind = dataclasses.replace(
        STAMP, power={"0.1": 0.6}, power_by_entry={"0.1": {"a": 0.9, "b": 0.3}}
    )
    assert detectable_losses(blind) == {"a": 0.1, "b": None}


def _with(per_entry: object) -> dict:
    """A stamp's document with ``per_entry`` as its power_by_entry."""
    return {**_document(), "power_by_entry": per_entry}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (
            {"0.1": {"a": 1.5, "b": 0.3}, "0.2": {"a": 1.0, "b": 0.85}},
            "measured_rates.power_by_entry['0.1']['a'] is 1.5, not a share caught in [0, 1]",
        ),
        (
            {"0.1": {"a": 0.9, "b": True}, "0.2": {"a": 1.0, "b": 0.85}},
            "measured_rates.power_by_entry['0.1']['b'] is True",
        ),
        (
            {"0.1": {"a": 0.9, "b": 0.3}},
            "measured_rates.power_by_entry is {'0.1': {'a': 0.9, 'b': 0.3}}, not the losses of"
            " power (['0.1', '0.2'])",
        ),
        (
            {"0.1": 0.6, "0.2": {"a": 1.0, "b": 0.85}},
            "measured_rates.power_by_entry['0.1'] is 0.6, not a mapping of method entry",
        ),
        (
            {"0.1": {"a": 0.9, "c": 0.3}, "0.2": {"a": 1.0, "c": 0.85}},
            "measured_rates.power_by_entry['0.1'] names the entries ['a', 'c'], not the"
            " baseline's ['a', 'b']",
        ),
        (  # a hand edit that leaves the pooled share behind
            {"0.1": {"a": 0.9, "b": 0.9}, "0.2": {"a": 1.0, "b": 0.85}},
            "measured_rates.power_by_entry['0.1'] averages 0.9, not power['0.1'] 0.6",
        ),
    ],
)
def test_a_malformed_per_entry_value_is_one_line_naming_its_key(value, expected):
    with pytest.raises(ValueError) as raised:
        measured_from_document(_with(value), ENTRIES)
    message = str(raised.value)
    assert "\n" not in message and message.startswith(expected), message
    assert message.endswith("(remove the stamp and measure again)")


def test_a_stamp_from_before_per_entry_power_reads_as_unknown_and_compare_refuses_it():
    old = _document()
    del old["power_by_entry"]
    measured = measured_from_document(old, ENTRIES)
    assert measured == dataclasses.replace(STAMP, power_by_entry=None)
    assert measured.as_json() == old  # a refresh that keeps it writes it as it was
    assert detectable_losses(measured) == {}
    test = {"unit": "pair", "metric": "auc", "alpha": 0.05, "correction": "holm"}
    path = Path("ci/b.json")
    problem = unmeasured_problem(path, measured, "d" * 64, **test)
    assert problem is not None and problem.startswith("ci/b.json: measured_rates were stamped")
    assert "no power_by_entry" in problem and "measure again" in problem
    assert "--baseline ci/b.json --stamp" in problem and "\n" not in problem
    assert unmeasured_problem(path, STAMP, "d" * 64, **test) is None


def test_compares_report_line_names_the_entries_the_gate_cannot_guard():
    line = describe(STAMP)
    assert line.startswith("measured rates (2026-11-29, 20 reruns under fresh seeds): false alarms")
    assert "every entry caught with power >= 0.8 at 20% loss" in line
    # Keys out of order: the largest loss is found by value, not by position.
    weak = dataclasses.replace(
        STAMP,
        power={"0.2": 0.5, "0.05": 0.05},
        power_by_entry={"0.2": {"a": 0.9, "b": 0.1}, "0.05": {"a": 0.1, "b": 0.0}},
    )
    assert describe(weak).endswith("; NOT GUARDED (power < 0.8 at 20% loss): b 0.10")
    old = dataclasses.replace(STAMP, power_by_entry=None)
    assert describe(old).endswith("; power per entry not recorded")
