"""The run-time model: cells priced from a calibration, the plan scheduled as the runner does it.

docs/estimates.md measures it against timed runs; these tests check the pieces on cases whose
answer is known by hand, and that ``validate`` and the progress line use them.
"""

from __future__ import annotations

import io
import math
import subprocess
import sys
from pathlib import Path

import pytest

from opt_suite.runner.cell import Cell
from opt_suite.runner.cost_model import (
    Calibration,
    Rate,
    Sample,
    estimate_time,
    fit,
    load_calibration,
    schedule,
)
from opt_suite.runner.progress import Progress, eta_from_prices
from opt_suite.stages import Stage

ROOT = Path(__file__).resolve().parents[1]
KEY = ("evaluation", "tf_agents", "gymnasium:CartPole-v1", "primitives")


def _cell(cell_id, stage=Stage.EVALUATION, seed=0, position=0, deps=()):
    return Cell(cell_id, stage, seed, None, position, tuple(deps), {})


def test_fit_recovers_a_line_and_takes_one_budget_as_proportional():
    line = [Sample(KEY, u, 2.0 + 0.001 * u, "a") for u in (1000, 2000, 4000)]
    rate = fit(line)[KEY]
    assert rate.per_cell == pytest.approx(2.0) and rate.per_unit == pytest.approx(0.001)
    assert rate.cells == 3 and rate.specs == ("a",)
    # One budget cannot separate the terms: time proportional to env steps (double the budget,
    # double the time), the first-order truth for cells that step an env.
    one = fit([Sample(KEY, 1000, 3.0, "a"), Sample(KEY, 1000, 5.0, "b")])[KEY]
    assert (one.per_cell, one.per_unit) == (0.0, pytest.approx(0.004))
    # No env steps (an offline discovery): a constant, the mean.
    key = ("discovery", "offline_options", "fourrooms", "")
    flat = fit([Sample(key, 0, 3.0, "a"), Sample(key, 0, 5.0, "a")])[key]
    assert (flat.per_cell, flat.per_unit) == (4.0, 0.0)


def test_fit_never_gives_negative_terms():
    # Time falling with units would fit a negative slope: clamped to a constant.
    falling = fit([Sample(KEY, 1000, 5.0, "a"), Sample(KEY, 2000, 3.0, "a")])[KEY]
    assert falling.per_unit == 0.0 and falling.per_cell == pytest.approx(4.0)
    # A line through below the origin: refitted through it.
    steep = fit([Sample(KEY, 1000, 1.0, "a"), Sample(KEY, 2000, 4.0, "a")])[KEY]
    assert steep.per_cell == 0.0 and steep.per_unit > 0


def test_a_key_never_timed_is_priced_by_the_nearest_one_and_says_so():
    rates = {
        KEY: Rate(0.0, 0.001, 5),
        KEY[:3] + ("offline_options",): Rate(0.0, 0.003, 5),
        ("discovery", "offline_options", "fourrooms", ""): Rate(7.0, 0.0, 5),
    }
    calibration = Calibration(rates, 1.0, 0.0)
    assert calibration.price(KEY, 1000) == (pytest.approx(1.0), 0)
    # another method's evaluation on the same learner and env: their mean
    assert calibration.price(KEY[:3] + ("bc_option",), 1000) == (pytest.approx(2.0), 1)
    # the same method on another environment
    assert calibration.price(("discovery", "offline_options", "minigrid", ""), 0)[1] == 2
    # the stage alone
    assert calibration.price(("discovery", "eigenoptions", "minigrid", ""), 0) == (7.0, 3)
    seconds, dropped = calibration.price(("references", "ppo_expert", "x", ""), 10)
    assert math.isnan(seconds) and dropped == 4


def test_calibration_round_trips_through_its_file(tmp_path):
    rates = {KEY: Rate(0.5, 2.5e-05, 12, ("a", "b"))}
    calibration = Calibration(rates, 13.0, 0.01, "here", {"tf_agents": 14.5})
    path = tmp_path / "cell_costs.json"
    path.write_text(calibration.to_json())
    assert load_calibration(path) == calibration
    assert load_calibration(tmp_path / "absent.json") is None


