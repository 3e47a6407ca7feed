"""The gate specs under ci/: each has a baseline of its spec and can fail; some are run by .ci/run.

A gate spec whose baseline was exported from an older hash is refused by ``compare`` as another
protocol; one with too few units (seeds, or (seed, task) pairs) for its entries can never report a
regression (:func:`opt_suite.report.gate.power_problem`). Both are caught here in seconds, not in
CI's last minutes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from opt_suite.report import load_baseline
from opt_suite.report.gate import POOL_FACTOR, power_problem
from opt_suite.spec import load_spec, spec_hash

ROOT = Path(__file__).resolve().parents[1]
GATE_SPECS = sorted((ROOT / "ci").glob("gate-*.yaml"))
#: Gate specs compared with the seed as the unit (`compare --unit seed`), in .ci/run as elsewhere.
SEED_UNIT = {"gate-power", "gate-objective"}
#: Gate specs whose baseline is a pool of many seeds, compared with the run's seeds unpaired
#: (`compare --unit pool`): a CI run of `evaluation.seeds` seeds against the pool's other seeds.
POOL_UNIT = {"gate-field", "gate-gymnasium", "gate-pixels"}
#: Gate specs whose false-alarm rate was measured within alpha over >= 20 reruns under fresh seeds
#: (docs/gate-rates.md, from the records docs/gen_gate_rates.py writes): only those may run in
#: .ci/run, and each of those must (the test below checks the record).
WITHIN_ALPHA = {"gate-power", "gate-field", "gate-objective", "gate-gymnasium", "gate-pixels"}


def _ci_gate_part() -> str:
    """The commands of .ci/run (its comments left out: they name gates it does not run)."""
    lines = (ROOT / ".ci" / "run").read_text().splitlines()
    return "\n".join(line for line in lines if not line.lstrip().startswith("#"))


def _compare_line(name: str) -> str | None:
    """How .ci/run compares gate spec ``name``: its `gate NAME ARGS` line, or None."""
    found = re.search(rf"^gate {re.escape(name)}\b[^\n]*", _ci_gate_part(), re.MULTILINE)
    return found.group(0) if found else None


def test_the_gate_specs_are_the_expected_ones():
    names = [p.stem for p in GATE_SPECS]
    assert names == ["gate-field", "gate-gymnasium", "gate-objective", "gate-pixels", "gate-power"]


@pytest.mark.parametrize("path", GATE_SPECS, ids=lambda p: p.stem)
def test_each_gate_spec_has_a_baseline_of_its_hash_that_can_fail(path):
    spec = load_spec(path)
    baseline = load_baseline(ROOT / "ci" / f"baseline-{path.stem}.json")
    assert (baseline.spec_name, baseline.spec_hash) == (spec.name, spec_hash(spec))
    assert sorted(baseline.methods) == sorted(m.name for m in spec.methods)
    unit = "seed" if path.stem in SEED_UNIT else "pool" if path.stem in POOL_UNIT else "pair"
    units = {
        name: len(runs.seeds) * (1 if unit == "seed" else len(runs.tasks))
        for name, runs in baseline.methods.items()
    }
    if unit == "pool":
        # CI's run holds the spec's seeds 0..n-1, which the pool holds too: tested against the rest
        run = spec.evaluation.seeds
        units = dict.fromkeys(baseline.methods, run)
        pool = {name: len(runs.seeds) - run for name, runs in baseline.methods.items()}
        assert all(set(range(run)) <= set(runs.seeds) for runs in baseline.methods.values())
        assert min(pool.values()) >= POOL_FACTOR * run
        assert power_problem(units, spec.tasks.test, unit=unit, pool=pool) is None
    else:
        assert power_problem(units, spec.tasks.test, unit=unit) is None
    # A seed- or pool-unit gate's baseline says so, so that compare cannot use another test by
    # omission.
    assert baseline.gate_unit == (unit if unit != "pair" else None)


@pytest.mark.parametrize("path", GATE_SPECS, ids=lambda p: p.stem)
def test_a_gate_spec_is_in_ci_only_with_a_false_alarm_rate_within_alpha(path):
    # A gate whose false-alarm rate is above alpha fails CI without a regression on a machine whose
    # numbers differ: it stays out of .ci/run, and the page says why, with its rates.
    page = (ROOT / "docs" / "results-and-gate.md").read_text()
    assert f"`ci/{path.name}`" in page
    line = _compare_line(path.stem)
    assert (line is not None) == (path.stem in WITHIN_ALPHA), f"{path.name}: run by .ci/run: {line}"
    if line is None:
        return
    # Its rates as recorded: >= 20 reruns of the spec as it hashes today, against the baseline CI
    # compares it with, with the test CI runs (the unit), false alarms within alpha.
    record = ROOT / "docs" / "gate-rates" / f"{path.stem}.json"
    assert record.exists(), f"{path.name} is run by .ci/run: measure its rates first ({record})"
    data = json.loads(record.read_text())
    assert data["baseline"] == f"ci/baseline-{path.stem}.json"
    assert data["fresh_run"]["spec_hash"] == spec_hash(load_spec(path)), "measured on another spec"
    rates = data["rates"]
    recorded = load_baseline(ROOT / "ci" / f"baseline-{path.stem}.json").gate_unit
    asked = re.search(r"--unit (\w+)", line)
    unit = asked.group(1) if asked else recorded
    unit = unit or "pair"
    assert rates.get("unit", "pair") == unit, f"rates measured with --unit {rates.get('unit')}"
    assert rates["reruns"] >= 20
    assert rates["false_alarm_rate"] <= rates["alpha"] == 0.05


@pytest.mark.parametrize("name", sorted(SEED_UNIT & WITHIN_ALPHA))
def test_ci_compares_a_seed_unit_gate_with_the_test_whose_rates_were_measured(name):
    # gate-rates measured the seed-level test; comparing with the pair test would gate with a test
    # whose false alarms were never measured.
    line = _compare_line(name)
    assert line is not None and "--unit seed" in line


@pytest.mark.parametrize("name", sorted(POOL_UNIT & WITHIN_ALPHA))
def test_ci_compares_a_pool_unit_gate_with_the_test_whose_rates_were_measured(name):
    # gate-rates measured the pool unit (the run's seeds against the pool's others, unpaired)
    line = _compare_line(name)
    assert line is not None and "--unit pool" in line


def _compared_baselines() -> list[tuple[str, str]]:
    """(baseline, record stem) of every compare .ci/run runs: the quick spec's, then each gate's."""
    commands = _ci_gate_part()
    pairs = re.findall(r"opt-suite compare \S+ --baseline (ci/\S+\.json)", commands)
    pairs += [f"ci/baseline-{name}.json" for name in re.findall(r"^gate (\S+)", commands, re.M)]
    return [(p, "fourrooms-quick" if p == "ci/baseline.json" else p[12:-5]) for p in pairs]


def test_ci_compares_the_quick_spec_and_the_gates_within_alpha_each_with_measured_power():
    assert "--unmeasured-ok" not in _ci_gate_part()
    assert [p for p, _ in _compared_baselines()] == [
        "ci/baseline.json",
        "ci/baseline-gate-power.json",
        "ci/baseline-gate-field.json",
        "ci/baseline-gate-objective.json",
        "ci/baseline-gate-gymnasium.json",
        "ci/baseline-gate-pixels.json",
    ]


@pytest.mark.parametrize("baseline, stem", _compared_baselines(), ids=lambda v: str(v))
def test_every_baseline_ci_compares_carries_its_recorded_rates(baseline, stem):
    # compare refuses a baseline whose power was never measured (measured_rates, written by
    # gate-rates --stamp): CI's must carry the rates of its record, measured on these numbers.
    assert load_baseline(ROOT / baseline).measured is not None, (
        f"{baseline}: not stamped (docs/gen_gate_rates.py --record)"
    )
    _assert_stamped_with_its_record(baseline, stem)


def _recorded() -> list[tuple[str, str]]:
    """(baseline, record stem) of every record in docs/gate-rates/."""
    records = sorted((ROOT / "docs" / "gate-rates").glob("*.json"))
    return [(json.loads(p.read_text())["baseline"], p.stem) for p in records]


@pytest.mark.parametrize("baseline, stem", _recorded(), ids=lambda v: str(v))
def test_every_recorded_baseline_carries_its_records_rates_per_entry(baseline, stem):
    # Every gate with a record is stamped from it, the power of each entry included: the
    # detectable effect is per entry (ci/mutations.py), and a pooled share can hide an entry.
    _assert_stamped_with_its_record(baseline, stem)


def _assert_stamped_with_its_record(baseline: str, stem: str) -> None:
    loaded = load_baseline(ROOT / baseline)
    measured = loaded.measured
    assert measured is not None, f"{baseline}: not stamped (docs/gen_gate_rates.py --record)"
    assert measured.baseline_digest == loaded.digest, f"{baseline}: stamped on other numbers"
    rates = json.loads((ROOT / "docs" / "gate-rates" / f"{stem}.json").read_text())["rates"]
    assert rates["baseline_digest"] == loaded.digest
    assert (measured.unit, measured.metric, measured.alpha, measured.reruns) == (
        rates.get("unit", "pair"),
        rates["metric"],
        rates["alpha"],
        rates["reruns"],
    )
    assert measured.false_alarms == rates["false_alarms"]
    assert measured.power == rates["power_rate"]
    assert measured.power_by_entry == {
        f: {name: n / rates["reruns"] for name, n in rates["power"][f].items()}
        for f in rates["power_rate"]
    }, f"{baseline}: not stamped with its record's power per entry (gen_gate_rates.py --restamp)"
    assert measured.unit == (loaded.gate_unit or "pair")


def test_a_rates_record_names_the_runs_that_computed_a_fresh_run_it_only_reused():
    # A spec edit that leaves every cell id (evaluation.seeds) reruns in seconds on the cells an
    # earlier run computed: the page must give that earlier run's time, not the seconds.
    import sys

    sys.path.insert(0, str(ROOT / "docs"))
    try:
        from gen_gate_rates import _computed_by
    finally:
        sys.path.remove(str(ROOT / "docs"))
    earlier = {
        "spec": "gate-x",
        "spec_hash": "ab" * 32,
        "seeds": list(range(88, 328)),
        "cells": 6960,
        "workers": 2,
        "wall_s": 1260.0,
        "commit": "c1e4613bb8ba168a7eab089ba1b64c9dcd1606a7",
    }
    reused = {"wall_s": 8.0, "reused": 6960, "computed_by": [earlier]}
    line = _computed_by(reused)
    assert "reusing 6960 cells" in line and "21 min" in line and "`abababababab`" in line
    assert "240 seeds" in line and "`c1e4613`" in line
    assert _computed_by({**reused, "reused": 0}) == ""  # the run computed its cells itself
    assert _computed_by({"wall_s": 8.0, "reused": 6960}) == ""  # a record from before the field
