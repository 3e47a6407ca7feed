"""The one verdict rule (opt_suite/verdict.py) and the seed bootstrap under it (stats.py).

Matrices are small and built so that the expected interval is known by hand: every pair won
gives P = 1 in every resample, identical methods give a difference of 0 in every resample.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from opt_suite import stats, verdict
from opt_suite.spec.schema import ReportSpec


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def decide(x, y, *, normalised=False, margin=0.1, per_seed=True, comparisons=1, reps=2000):
    return verdict.compare(
        np.asarray(x, dtype=float),
        np.asarray(y, dtype=float),
        normalised=normalised,
        margin=margin,
        tasks_per_seed=per_seed,
        comparisons=comparisons,
        reps=reps,
        rng=rng(),
    )


# Entry [s, t] = 10 s + t: a resampled entry's tens digit is its seed, its units digit its task.
LABELLED = 10.0 * np.arange(5)[:, None] + np.arange(8)[None, :]


def test_hierarchical_resampling_keeps_each_row_within_one_seed():
    def one_seed_per_row(m):
        seeds_of_row = np.floor(m / 10)
        return np.all(seeds_of_row == seeds_of_row[..., :1], axis=(-2, -1)).astype(float)

    dist = stats.seed_bootstrap((LABELLED,), one_seed_per_row, 300, rng(), tasks_per_seed=True)
    assert dist.shape == (300,) and np.all(dist == 1.0)


def test_hierarchical_resampling_draws_tasks_per_seed_and_crossed_shares_them():
    def rows_share_tasks(m):
        tasks = m % 10
        return np.all(tasks == tasks[..., :1, :], axis=(-2, -1)).astype(float)

    crossed = stats.seed_bootstrap((LABELLED,), rows_share_tasks, 300, rng(), tasks_per_seed=False)
    nested = stats.seed_bootstrap((LABELLED,), rows_share_tasks, 300, rng(), tasks_per_seed=True)
    assert np.all(crossed == 1.0)
    # Per seed, 5 rows drawing the same 8 tasks independently: (8^-8)^4, never in 300 draws.
    assert np.all(nested == 0.0)


def test_several_matrices_are_resampled_with_the_same_indices():
    dist = stats.seed_bootstrap(
        (LABELLED, LABELLED + 0.5),
        lambda a, b: np.all(b - a == 0.5, axis=(-2, -1)).astype(float),
        200,
        rng(),
        tasks_per_seed=True,
    )
    assert np.all(dist == 1.0)
    with pytest.raises(ValueError, match="share one"):
        stats.seed_bootstrap((LABELLED, LABELLED[:4]), stats.mean, 10, rng(), True)


def test_every_pair_won_is_better_and_every_pair_lost_is_worse():
    low, high = np.zeros((5, 8)), np.ones((5, 8))
    better = decide(high, low)
    assert (better.outcome, better.effect, better.ci_low, better.ci_high) == ("better", 1, 1, 1)
    assert better.detectable is None and better.caveat == ""
    assert decide(low, high).outcome == "worse"
    assert decide(high, low, normalised=True).outcome == "better"  # IQM 1 - 0 in every resample


def test_identical_methods_are_equivalent_on_both_scales():
    x = LABELLED / 100
    assert decide(x, x).outcome == "equivalent"  # every pair tied: P = 0.5 exactly
    same = decide(x, x, normalised=True)
    assert (same.outcome, same.effect, same.ci_low, same.ci_high) == ("equivalent", 0, 0, 0)


def test_one_seed_losing_its_tasks_makes_a_pair_count_verdict_inconclusive():
    # Issue 35's DoorKey shape: 4 seeds win 7 of 8 tasks, seed 1 wins 1 of 8 (P = 29/40). As 40
    # independent pairs it is clear (seeds resampled within each task: [0.60, 0.825]); with the
    # seed as the unit, drawing seed 1 twice or more is common, and the interval reaches below 0.5.
    wins = np.ones((5, 8))
    wins[:, 0] = 0.0
    wins[1] = 0.0
    wins[1, 7] = 1.0
    assert stats.mean(wins) == 0.725
    assert stats.stratified_bootstrap_ci(wins, stats.mean, 2000, rng())[0] > 0.5
    found = decide(wins, np.full((5, 8), 0.5))
    assert found.effect == 0.725 and found.ci_low < 0.5 < found.ci_high
    assert found.outcome == "inconclusive"
    assert found.detectable == pytest.approx((found.ci_high - found.ci_low) / 2)
    assert found.resampled == "seeds→tasks"
    assert "inconclusive: paired P 0.72 [" in found.text() and "detectable ≥" in found.text()


def test_a_small_difference_inside_the_margin_is_equivalent_a_wide_one_inconclusive():
    base = np.tile(np.linspace(0.0, 1.0, 8), (5, 1))
    noise = np.array([[0.02, -0.02, 0.01, -0.01, 0.0, 0.02, -0.02, 0.01]] * 5)
    near = decide(base + noise, base, normalised=True)
    assert near.outcome == "equivalent" and -0.1 <= near.ci_low <= near.ci_high <= 0.1
    assert near.margin_text() == "±0.10 normalised"
    # Seeds that disagree (+0.5 and -0.5 around no difference): resampled seeds move the IQM
    # difference far beyond the margin either way, and no side is shown.
    seed_offsets = np.array([[0.5], [-0.5], [0.4], [-0.4], [0.0]])
    far = decide(base + seed_offsets, base, normalised=True)
    assert far.outcome == "inconclusive" and far.ci_low < -0.1 and far.ci_high > 0.1
    assert far.detectable == pytest.approx((far.ci_high - far.ci_low) / 2)


def test_too_few_seeds_is_no_verdict_with_a_caveat():
    found = decide(np.ones((2, 8)), np.zeros((2, 8)))  # every pair won, but 2 seeds
    assert found.outcome == "inconclusive" and found.detectable is not None
    assert found.caveat.startswith("NO VERDICT: 2 seeds, fewer than 3")
    assert found.caveat in found.text()


def test_bonferroni_widens_each_interval_and_is_stated():
    assert verdict.interval_confidence(4) == pytest.approx(0.9875)
    x = np.random.default_rng(3).normal(size=(5, 8))
    y = np.random.default_rng(4).normal(size=(5, 8))
    one, six = decide(x, y, comparisons=1), decide(x, y, comparisons=6)
    assert six.ci_low <= one.ci_low and one.ci_high <= six.ci_high
    assert one.interval_label() == "95% CI [seeds→tasks]"
    assert decide(x, y, per_seed=False, comparisons=4).interval_label() == "98.75% CI [seeds×tasks]"
    assert "6 comparisons" in verdict.familywise_statement(6)
    assert "99.17%" in verdict.familywise_statement(6)


def test_the_verdict_is_a_function_of_its_inputs_and_seed():
    x = np.random.default_rng(5).normal(size=(5, 8))
    assert decide(x, x[::-1]) == decide(x, x[::-1])


def test_bad_input_is_a_clear_error():
    with pytest.raises(ValueError, match=r"margin on the P scale must be in \(0, 0.5\]"):
        decide(np.ones((5, 2)), np.ones((5, 2)), margin=0.7)
    with pytest.raises(ValueError, match="margin on the normalised scale"):
        decide(np.ones((5, 2)), np.ones((5, 2)), normalised=True, margin=0.0)
    with pytest.raises(ValueError, match="same"):
        decide(np.ones((5, 2)), np.ones((4, 2)))
    with pytest.raises(ValueError, match="NaN"):
        decide(np.full((5, 2), np.nan), np.ones((5, 2)), normalised=True)


def test_the_specs_default_margins_are_the_verdicts():
    fields = {f.name: f.default for f in dataclasses.fields(ReportSpec)}
    assert fields["equivalence_normalised"] == verdict.DEFAULT_MARGIN_NORMALISED
    assert fields["equivalence_p"] == verdict.DEFAULT_MARGIN_P


def test_references_that_define_no_scale_are_said_beside_the_verdict():
    from opt_suite.report.normalise import References
    from opt_suite.report.verdicts import Design, entry_verdict

    seeds, tasks = (0, 1, 2), (0, 1)
    flat = np.zeros((3, 2))  # random and expert earn the same on every pair: no scale anywhere
    refs = References(seeds, tasks, flat, flat, "expert")
    design = Design(refs, verdict.Margins(), False, 1, 200)
    x, y = {"auc": np.ones((3, 2))}, {"auc": np.zeros((3, 2))}
    found = entry_verdict("auc", seeds, tasks, x, y, design, rng())
    assert (found.scale, found.outcome) == ("P", "better")
    assert found.caveat.startswith("NO NORMALISED SCALE")
    scaled = Design(References(seeds, tasks, flat, flat + 10.0, "expert"), verdict.Margins(),
                    False, 1, 200)  # fmt: skip
    found = entry_verdict("auc", seeds, tasks, x, y, scaled, rng())
    assert (found.scale, found.effect, found.caveat) == ("normalised", 0.1, "")