def test_schedule_runs_ready_cells_in_the_runners_order_on_free_workers():
    # Two seeds: each a discovery (4 s, 1 s) then an evaluation (2 s) that reads it.
    d0, d1 = _cell("d0", Stage.DISCOVERY, 0), _cell("d1", Stage.DISCOVERY, 1)
    e0, e1 = _cell("e0", seed=0, deps=["d0"]), _cell("e1", seed=1, deps=["d1"])
    seconds = {"d0": 4.0, "d1": 1.0, "e0": 2.0, "e1": 2.0}
    # One worker: everything in a row.
    assert schedule([e1, e0, d1, d0], seconds, 1) == 9.0
    # Two: d0 | d1 then e1 (ready at 1, done at 3), e0 after d0: 4 + 2.
    assert schedule([e1, e0, d1, d0], seconds, 2) == 6.0
    # More workers than cells: the longest chain.
    assert schedule([e1, e0, d1, d0], seconds, 8) == 6.0
    # A dependency outside the cells (done before: a sweep's earlier variant) does not wait.
    assert schedule([e0], seconds, 1) == 2.0
    with pytest.raises(ValueError, match="workers"):
        schedule([e0], seconds, 0)


def test_estimate_time_adds_the_fixed_cost_and_skips_cells_already_done():
    d0, e0 = _cell("d0", Stage.DISCOVERY), _cell("e0", deps=["d0"])
    dkey = ("discovery", "offline_options", "fourrooms", "")
    keyed = {"d0": (dkey, 0.0), "e0": (KEY, 2000.0)}
    calibration = Calibration({dkey: Rate(3.0, 0.0, 1), KEY: Rate(0.0, 0.001, 1)}, 10.0, 0.5, "m")
    whole = estimate_time([d0, e0], keyed, calibration, 2)
    assert whole.wall_s == pytest.approx(3.0 + 2.0 + 10.0 + 0.5 * 2)
    assert (whole.cells, whole.fallback, whole.unpriced) == (2, 0, 0)
    assert "about 16s with --workers 2 on m" == whole.describe()
    # A learner's own fixed cost per run replaces the default; a learner never timed keeps it.
    by_learner = Calibration(calibration.rates, 10.0, 0.5, "m", {"tf_agents": 20.0})
    tf = estimate_time([d0, e0], keyed, by_learner, 2, learner="tf_agents")
    assert tf.wall_s == pytest.approx(whole.wall_s + 10.0)
    assert estimate_time([d0, e0], keyed, by_learner, 2, learner="other").wall_s == whole.wall_s
    again = estimate_time([d0, e0], keyed, calibration, 2, done={"d0"})
    assert again.wall_s == pytest.approx(2.0 + 10.0 + 0.5) and again.cells == 1
    bare = Calibration({KEY: Rate(0.0, 0.001, 1)}, 10.0, 0.0)
    missing = estimate_time([d0, e0], keyed, bare, 2)
    assert math.isnan(missing.wall_s) and missing.unpriced == 1
    assert missing.describe().startswith("no time estimate: 1 of 2 cells")


def test_the_eta_prices_what_is_left():
    assert eta_from_prices(10.0, 0.0, 5.0) is None
    assert eta_from_prices(10.0, 2.0, 6.0) == pytest.approx(30.0)
    # One long cell (an expert) left behind four short ones: the count says 2.5 s, the price 40 s.
    prices = {"a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0, "expert": 40.0}
    stream = io.StringIO()
    progress = Progress(5, stream=stream, prices=prices)
    counted = Progress(5, stream=io.StringIO())
    for p in (progress, counted):
        for cell_id in "abcd":
            p.finished(cell_id)
        p.start -= 10.0  # 10 s elapsed
    assert progress.eta() == pytest.approx(100.0, rel=0.01)
    assert counted.eta() == pytest.approx(2.5, rel=0.01)
    # Reused cells are neither pace nor left; a failed one is no longer left.
    reused = Progress(5, stream=io.StringIO(), prices=prices)
    reused.reuse(["a", "b"])
    assert reused.eta() is None and reused.done == reused.reused == 2
    reused.finished("c")
    reused.failed_cell("d")
    reused.start -= 4.0
    assert reused.eta() == pytest.approx(4.0 / 2.0 * 40.0, rel=0.01)
    # A price that is not finite: the cells are counted instead.
    assert Progress(2, stream=io.StringIO(), prices={"a": math.nan, "b": 1.0})._prices is None


def _validate(*args):
    return subprocess.run(
        [sys.executable, "-m", "opt_suite", "validate", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )


def test_validate_prints_the_time_estimate_and_bounds_its_workers():
    done = _validate("fourrooms-quick", "--workers", "1")
    assert done.returncode == 0, done.stderr
    line = next(line for line in done.stdout.splitlines() if line.strip().startswith("time:"))
    assert "with --workers 1 on the project's 2-core machine" in line, line
    bad = _validate("fourrooms-quick", "--workers", "-3")
    assert bad.returncode == 2 and bad.stdout == ""
    assert "--workers must be between 0 and" in bad.stderr and "got -3" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_the_committed_calibration_and_its_page_are_fresh():
    result = subprocess.run(
        [sys.executable, "docs/gen_estimates.py", "--check"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
