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
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from report_fakes import linear_table, write_store

from opt_suite.cli import main
from opt_suite.report import load_baseline
from opt_suite.report.baseline import stamp_baseline
from opt_suite.report.gate import degradation
from opt_suite.report.measured_rates import MeasuredRates, detectable_losses

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
    # Each entry's detectable effect is its own: b's 30% is not reached by a loss of 25%.
    detectable = {"a": 0.1, "b": 0.3}
    outcomes = [
        mutations.Outcome(by_name["control"], "passed", "replay: identical", 10.0, 5.0, {"a": 0.0}),
        mutations.Outcome(
            by_name["smdp-discount"],
            "caught",
            "regression: a",
            10.0,
            5.0,
            {"a": 0.25, "b": 0.25},
            detectable,
        ),
        mutations.Outcome(
            by_name["beta-frozen"], gap, "PASS", 10.0, 5.0, {"a": 0.02, "b": 0.01}, {"b": None}
        ),
        mutations.Outcome(by_name["ppo-advantage-sign"], gap, "PASS", 1.0, 1.0, {"a": 0.5}),
        mutations.Outcome(
            by_name["jhat-no-termination-term"],
            below,
            "PASS",
            10.0,
            5.0,
            {"a": 0.04, "b": -0.2},
            detectable,
        ),
        mutations.Outcome(by_name["demos-shuffled"], "patch-failed", "patch does not apply", 0, 0),
    ]
    page = mutations.render(outcomes, "python ci/mutations.py", "1.0 / 1.0 / 1.0")
    assert "Learning bugs turned red: **1 of 4** (1 by a regression verdict)." in page
    assert "Missed: **2 a gap**, 1 below the detectable effect." in page
    assert "Broken rows (not counted): demos-shuffled." in page
    rows = {line.split(" | ")[0]: line.split(" | ") for line in page.splitlines()}
    # mutation, bug, gate, outcome, loss, detectable per entry, replay, wall, CPU
    assert rows["| `smdp-discount`"][3:6] == [
        "**caught**",
        "**a +25.0%**, b +25.0%",
        "a 10%, b 30%",
    ]
    assert rows["| `beta-frozen`"][3:6] == [f"**{gap}**", "a +2.0%, b +1.0%", "b none"]
    assert rows["| `ppo-advantage-sign`"][3:6] == [f"**{gap}**", "a +50.0%", "none measured"]
    assert rows["| `jhat-no-termination-term`"][3:6] == [
        f"**{below}**",
        "a +4.0%, b -20.0%",
        "a 10%, b 30%",
    ]
    assert rows["| `demos-shuffled`"][4] == "—"
    assert "| detectable per entry |" in page and "*for that entry*" in page
    assert "Whole check: 41 s wall, 21 CPU-seconds." in page


@pytest.mark.parametrize(
    ("effects", "detectable", "verdict"),
    [
        ({"a": 0.04, "b": -0.09}, {"a": 0.1, "b": 0.1}, "below"),  # each smaller than its own
        ({"a": 0.04, "b": 0.1}, {"a": 0.1, "b": 0.1}, "gap"),  # one entry at its detectable
        ({"a": -0.3}, {"a": 0.1}, "gap"),  # a learning curve moved that far, even for the better
        # Per entry: b's 15% is below its own 20%, though above a's 10%; a's 15% is not.
        ({"a": 0.05, "b": 0.15}, {"a": 0.1, "b": 0.2}, "below"),
        ({"a": 0.15, "b": 0.05}, {"a": 0.1, "b": 0.2}, "gap"),
        ({"a": 0.01}, {"a": None}, "gap"),  # the gate states no detectable effect for a
        ({"a": 0.01}, {}, "gap"),  # the stamp states none at all (or has no power per entry)
        ({"a": 0.01, "b": 0.0}, {"a": 0.1, "b": None}, "below"),  # b did not move at all
        ({"a": float("nan")}, {"a": 0.2}, "gap"),  # an effect not measured: no evidence
        (None, {"a": 0.2}, "gap"),  # no comparison made
    ],
)
def test_a_missed_bug_is_below_the_detectable_effect_only_when_every_entry_is(
    effects, detectable, verdict
):
    expected = {"below": mutations.MISSED_BELOW, "gap": mutations.MISSED_GAP}[verdict]
    assert mutations.missed_verdict(effects, detectable) == expected


