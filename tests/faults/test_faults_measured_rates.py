"""A baseline whose gate power was never measured is refused by ``compare`` (issue 36, Bad input).

``gate-rates --stamp`` writes what it measured into the baseline (``measured_rates``, bound to the
file's content by its digest); ``compare`` refuses, in one located line and exit 2, a baseline
without it, one whose numbers changed since, or one measured for another test -- unless
``--unmeasured-ok``, which the report then says loudly. A refresh keeps the stamp only when no
number moved.
"""

from __future__ import annotations

import json

import pytest
from report_fakes import linear_table, write_store

from opt_suite.cli import main
from opt_suite.report import load_baseline

SHIFTS = {"primitives": 0.0, "ours": 2.0}


def _store(path, seeds, shift=0.0):
    shifts = {name: value + (shift if name == "ours" else 0.0) for name, value in SHIFTS.items()}
    return write_store(path, linear_table(shifts, seeds=seeds, tasks=6, noise=1.0))


@pytest.fixture
def gate(tmp_path, capsys):
    """A baseline of seeds 0-1, a fresh run of seeds 0-5 (2 reruns), a run 3 auc worse."""
    base = _store(tmp_path / "base", seeds=2)
    baseline = tmp_path / "baseline.json"
    assert main(["report", str(base), "--export-baseline", str(baseline)]) == 0
    fresh = _store(tmp_path / "fresh", seeds=6)
    worse = _store(tmp_path / "worse", seeds=2, shift=-3.0)
    capsys.readouterr()
    return baseline, fresh, worse


def _compare(capsys, run, baseline, *flags):
    code = main(["compare", str(run), "--baseline", str(baseline), *flags])
    captured = capsys.readouterr()
    return code, captured.out, captured.err.strip().splitlines()


def _stamped_then_edited(gate, capsys, edit):
    """The gate's baseline stamped by ``gate-rates --stamp``, then its JSON changed by ``edit``."""
    baseline, fresh, worse = gate
    assert main(["gate-rates", str(fresh), "--baseline", str(baseline), "--stamp"]) == 0
    doc = json.loads(baseline.read_text())
    edit(doc)
    baseline.write_text(json.dumps(doc, indent=1))
    capsys.readouterr()
    return baseline, fresh, worse


def test_an_unmeasured_baseline_is_refused_in_one_located_line(gate, capsys):
    baseline, _, worse = gate
    code, out, err = _compare(capsys, worse, baseline)
    assert code == 2 and out == "" and len(err) == 1, err
    assert err[0].startswith(f"opt-suite compare: {baseline}: ") and "never measured" in err[0]
    assert "no measured_rates" in err[0] and f"--baseline {baseline} --stamp" in err[0]
    # With the explicit flag the regression is found, and the report says the gate is unmeasured.
    code, out, err = _compare(capsys, worse, baseline, "--unmeasured-ok")
    assert code == 1 and "REGRESSION" in out
    assert "WARNING: UNMEASURED GATE (--unmeasured-ok)" in out
    assert any("UNMEASURED GATE" in line for line in err)


def test_a_stamped_baseline_is_compared_and_its_rates_printed(gate, capsys):
    baseline, fresh, worse = gate
    code = main(["gate-rates", str(fresh), "--baseline", str(baseline), "--stamp"])
    out = capsys.readouterr().out
    assert code == 0 and f"stamped {baseline}" in out
    measured = load_baseline(baseline).measured
    assert measured is not None and measured.reruns == 2 and measured.unit == "pair"
    assert set(measured.power) == {"0.05", "0.1", "0.2"}
    assert measured.power_by_entry is not None and set(measured.power_by_entry) == {
        "0.05",
        "0.1",
        "0.2",
    }
    assert all(set(per) == set(SHIFTS) for per in measured.power_by_entry.values())
    code, out, _ = _compare(capsys, worse, baseline)
    assert code == 1 and "REGRESSION" in out and "UNMEASURED" not in out
    assert f"measured rates ({measured.date}, 2 reruns under fresh seeds): false alarms 0/2" in out
    # The report line says which entries the gate cannot guard at the largest loss measured.
    assert "at 20% loss" in out


def test_a_stamp_for_another_test_is_refused_naming_the_measured_one(gate, capsys):
    baseline, fresh, worse = gate
    assert main(["gate-rates", str(fresh), "--baseline", str(baseline), "--stamp"]) == 0
    for flags, asked in (
        (["--alpha", "0.1"], "alpha 0.1,"),
        (["--metric", "final_return"], "metric final_return"),
        (["--correction", "none"], "correction none"),
    ):
        capsys.readouterr()
        code, _, err = _compare(capsys, worse, baseline, *flags)
        assert code == 2 and len(err) == 1, err
        assert "measured_rates are for the pair unit, metric auc, alpha 0.05" in err[0]
        assert "this compare uses the pair unit" in err[0] and asked in err[0], err[0]


