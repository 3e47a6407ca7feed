"""The gate with a pool of baseline seeds as the unit (``compare_runs(..., unit="pool")``).

The baseline holds many seeds; the run's seeds are compared, unpaired, with the baseline's seeds
the run does not hold, each seed scored by its mean over the test tasks of its values divided by
the task's range, by a one-sided two-sample permutation test (:func:`opt_suite.stats
.permutation_test`). Synthetic runs as in ``test_compare_seed_unit``: the return of episode ``e``
of seed ``s`` on task ``t`` for method ``m`` is ``-10 + e + 3 t + shift[m] + offset[m][s]``, so a
seed's auc is its method's auc plus ``offset[m][s]`` on every task.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest
from report_fakes import write_store
from test_compare_seed_unit import TASKS, inputs_of, table

from opt_suite import stats
from opt_suite.cli import main
from opt_suite.report import (
    CompareError,
    EpisodeTable,
    ReportInputs,
    analyse,
    compare_runs,
    export_baseline,
    format_comparison,
    load_baseline,
)
from opt_suite.report.baseline import stamp_baseline
from opt_suite.report.gate import POOL_FACTOR, power_problem
from opt_suite.report.gate_rates import gate_rates, measured, seeds_only
from opt_suite.report.replay import format_replay


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def offsets(seeds: int) -> dict[str, list[float]]:
    """Each seed's options a little better or worse, the same way in every run of that seed."""
    return {"a": [math.sin(s) for s in range(seeds)], "b": [math.cos(3 * s) for s in range(seeds)]}


def pool_baseline(seeds: int, tmp_path):
    inputs = inputs_of(table(seeds, offsets(seeds)))
    path = export_baseline(inputs, analyse(inputs), tmp_path / "pool.json", "pool")
    return load_baseline(path)


def brute_force_p(new: np.ndarray, old: np.ndarray) -> float:
    """The two-sample p-value by hand: the share of labellings whose mean difference is <= ours."""
    pooled = np.concatenate([new, old])
    observed = new.mean() - old.mean()
    as_low = total = 0
    for chosen in itertools.combinations(range(pooled.size), new.size):
        rest = [i for i in range(pooled.size) if i not in chosen]
        total += 1
        as_low += pooled[list(chosen)].mean() - pooled[rest].mean() <= observed + 1e-12
    return as_low / total


class TestTwoSamplePermutationTest:
    def test_exact_on_an_enumerable_case(self):
        # C(6, 2) = 15 labellings <= reps: every one is enumerated, as brute_force_p does
        new, old = np.array([0.3, -1.2]), np.array([0.5, 2.0, -0.1, 1.1])
        expected = brute_force_p(new, old)
        # new's mean -0.45 vs 0.875: only {-1.2, -0.1} (-0.65) and {-1.2, 0.3} (observed) are
        # as low, so 2 of 15
        assert expected == pytest.approx(2 / 15)
        assert stats.permutation_test(new, old, 15, rng()) == pytest.approx(expected)
        assert stats.permutation_smallest_p(2, 4, 15) == pytest.approx(1 / 15)

    def test_monte_carlo_approaches_the_exact_value(self):
        # C(20, 4) = 4845 labellings > 4000 reps: Monte Carlo, (1 + hits) / (1 + reps)
        data = rng(3).normal(size=20)
        new, old = data[:4] - 0.4, data[4:]
        p = stats.permutation_test(new, old, 4000, rng())
        assert p == pytest.approx(brute_force_p(new, old), abs=0.03)
        assert stats.permutation_smallest_p(4, 16, 4000) == pytest.approx(1 / 4001)
        # the smallest p is reached: a run far below every pool seed
        assert stats.permutation_test(new - 100, old, 4000, rng()) == pytest.approx(1 / 4001)

    def test_holds_its_level_under_the_null(self):
        # 400 nulls: 8 run seeds and 32 pool seeds from one distribution (a skewed one, as
        # returns are); rejections at 0.05 stay near 0.05 (binomial s.d. 0.011)
        draws = rng(7).exponential(size=(400, 40))
        p = np.array(
            [stats.permutation_test(d[:8], d[8:], 999, rng(i)) for i, d in enumerate(draws)]
        )
        assert 0.025 <= np.mean(p <= 0.05) <= 0.08
        assert 0.07 <= np.mean(p <= 0.1) <= 0.14

    def test_seeded_determinism(self):
        data = rng(1).normal(size=60)
        first = stats.permutation_test(data[:8], data[8:], 2000, rng(5))
        assert stats.permutation_test(data[:8], data[8:], 2000, rng(5)) == first
        assert stats.permutation_test(data[:8], data[8:], 2000, rng(6)) != first

    def test_empty_samples_are_refused(self):
        with pytest.raises(ValueError, match="at least one value"):
            stats.permutation_smallest_p(0, 4, 100)