def _rates(by_entry):
    """A stamp of per-entry power ``{loss: {entry: share}}``, its pooled power their mean."""
    power = {f: sum(per.values()) / len(per) for f, per in by_entry.items()}
    return MeasuredRates(
        unit="pair",
        metric="auc",
        alpha=0.05,
        correction="holm",
        reruns=20,
        false_alarms=0,
        power=power,
        power_by_entry=by_entry,
        baseline_digest="0" * 64,
        date="2026-11-28",
    )


def test_the_detectable_effect_is_each_entrys_smallest_loss_caught_with_power_08():
    # At 10% a is caught in 0.9 of reruns, b in 0.3: pooled 0.6 states no effect for either,
    # but a's is 10%; b reaches 0.8 only at 20%, c never.
    rates = _rates(
        {
            "0.2": {"a": 1.0, "b": 0.85, "c": 0.5},
            "0.05": {"a": 0.3, "b": 0.1, "c": 0.0},
            "0.1": {"a": 0.9, "b": 0.3, "c": 0.2},
        }
    )
    assert detectable_losses(rates) == {"a": 0.1, "b": 0.2, "c": None}
    assert detectable_losses(_rates({"0.1": {"a": 0.8, "b": 0.79}})) == {"a": 0.1, "b": None}
    assert detectable_losses(dataclasses.replace(rates, power_by_entry=None)) == {}
    assert detectable_losses(None) == {}


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
    """A baseline of the synthetic store: a stamp that sees a at 10% of the range, b at 20%."""
    root = tmp_path_factory.mktemp("mutsize")
    write_store(root / "base", linear_table(SHIFTS, seeds=SEEDS))
    baseline = root / "b.json"
    assert main(["report", str(root / "base"), "--export-baseline", str(baseline)]) == 0
    digest = load_baseline(baseline).digest
    by_entry = {
        "0.05": {"a": 0.3, "b": 0.1},
        "0.1": {"a": 0.85, "b": 0.5},
        "0.2": {"a": 1.0, "b": 1.0},
    }
    stamp_baseline(baseline, dataclasses.replace(_rates(by_entry), baseline_digest=digest))
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
    assert mutations.detectable_effect(gate) == {"a": 0.1, "b": 0.2}
    unstamped = tmp_path / "u.json"
    doc = json.loads(Path(gate.baseline).read_text())
    del doc["measured_rates"]
    unstamped.write_text(json.dumps(doc))
    assert mutations.detectable_effect(dataclasses.replace(gate, baseline=str(unstamped))) == {}


def test_the_flagged_rows_are_read_whatever_the_units_column_says():
    # compare's table rows, as format_comparison prints them: the pool unit's units column is
    # four words ("8 seeds vs 160"), the others' two
    stdout = "\n".join(
        [
            "method   test        runs            baseline  run      diff    ...",
            "a        paired      20 pairs        -138.578  -144.706  -6.128  [-7.1, -5.0]  n/a"
            "  0.10  0.0001  0.0002  REGRESSION",
            "b        seed-level  10 seeds        3.000     3.100     +0.100  [+0.0, +0.2]  n/a"
            "  n/a  0.9000  0.9000  ok",
            "c        pool        8 seeds vs 160  0.915     0.563     -0.352  [-0.4, -0.3]  n/a"
            "  n/a  0.0001  0.0003  REGRESSION",
        ]
    )
    assert mutations._flagged(stdout) == "a -138.578 → -144.706 (-6.128), c 0.915 → 0.563 (-0.352)"
    assert mutations._flagged("PASS: nothing flagged") == "?"


# The CI-wide check (--ci): each distinct bug on every gate .ci/run runs. Its rules are tested on
# gate runs made by hand (GateRun): no gate runs here.


