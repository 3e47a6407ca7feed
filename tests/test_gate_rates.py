"""The gate's error rates are measured by the gate itself, fresh seeds paired as the baseline's.

A synthetic store (tiny: 2 methods x 22 seeds x 4 tasks x 12 episodes) where seeds 2 and 3 copy
seeds 0 and 1 exactly and every other seed is independent noise around the same mean.
"""

from __future__ import annotations

import numpy as np
import pytest
from report_fakes import write_store

from opt_suite.cli import main
from opt_suite.report import EpisodeTable, load_baseline
from opt_suite.report.gate import compare_runs
from opt_suite.report.gate_rates import (
    fresh_seed_groups,
    gate_rates,
    relabelled,
    seeds_only,
    worse,
)
from opt_suite.report.gate_rates import measured as stamp_of
from opt_suite.report.source import load_inputs

SEEDS, TASKS, EPISODES = 22, 4, 12


def _table(seeds):
    rng = np.random.default_rng(5)
    noise = rng.normal(size=(2, SEEDS, TASKS, EPISODES))
    noise[:, 2:4] = noise[:, 0:2]  # seeds 2, 3: exact copies of the baseline's seeds
    rows = [
        (m, s, t, e, float(-10.0 + e + 3.0 * t + noise[i, s, t, e]), 100 + e)
        for i, m in enumerate(("a", "b"))
        for s in seeds
        for t in range(TASKS)
        for e in range(EPISODES)
    ]
    return EpisodeTable.from_rows(rows)


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    root = tmp_path_factory.mktemp("rates")
    write_store(root / "base", _table(range(2)))
    assert main(["report", str(root / "base"), "--export-baseline", str(root / "b.json")]) == 0
    write_store(root / "fresh", _table(range(2, SEEDS)))
    baseline = load_baseline(root / "b.json")
    inputs, _ = load_inputs(root / "fresh")
    rates = gate_rates(inputs, baseline, fractions=(0.02, 5.0), permutations=1000)
    return root, baseline, rates


def test_fresh_seeds_are_grouped_like_the_baselines_and_relabelled_in_order(measured):
    _, baseline, _ = measured
    assert fresh_seed_groups(baseline, [0, 1, 2, 3, 4, 5, 6]) == [(2, 3), (4, 5)]
    assert relabelled(baseline, (4, 5)).methods["a"].seeds == (4, 5)
    with pytest.raises(ValueError, match="one rerun needs 2"):
        fresh_seed_groups(baseline, [0, 1, 9])


def test_a_rerun_identical_to_the_baseline_has_p_1_and_each_other_is_a_rerun(measured):
    _, _, rates = measured
    assert rates.reruns == 10
    assert rates.smallest_p[0] == 1.0  # seeds 2, 3 paired with 0, 1: every difference is 0
    assert max(rates.smallest_p[1:]) < 1.0


def test_false_alarms_stay_near_alpha_and_a_whole_range_is_always_caught(measured):
    _, _, rates = measured
    assert rates.false_alarms <= 2 and rates.false_alarm_rate <= 0.2
    assert rates.power_rate(5.0) == 1.0  # every pair far worse: p = 2**-8, times 2 by Holm
    assert rates.power_rate(0.02) < rates.power_rate(5.0)


def test_worse_moves_the_baseline_the_way_that_makes_the_run_look_worse(measured):
    _, baseline, _ = measured
    amount = np.arange(TASKS, dtype=float)
    shifted = worse(baseline, "a", "auc", amount)
    delta = shifted.methods["a"].metrics["auc"] - baseline.methods["a"].metrics["auc"]
    np.testing.assert_allclose(delta, np.broadcast_to(amount, delta.shape))  # higher is better
    assert shifted.methods["b"] is baseline.methods["b"]


def test_the_command_prints_both_rates_and_exits_0_within_alpha(measured, capsys):
    root, _, rates = measured
    capsys.readouterr()
    code = main(
        [
            "gate-rates",
            str(root / "fresh"),
            "--baseline",
            str(root / "b.json"),
            "--degradation",
            "5",
            "--permutations",
            "1000",
        ]
    )
    out = capsys.readouterr().out
    assert code == (0 if rates.false_alarm_rate <= 0.05 else 1)
    assert "10 reruns under fresh seeds" in out and "power at 5 of each task's range: 1.000" in out


def test_a_rerun_is_compared_on_its_own_seeds_with_the_same_result(measured):
    # gate_rates narrows the run to the rerun's seeds before comparing (speed): the gate ignores
    # the other seeds, so every p-value and difference is the one of the whole run.
    root, baseline, _ = measured
    inputs, _ = load_inputs(root / "fresh")
    group = fresh_seed_groups(baseline, sorted(set(inputs.episodes.seed.tolist())))[3]
    narrowed = seeds_only(inputs, group)
    assert sorted(set(narrowed.episodes.seed.tolist())) == list(group)
    paired = relabelled(baseline, group)
    whole, alone = compare_runs(inputs, paired), compare_runs(narrowed, paired)
    assert [(r.method, r.p_value, r.difference) for r in whole.rows] == [
        (r.method, r.p_value, r.difference) for r in alone.rows
    ]


def test_the_stamp_holds_each_entrys_share_of_reruns_caught(measured):
    # The stamp records what gate_rates counted per entry, not only the pooled share: the
    # detectable effect is per entry (measured_rates.detectable_losses).
    _, baseline, rates = measured
    stamp = stamp_of(rates, baseline, "2026-11-29")
    assert stamp.power_by_entry is not None
    for fraction, caught in rates.power.items():
        per = stamp.power_by_entry[str(fraction)]
        assert per == {name: n / rates.reruns for name, n in caught.items()}
        assert sum(per.values()) / len(per) == pytest.approx(stamp.power[str(fraction)])
    assert stamp.power_by_entry["5.0"] == {"a": 1.0, "b": 1.0}