def test_a_replay_of_pool_seeds_passes_against_the_others(tmp_path):
    baseline = pool_baseline(40, tmp_path)
    run = inputs_of(table(8, offsets(8)))  # seeds 0-7, which the pool baseline holds
    result = compare_runs(run, baseline, unit="pool")
    assert result.replay is not None and result.replay.identical
    assert result.replay.compared == 2 * 8 * TASKS
    assert "identical: all 96" in format_replay(result.replay)
    assert result.regressions == [] and result.pool == (8, 32)
    for row in result.rows:
        assert (row.test, row.runs) == ("pool", "8 seeds vs 32")
        assert row.p_value > 0.05
        # the loss a mutation check reads is paired on the replayed seeds: none, not how seeds
        # 0-7 happen to differ from the pool's mean (sin and cos offsets: they do differ)
        assert row.degradation == 0.0
    text = format_comparison(result)
    assert "the run's 8 seeds against the baseline's 32 other seeds, unpaired" in text
    assert "10000 random labellings, seeded" in text
    assert "Holm-Bonferroni corrected over 2 method entries" in text and "PASS" in text


def test_an_injected_loss_fails(tmp_path):
    baseline = pool_baseline(40, tmp_path)
    moved = offsets(8)
    moved["a"] = [x - 2.0 for x in moved["a"]]  # half of each task's range (4) on every seed
    result = compare_runs(inputs_of(table(8, moved)), baseline, unit="pool")
    assert result.regressions == ["a"]
    a = next(r for r in result.rows if r.method == "a")
    assert a.p_value == pytest.approx(1 / 10_001)  # below every pool seed: no labelling lower
    # the loss in gate-rates' unit: 2 auc of the range of a's and b's values on each task
    ranges = np.ptp(np.concatenate([baseline.methods[m].metrics["auc"] for m in "ab"]), axis=0)
    assert a.degradation == pytest.approx(float(np.mean(2.0 / ranges)), rel=0.05)


def test_the_loss_of_a_run_on_seeds_the_pool_lacks_is_against_the_pools_mean(tmp_path):
    baseline = pool_baseline(40, tmp_path)
    run = seeds_only(inputs_of(table(48, offsets(48))), range(40, 48))  # seeds 40-47
    result = compare_runs(run, baseline, unit="pool")
    assert result.replay is None or result.replay.compared == 0
    ranges = np.ptp(np.concatenate([baseline.methods[m].metrics["auc"] for m in "ab"]), axis=0)
    for row in result.rows:
        run_auc = np.asarray(offsets(48)[row.method][40:])  # a seed's auc moves by its offset
        pool_auc = np.asarray(offsets(40)[row.method][:40])
        # every task's range is the same here, so the loss is the offsets' mean gap over it
        assert row.degradation == pytest.approx((pool_auc.mean() - run_auc.mean()) / ranges[0])


def test_a_pool_smaller_than_four_times_the_run_is_refused(tmp_path):
    baseline = pool_baseline(8 + POOL_FACTOR * 8 - 1, tmp_path)
    with pytest.raises(CompareError, match=r"a holds 31 seeds other than the run's 8.*at least 4"):
        compare_runs(inputs_of(table(8, offsets(8))), baseline, unit="pool")