def _ci_run_invocations() -> list[tuple[str, str, tuple[str, ...]]]:
    """The gates .ci/run runs, in its order: (spec, baseline, compare's flags) of each.

    Read from its commands: the quick spec's literal `opt-suite run SPEC` with the literal
    `opt-suite compare RUN --baseline BASELINE FLAGS` after it, and each `gate NAME FLAGS` line,
    which the `gate` function runs as ci/NAME.yaml against ci/baseline-NAME.json.
    """
    text = (ROOT / ".ci" / "run").read_text()
    commands = [line.strip() for line in text.splitlines() if not line.lstrip().startswith("#")]
    body = "\n".join(commands)
    # the gate function: what a `gate NAME FLAGS` line means
    assert 'opt-suite run "ci/$name.yaml" --out "runs/ci-$name"' in body
    assert 'opt-suite compare "runs/ci-$name" --baseline "ci/baseline-$name.json" "$@"' in body
    found, spec = [], None
    for line in commands:
        if "$" in line:  # the gate function's own lines, read above
            continue
        if ran := re.match(r"\.venv/bin/opt-suite run (\S+) ", line):
            spec = ran.group(1)
        elif compared := re.match(r"\.venv/bin/opt-suite compare \S+ --baseline (\S+)(.*)", line):
            assert spec is not None, f".ci/run compares before running: {line}"
            found.append((spec, compared.group(1), tuple(compared.group(2).split())))
            spec = None
        elif gate := re.match(r"gate (\S+)(.*)", line):
            name = gate.group(1)
            found.append(
                (f"ci/{name}.yaml", f"ci/baseline-{name}.json", tuple(gate.group(2).split()))
            )
    return found


def test_the_ci_gates_are_the_gates_ci_runs_in_its_order_with_its_flags():
    ci = [GATES[g] for g in mutations.CI_GATES]
    assert [(g.spec, g.baseline, g.compare_flags) for g in ci] == _ci_run_invocations()
    assert not GATES["offline-power"].in_ci  # a proposal CI does not run
    # CI's gates come first in GATES, so its order is .ci/run's wherever GATES is listed
    assert list(GATES)[: len(ci)] == list(mutations.CI_GATES)


GATES = mutations.GATES


def test_each_distinct_bug_is_one_group_named_by_its_base_name():
    groups = mutations.patch_groups(mutations.MUTATIONS)
    assert list(groups) == [
        "control",
        "smdp-discount",
        "jhat-no-termination-term",
        "beta-frozen",
        "demos-shuffled",
        "bootstrap-per-run",
        "ppo-advantage-sign",
        "segment-fit-ascends",
    ]
    assert [m.name for m in groups["jhat-no-termination-term"]] == [
        "jhat-no-termination-term",
        "jhat-no-termination-term-gym",
        "jhat-no-termination-term-offline",
        "jhat-no-termination-term-power",
        "jhat-no-termination-term-objective",
    ]
    assert {m.gate for m in groups["control"]} == set(GATES)  # every gate's control: one bug
    for members in groups.values():
        assert len({(m.path, m.old, m.new) for m in members}) == 1
        assert len({m.learning for m in members}) == 1
    assert sum(len(members) for members in groups.values()) == len(mutations.MUTATIONS)


#: Each CI gate's stated detectable effect per entry: offline-options has none on the quick spec
#: and gate-gymnasium, 10% on gate-power and gate-objective, 20% on gate-pixels.
DETECTABLE = {
    "quick": {"primitives": 0.1, "offline-options": None},
    "power": {"primitives": 0.1, "offline-options": 0.1},
    "field": {"primitives": 0.1},
    "objective": {"primitives": 0.2, "offline-options": 0.1},
    "gymnasium": {"primitives": 0.05, "offline-options": None, "bc-ppo": None},
    "pixels": {"primitives": 0.1, "offline-options": 0.2},
}
IDENTICAL = "replay: identical: all 4 (method, seed, task) cells equal the baseline"


def _ran(gate, status=0, effects=None, *, run_status=0, replay=IDENTICAL):
    effects = {"primitives": 0.0} if effects is None else effects
    return mutations.GateRun(gate, run_status, status, "detail", replay, effects, 1.0, 1.0)


