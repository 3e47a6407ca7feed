"""ci/mutations.py: every injected bug still applies to today's code, and the table says what ran.

The mutation check itself runs the gate specs (minutes); these tests keep its patches honest in
seconds: a patch whose old text moved away would make a row "patch-failed" in the next check.
A missed bug's split (below the gate's detectable effect, or a gap) is tested on synthetic stores
whose effects are worked out by hand (``report_fakes.linear_table``): no gate runs here.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from report_fakes import linear_table, write_store

from opt_suite.cli import main
from opt_suite.report import load_baseline
from opt_suite.report.baseline import stamp_baseline
from opt_suite.report.gate import degradation
from opt_suite.report.measured_rates import MeasuredRates, detectable_loss

ROOT = Path(__file__).resolve().parent.parent


def _load():
    spec = importlib.util.spec_from_file_location("ci_mutations", ROOT / "ci" / "mutations.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["ci_mutations"] = module  # dataclasses look their module up while building
    spec.loader.exec_module(module)
    return module


mutations = _load()


@pytest.mark.parametrize("mutation", mutations.MUTATIONS, ids=lambda m: m.name)
def test_each_patch_applies_once_and_leaves_python(mutation, tmp_path):
    assert mutations.patched_copy(mutation, tmp_path) is None
    patched = (tmp_path / mutation.path).read_text()
    ast.parse(patched)  # a syntax error would be an import failure in the check
    original = (ROOT / mutation.path).read_text()
    assert (patched != original) == bool(mutation.old)
    assert mutation.gate in mutations.GATES


def test_a_stale_patch_is_a_listed_failure_not_a_pass(tmp_path):
    stale = mutations.dataclasses.replace(mutations.MUTATIONS[1], old="text that is not there")
    problem = mutations.patched_copy(stale, tmp_path)
    assert problem == (f"patch does not apply: its old text occurs 0 times in {stale.path}")


def test_the_table_counts_broken_rows_and_gaps_apart_from_caught_and_below():
    by_name = {m.name: m for m in mutations.MUTATIONS}
    gap, below = mutations.MISSED_GAP, mutations.MISSED_BELOW
    outcomes = [
        mutations.Outcome(by_name["control"], "passed", "replay: identical", 10.0, 5.0, {"a": 0.0}),
        mutations.Outcome(
            by_name["smdp-discount"], "caught", "regression: a", 10.0, 5.0, {"a": 0.25}, 0.1
        ),
        mutations.Outcome(by_name["beta-frozen"], gap, "PASS", 10.0, 5.0, {"a": 0.02}),
        mutations.Outcome(
            by_name["jhat-no-termination-term"], below, "PASS", 10.0, 5.0, {"a": 0.04}, 0.1
        ),
        mutations.Outcome(by_name["demos-shuffled"], "patch-failed", "patch does not apply", 0, 0),
    ]
    page = mutations.render(outcomes, "python ci/mutations.py", "1.0 / 1.0 / 1.0")
    assert "Learning bugs turned red: **1 of 3** (1 by a regression verdict)." in page
    assert "Missed: **1 a gap**, 1 below the detectable effect." in page
    assert "Broken rows (not counted): demos-shuffled." in page
    rows = {line.split(" | ")[0]: line.split(" | ") for line in page.splitlines()}
    # mutation, bug, gate, outcome, loss, detectable, replay, wall, CPU
    assert rows["| `smdp-discount`"][3:6] == ["**caught**", "**a +25.0%**", "10%"]
    assert rows["| `beta-frozen`"][3:6] == [f"**{gap}**", "a +2.0%", "none measured"]
    assert rows["| `jhat-no-termination-term`"][3:6] == [f"**{below}**", "a +4.0%", "10%"]
    assert rows["| `demos-shuffled`"][4] == "—"
    assert "Whole check: 40 s wall, 20 CPU-seconds." in page


@pytest.mark.parametrize(
    ("effects", "detectable", "verdict"),
    [
        ({"a": 0.04, "b": -0.09}, 0.1, "below"),  # every entry smaller than the detectable
        ({"a": 0.04, "b": 0.1}, 0.1, "gap"),  # one entry at the detectable effect
        ({"a": -0.3}, 0.1, "gap"),  # a learning curve moved that far, even for the better
        ({"a": 0.01}, None, "gap"),  # the gate states no detectable effect
        ({"a": float("nan")}, 0.2, "gap"),  # an effect not measured is no evidence of smallness
        (None, 0.2, "gap"),  # no comparison made
    ],
)
def test_a_missed_bug_is_below_the_detectable_effect_only_when_every_entry_is(
    effects, detectable, verdict
):
    expected = {"below": mutations.MISSED_BELOW, "gap": mutations.MISSED_GAP}[verdict]
    assert mutations.missed_verdict(effects, detectable) == expected


def _rates(power):
    return MeasuredRates("pair", "auc", 0.05, "holm", 20, 0, power, "0" * 64, "2026-11-28")


def test_the_detectable_effect_is_the_smallest_loss_stamped_with_power_08():
    assert detectable_loss(_rates({"0.2": 1.0, "0.05": 0.3, "0.1": 0.8})) == 0.1
    assert detectable_loss(_rates({"0.05": 0.04, "0.1": 0.42, "0.2": 0.62})) is None
    assert detectable_loss(_rates({})) is None
    assert detectable_loss(None) is None


def test_the_loss_is_positive_when_worse_whichever_way_the_metric_is_better():
    diff = np.array([[2.0, 4.0], [2.0, 4.0]])  # run - baseline, seeds x tasks
    ranges = np.array([10.0, 20.0])
    assert degradation(diff, ranges, "auc") == pytest.approx(-0.2)  # higher auc: better
    assert degradation(diff, ranges, "episodes_to_threshold") == pytest.approx(0.2)
    unchanged = degradation(np.zeros((2, 2)), ranges, "auc")
    assert unchanged == 0.0 and math.copysign(1.0, unchanged) == 1.0  # printed 0.0%, not -0.0%


# linear_table: auc = E/2 - 10.5 + seed + 2 task + shift. With shifts 0 and 4 over seeds 0..3,
# each task's range over both entries and every seed is 4 + 3 = 7.
SEEDS, SHIFTS = 4, {"a": 0.0, "b": 4.0}


@pytest.fixture(scope="module")
def stamped(tmp_path_factory):
    """A baseline of the synthetic store, stamped with power 0.85 at 10% of the range."""
    root = tmp_path_factory.mktemp("mutsize")
    write_store(root / "base", linear_table(SHIFTS, seeds=SEEDS))
    baseline = root / "b.json"
    assert main(["report", str(root / "base"), "--export-baseline", str(baseline)]) == 0
    digest = load_baseline(baseline).digest
    power = {"0.05": 0.3, "0.1": 0.85, "0.2": 1.0}
    stamp_baseline(baseline, dataclasses.replace(_rates(power), baseline_digest=digest))
    return root, mutations.Gate("synthetic.yaml", str(baseline))


def test_the_effect_is_each_entrys_loss_in_shares_of_the_task_range(stamped):
    root, gate = stamped
    write_store(root / "worse-a", linear_table({"a": -1.4, "b": 4.0}, seeds=SEEDS))
    effects = mutations.effects_of(root / "worse-a", gate)
    assert effects == pytest.approx({"a": 1.4 / 7, "b": 0.0})  # a lost 1.4 of a range of 7
    write_store(root / "better-b", linear_table({"a": 0.0, "b": 4.7}, seeds=SEEDS))
    assert mutations.effects_of(root / "better-b", gate) == pytest.approx({"a": 0.0, "b": -0.1})
    assert mutations.effects_of(root / "base", gate) == {"a": 0.0, "b": 0.0}


def test_the_effect_is_unknown_when_compare_would_refuse(stamped):
    root, gate = stamped
    write_store(root / "other", linear_table(SHIFTS, seeds=SEEDS), spec_hash="fedcba9876543210")
    assert mutations.effects_of(root / "other", gate) is None


def test_the_detectable_effect_is_read_from_the_gates_baseline(stamped, tmp_path):
    _, gate = stamped
    assert mutations.detectable_effect(gate) == 0.1
    unstamped = tmp_path / "u.json"
    doc = json.loads(Path(gate.baseline).read_text())
    del doc["measured_rates"]
    unstamped.write_text(json.dumps(doc))
    assert mutations.detectable_effect(dataclasses.replace(gate, baseline=str(unstamped))) is None