def test_a_run_on_other_test_tasks_is_refused(tmp_path):
    baseline = pool_baseline(40, tmp_path)
    run = table(8, offsets(8))
    keep = run.task < TASKS - 1  # the run lacks the last test task
    fewer = EpisodeTable(**{f.name: getattr(run, f.name)[keep] for f in dataclasses.fields(run)})
    with pytest.raises(CompareError, match="pool unit compares seeds on the same test tasks"):
        compare_runs(inputs_of(fewer), baseline, unit="pool")


def test_power_problem_knows_the_pool_units_smallest_p():
    # 1 run seed against 4: C(5, 1) = 5 labellings, smallest p 1/5 > 0.05
    message = power_problem({"a": 1}, 6, unit="pool", pool={"a": 4})
    assert message is not None and "1 seeds against a pool of 4 (the pool unit)" in message
    assert power_problem({"a": 8, "b": 8}, 6, unit="pool", pool={"a": 160, "b": 160}) is None
    # 4 entries x 1/(1 + 50) > 0.05: too few permutations for Holm over 4
    assert power_problem(dict.fromkeys("abcd", 8), 6, unit="pool", pool=dict.fromkeys("abcd", 160),
                         permutations=50) is not None  # fmt: skip


def test_gate_rates_reruns_groups_of_the_run_size_against_the_whole_pool(tmp_path):
    baseline = pool_baseline(40, tmp_path)
    fresh = inputs_of(table(40 + 24, offsets(64)))  # seeds 40-63: three reruns of 8
    rates = gate_rates(fresh, baseline, unit="pool", run_size=8, fractions=(0.5,), permutations=999)
    assert rates.unit == "pool" and rates.reruns == 3
    assert rates.false_alarms == 0
    assert rates.power[0.5] == {"a": 3, "b": 3}  # half of each range below: caught every time
    with pytest.raises(ValueError, match="run_size"):
        gate_rates(fresh, baseline, unit="pool")


def test_compare_refuses_a_pool_baseline_under_another_unit_and_vice_versa(tmp_path, capsys):
    write_store(tmp_path / "base", table(40, offsets(40)))
    baseline = tmp_path / "pool.json"
    export = ["report", str(tmp_path / "base"), "--export-baseline", str(baseline)]
    assert main([*export, "--unit", "pool"]) == 0
    loaded = load_baseline(baseline)
    assert loaded.gate_unit == "pool"
    # seeds 40-79 of the stored spec: 5 reruns of 8, or 1 of 40
    fresh = ReportInputs(table(80, offsets(80)), "synthetic", "0123456789abcdef")
    rates = gate_rates(fresh, loaded, unit="pool", run_size=8, fractions=(0.5,), permutations=999)
    stamp_baseline(baseline, measured(rates, loaded, "2026-11-29"))
    write_store(tmp_path / "run", table(8, offsets(8)))
    run = ["compare", str(tmp_path / "run"), "--baseline", str(baseline)]
    capsys.readouterr()
    assert main(run) == 0  # the recorded unit, measured: seeds 0-7 against the other 32
    out = capsys.readouterr().out
    assert "replay: identical" in out and "8 seeds vs 32" in out and "PASS" in out
    assert "measured rates (2026-11-29, 5 reruns under fresh seeds)" in out
    assert main([*run, "--unit", "seed"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "settings.gate_unit is 'pool'" in err[0] and str(baseline) in err[0]
    # A pair-unit baseline stamped for its own test, compared with --unit pool: its rates were
    # never measured for the pool unit (one line, exit 2).
    paired = tmp_path / "pair.json"
    assert main(["report", str(tmp_path / "base"), "--export-baseline", str(paired)]) == 0
    loaded = load_baseline(paired)
    rates = gate_rates(fresh, loaded, fractions=(0.5,), permutations=999)
    stamp_baseline(paired, measured(rates, loaded, "2026-11-29"))
    capsys.readouterr()
    assert (
        main(["compare", str(tmp_path / "run"), "--baseline", str(paired), "--unit", "pool"]) == 2
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "measured_rates are for the pair unit" in err[0]
    assert "this compare uses the pool unit" in err[0]