def test_edited_numbers_void_the_stamp(gate, capsys):
    def edit(doc):
        doc["methods"]["ours"]["metrics"]["auc"][0][0] += (
            1.0  # a hand edit, or another run's number
        )

    baseline, fresh, worse = _stamped_then_edited(gate, capsys, edit)
    code, _, err = _compare(capsys, worse, baseline)
    assert code == 2 and len(err) == 1 and "measured on other numbers" in err[0], err


def test_a_refresh_keeps_the_stamp_only_when_no_number_moved(gate, tmp_path, capsys):
    baseline, fresh, _ = gate
    assert main(["gate-rates", str(fresh), "--baseline", str(baseline), "--stamp"]) == 0
    stamped = load_baseline(baseline).measured
    capsys.readouterr()
    assert main(["report", str(tmp_path / "base"), "--export-baseline", str(baseline)]) == 0
    assert "kept the measured gate rates" in capsys.readouterr().out
    assert load_baseline(baseline).measured == stamped
    moved = _store(tmp_path / "moved", seeds=2, shift=0.5)
    assert main(["report", str(moved), "--export-baseline", str(baseline)]) == 0
    out = capsys.readouterr().out
    assert "has no measured gate rates (the previous file's were of other numbers)" in out
    assert load_baseline(baseline).measured is None


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("reruns", 0, "measured_rates.reruns is 0"),
        ("false_alarms", 9, "measured_rates.false_alarms is 9"),
        ("power", {"0.1": 1.5}, "measured_rates.power is {'0.1': 1.5}"),
        ("unit", "task", "measured_rates.unit is 'task'"),
        ("date", None, "measured_rates.date is None"),
    ],
)
def test_a_malformed_stamp_is_refused_with_its_key(gate, capsys, key, value, expected):
    def edit(doc):
        doc["measured_rates"][key] = value

    baseline, fresh, worse = _stamped_then_edited(gate, capsys, edit)
    code, _, err = _compare(capsys, worse, baseline, "--unmeasured-ok")
    assert code == 2 and len(err) == 1 and expected in err[0] and str(baseline) in err[0], err


def test_a_stamp_missing_a_key_is_refused(gate, capsys):
    def edit(doc):
        del doc["measured_rates"]["baseline_digest"]

    baseline, fresh, worse = _stamped_then_edited(gate, capsys, edit)
    code, _, err = _compare(capsys, worse, baseline)
    assert code == 2 and len(err) == 1 and "measured_rates must be a mapping with" in err[0]


def test_a_malformed_per_entry_power_is_refused_naming_its_key(gate, capsys):
    def edit(doc):
        doc["measured_rates"]["power_by_entry"]["0.1"]["ours"] = -0.5

    baseline, fresh, worse = _stamped_then_edited(gate, capsys, edit)
    code, _, err = _compare(capsys, worse, baseline, "--unmeasured-ok")
    assert code == 2 and len(err) == 1 and str(baseline) in err[0], err
    assert "measured_rates.power_by_entry['0.1']['ours'] is -0.5" in err[0], err


def test_a_stamp_without_power_per_entry_is_refused_until_measured_again(gate, capsys):
    # A stamp written before power was recorded per entry cannot say which entries the gate
    # guards: compare refuses it like an unmeasured gate, and gate-rates --stamp replaces it.
    def edit(doc):
        del doc["measured_rates"]["power_by_entry"]

    baseline, fresh, worse = _stamped_then_edited(gate, capsys, edit)
    code, out, err = _compare(capsys, worse, baseline)
    assert code == 2 and out == "" and len(err) == 1, err
    assert "stamped before power was recorded per method entry" in err[0]
    assert "measure again" in err[0] and f"--baseline {baseline} --stamp" in err[0]
    code, out, _ = _compare(capsys, worse, baseline, "--unmeasured-ok")
    assert code == 1 and "WARNING: UNMEASURED GATE" in out
    assert main(["gate-rates", str(fresh), "--baseline", str(baseline), "--stamp"]) == 0
    assert load_baseline(baseline).measured.power_by_entry is not None
    capsys.readouterr()
    code, out, _ = _compare(capsys, worse, baseline)
    assert code == 1 and "UNMEASURED" not in out