def _every_gate(**changed):
    """A run of every CI gate, in order, each passing unmoved unless given here."""
    return [changed.get(g, _ran(g)) for g in mutations.CI_GATES]


JHAT = {m.name: m for m in mutations.MUTATIONS}["jhat-no-termination-term"]
CONTROL = mutations.MUTATIONS[0]


@pytest.mark.parametrize(
    ("bug", "runs", "verdict", "detail"),
    [
        # caught on one gate (gate-objective) although the quick spec passed a gap-sized move
        (
            JHAT,
            _every_gate(
                quick=_ran("quick", 0, {"offline-options": -0.035}),
                objective=_ran("objective", 1, {"offline-options": 0.446}),
            ),
            "caught by CI",
            "red on gate-objective",
        ),
        # every gate passed, every entry below its figure: offline-options' 4% on the quick spec
        # is judged by gate-power's 10% (the smallest stated, the first on a tie)
        (
            JHAT,
            _every_gate(
                quick=_ran("quick", 0, {"primitives": 0.0, "offline-options": 0.04}),
                objective=_ran("objective", 0, {"offline-options": 0.047}),
                pixels=_ran("pixels", 0, {"offline-options": -0.15}),
            ),
            mutations.CI_BELOW,
            "every entry on every gate below the detectable effect it is judged by",
        ),
        # judged by another gate's figure: 12% on the quick spec reaches gate-power's 10%
        (
            JHAT,
            _every_gate(quick=_ran("quick", 0, {"offline-options": 0.12})),
            mutations.CI_GAP,
            "offline-options +12.0% on fourrooms-quick ≥ 10% (gate-power's)",
        ),
        # on its own gate an entry is judged by that gate's figure: pixels' 20%, not power's 10%
        (
            JHAT,
            _every_gate(pixels=_ran("pixels", 0, {"offline-options": 0.2})),
            mutations.CI_GAP,
            "offline-options +20.0% on gate-pixels ≥ 20%",
        ),
        # a gap via an entry no CI gate guards: bc-ppo moved at all
        (
            JHAT,
            _every_gate(gymnasium=_ran("gymnasium", 0, {"primitives": 0.0, "bc-ppo": 0.002})),
            mutations.CI_GAP,
            "bc-ppo +0.2% on gate-gymnasium, guarded by no CI gate",
        ),
        # an effect not measured on a passing gate is no evidence of smallness
        (
            JHAT,
            _every_gate(field=dataclasses.replace(_ran("field"), effects=None)),
            mutations.CI_GAP,
            "gate-field: no effect measured",
        ),
        # refused: red without a verdict (compare exit 2; a failed run stops .ci/run before its
        # compare, whatever that compare would say)
        (
            JHAT,
            _every_gate(
                power=_ran("power", 2, None),
                pixels=_ran("pixels", 1, {"offline-options": 0.5}, run_status=1),
            ),
            mutations.CI_REFUSED,
            "red without a verdict on gate-power, gate-pixels",
        ),
        # the control: red anywhere is a false alarm; a baseline not replayed exactly is flagged
        (CONTROL, _every_gate(field=_ran("field", 1)), "false-alarm", "red on gate-field"),
        (
            CONTROL,
            _every_gate(pixels=_ran("pixels", replay="replay: changed: 3 of 144 cells differ")),
            mutations.REPLAY_CHANGED,
            "not replayed exactly on gate-pixels",
        ),
        (
            CONTROL,
            _every_gate(),
            "passed",
            "every CI gate passed and replayed its baseline (6 run)",
        ),
    ],
    ids=[
        "caught-on-one-gate",
        "every-gate-below",
        "judged-by-another-gates-figure",
        "own-figure-first",
        "gap-unguarded-entry",
        "gap-unmeasured",
        "refused",
        "control-false-alarm",
        "control-replay-changed",
        "control-passed",
    ],
)
def test_ci_verdict(bug, runs, verdict, detail):
    assert mutations.ci_verdict(bug, runs, DETECTABLE) == (verdict, detail)


def test_a_learning_bug_not_run_on_every_gate_and_never_red_is_a_gap():
    runs = _every_gate()[:3]
    assert mutations.ci_verdict(JHAT, runs, DETECTABLE) == (
        mutations.CI_GAP,
        "not run on gate-objective, gate-gymnasium, gate-pixels",
    )


def test_judged_by_names_the_gate_whose_figure_is_used():
    assert mutations.judged_by("offline-options", "quick", DETECTABLE) == (0.1, "power")
    assert mutations.judged_by("offline-options", "pixels", DETECTABLE) == (0.2, "pixels")
    assert mutations.judged_by("bc-ppo", "gymnasium", DETECTABLE) is None


@pytest.fixture
def fake_gates(monkeypatch):
    """check_ci with no copy and no gate run: gate-field red (compare exit 1), others passing."""
    ran = []

    def run_gate(name, copy, out, workers):
        ran.append(name)
        return _ran(
            name, 1 if name == "field" else 0, {"primitives": 0.3 if name == "field" else 0.0}
        )

    monkeypatch.setattr(mutations, "prepare", lambda mutation, copy: None)
    monkeypatch.setattr(mutations, "run_gate", run_gate)
    return ran


def test_first_red_stops_a_row_at_its_first_red_gate_and_the_page_says_what_was_not_run(
    fake_gates,
):
    members = mutations.patch_groups(mutations.MUTATIONS)["smdp-discount"]
    stopped = mutations.check_ci(members, 1, DETECTABLE, first_red=True)
    assert fake_gates == ["quick", "power", "field"]
    assert stopped.not_run == ("objective", "gymnasium", "pixels")
    assert (stopped.verdict, stopped.detail) == ("caught by CI", "red on gate-field")
    assert stopped.members == ("smdp-discount", "smdp-discount-field", "smdp-discount-power")
    page = mutations.render_ci(
        [stopped], "python ci/mutations.py --ci", "1.0", DETECTABLE, first_red=True
    )
    row = next(line for line in page.splitlines() if line.startswith("| `smdp-discount`"))
    cells = row.split(" | ")
    # bug, patch, the six gates in .ci/run's order, CI verdict, wall, CPU
    assert cells[2:8] == [
        "missed: primitives +0.0% vs 10%",
        "missed: primitives +0.0% vs 10%",
        "**caught**: primitives +30.0% vs 10%",
        "*not run*",
        "*not run*",
        "*not run*",
    ]
    assert cells[8] == "**caught by CI**: red on gate-field"
    assert "(per-gate checks: `smdp-discount-field`, `smdp-discount-power`)" in cells[0]
    assert "Learning bugs stopped by CI: **1 of 1** (1 by a regression verdict)." in page
    assert "the gates after it are *not run*" in page
    fake_gates.clear()
    whole = mutations.check_ci(members, 1, DETECTABLE)
    assert fake_gates == list(mutations.CI_GATES) and whole.not_run == ()


def test_the_ci_pages_gate_cell_names_a_borrowed_figure():
    cell = mutations._gate_cell_ci(_ran("quick", 0, {"offline-options": 0.04}), True, DETECTABLE)
    assert cell == "missed: offline-options +4.0% vs 10% (gate-power's)"
    unguarded = _ran("gymnasium", 0, {"primitives": 0.01, "bc-ppo": 0.002})
    assert mutations._gate_cell_ci(unguarded, True, DETECTABLE) == "missed: bc-ppo +0.2% vs none"
    assert mutations._gate_cell_ci(_ran("pixels", 2, None), True, DETECTABLE) == "**refused**"
    assert (
        mutations._gate_cell_ci(_ran("field"), False, DETECTABLE)
        == "passed: primitives +0.0% vs 10%"
    )


def test_ci_only_with_an_unknown_bug_exits_2_with_one_line(capsys):
    assert mutations.main(["--ci", "--only", "control", "no-such-bug"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "mutations.py: --ci --only: unknown bug no-such-bug; --ci --list names the bugs"
        " (one per patch, by the base name)"
    )
    # a per-gate name is not a bug's name in --ci
    assert mutations.main(["--ci", "--only", "jhat-no-termination-term-power"]) == 2
    assert mutations.main(["--first-red"]) == 2
    assert capsys.readouterr().err.strip().endswith("--first-red: only with --ci")
