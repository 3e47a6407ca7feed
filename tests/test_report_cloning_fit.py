"""Cloning fit: collected from the controls' discovery cells and tabled in leaderboard.md."""

from __future__ import annotations

import dataclasses
import json
import math

from report_fakes import linear_table, stored_run

from opt_suite.report import ReportInputs, write_report_files
from opt_suite.report.cloning_fit import SECTION, CloningFit, cloning_fit_markdown, cloning_fits
from opt_suite.spec.schema import ReportSpec


@dataclasses.dataclass
class _Cell:
    kind: str
    method: str | None
    status: str
    info: dict


def _fit(accuracy, log_likelihood, held=None):
    info = {"fit_accuracy": accuracy, "fit_log_likelihood": log_likelihood}
    if held is not None:
        info |= {"held_out_accuracy": held[0], "held_out_log_likelihood": held[1]}
    return info


def test_fits_are_means_over_done_discoveries_that_recorded_one():
    cells = [
        _Cell("discovery", "bc", "done", _fit(0.8, -0.5, (0.6, -1.0))),
        _Cell("discovery", "bc", "done", _fit(0.6, -0.7, (0.4, -2.0))),
        _Cell("discovery", "bc", "failed", _fit(0.0, -9.0, (0.0, -9.0))),  # not a fit made
        _Cell("evaluation", "bc", "done", _fit(0.0, -9.0)),  # not discovery
        _Cell("discovery", "ours", "done", {"likelihood": -0.3}),  # no fit: not a control
        _Cell("discovery", "one-demo", "done", _fit(1.0, -0.1)),  # nothing to hold out
    ]
    fits = cloning_fits(cells)
    assert set(fits) == {"bc", "one-demo"}
    bc = fits["bc"]
    assert (bc.seeds, bc.held_out_seeds) == (2, 2)
    assert math.isclose(bc.accuracy, 0.7) and math.isclose(bc.log_likelihood, -0.6)
    assert math.isclose(bc.held_out_accuracy, 0.5) and math.isclose(
        bc.held_out_log_likelihood, -1.5
    )
    assert math.isnan(fits["one-demo"].held_out_accuracy)


def test_a_missing_held_out_fit_is_shown_as_such_and_said():
    text = cloning_fit_markdown({"one-demo": CloningFit(1.0, -0.1, math.nan, math.nan, 3, 1)})
    assert "| one-demo | 1.000 | -0.100 | — | — | 3 (1) |" in text
    assert "no held-out fit on 2 of 3 seeds" in text
    assert cloning_fit_markdown({}) == ""


def test_the_leaderboard_has_the_section_only_when_a_control_recorded_a_fit(tmp_path):
    table = linear_table({"primitives": 0.0, "bc": 5.0})
    inputs = ReportInputs(
        table,
        spec_name="toy-spec",
        spec_hash="feedc0de",
        settings=ReportSpec(threshold=0.0, bootstrap=50),
        methods=("primitives", "bc"),
        sections={"cloning_fit": {"bc": CloningFit(0.75, -0.5, 0.5, -1.25, 2, 2)}},
    )
    write_report_files(inputs, tmp_path / "with")
    text = (tmp_path / "with" / "leaderboard.md").read_text()
    assert "## Cloning fit" in text and "| bc | 0.750 | -0.500 | 0.500 | -1.250 | 2 (2) |" in text
    board = json.loads((tmp_path / "with" / "leaderboard.json").read_text())
    assert board["cloning_fit"]["bc"]["held_out_accuracy"] == 0.5
    write_report_files(dataclasses.replace(inputs, sections={}), tmp_path / "without")
    assert "Cloning fit" not in (tmp_path / "without" / "leaderboard.md").read_text()
    assert "cloning_fit" not in json.loads((tmp_path / "without" / "leaderboard.json").read_text())


def test_the_section_collects_the_reported_entries_only_and_writes_null_for_undefined():
    cells = [
        _Cell("discovery", "bc", "done", _fit(0.5, -1.0)),
        _Cell("discovery", "dropped", "done", _fit(0.5, -1.0)),
    ]
    data = SECTION.collect(cells, ["bc"], stored_run())
    assert list(data) == ["bc"]
    assert SECTION.json(data)["cloning_fit"]["bc"]["held_out_accuracy"] is None
    assert SECTION.collect([], ["bc"], stored_run()) == {}


def test_bc_ppos_fit_comes_from_its_evaluation_cells_as_a_mean_over_seeds_and_tasks():
    cells = [
        _Cell("discovery", "bc-option", "done", _fit(0.8, -0.5, (0.6, -1.0))),
        _Cell("evaluation", "bc-option", "done", {"zero_shot_returns": [1.0]}),  # no fit
        _Cell("discovery", "bc-ppo", "done", {"demonstrated_steps": 40}),  # no fit: cloned later
        _Cell("evaluation", "bc-ppo", "done", _fit(0.9, -0.2, (0.7, -0.9))),
        _Cell("evaluation", "bc-ppo", "done", _fit(0.7, -0.4, (0.5, -1.1))),
        _Cell("evaluation", "bc-ppo", "done", _fit(0.8, -0.3)),  # nothing held out
        _Cell("evaluation", "bc-ppo", "failed", _fit(0.0, -9.0, (0.0, -9.0))),
    ]
    fits = cloning_fits(cells)
    assert not fits["bc-option"].per_task and fits["bc-option"].seeds == 1
    ppo = fits["bc-ppo"]
    assert ppo.per_task and (ppo.seeds, ppo.held_out_seeds) == (3, 2)
    assert math.isclose(ppo.accuracy, 0.8) and math.isclose(ppo.log_likelihood, -0.3)
    assert math.isclose(ppo.held_out_accuracy, 0.6) and math.isclose(
        ppo.held_out_log_likelihood, -1.0
    )
    text = cloning_fit_markdown(fits)
    assert text.count("| bc-option | ") == 1 and "| bc-ppo | 0.800 | -0.300 | 0.600 |" in text
    assert "**bc-ppo**: cloned in each evaluation cell" in text
    assert "mean over seeds × test tasks (3 cells" in text
    assert "no held-out fit on 1 of 3 cells" in text
    assert "**bc-option**" not in text  # its row is over seeds, as the header says
    data = SECTION.json(fits)["cloning_fit"]
    assert data["bc-ppo"]["per_task"] is True and "per_task" not in data["bc-option"]


def test_a_run_without_bc_ppo_prints_the_table_it_always_did():
    # The markdown and JSON of a discovery-only fit, as they were before bc_ppo's fit existed.
    fits = {"bc": CloningFit(0.75, -0.5, 0.5, -1.25, 2, 1)}
    assert cloning_fit_markdown(fits) == (
        "## Cloning fit\n\n"
        "How well each cloning control imitates the demonstrations (means over seeds): accuracy "
        "is the share of demonstrated steps whose action is the clone's most probable one, "
        "log-likelihood the mean log μ(a | s) over them; held out: a second clone, on the "
        "other demonstrations, scored on those it did not see. Its zero-shot return is the "
        "main table's zero-shot column.\n\n"
        "| method | accuracy | log-likelihood | held-out accuracy | held-out log-likelihood "
        "| seeds (held out) |\n"
        "|---|---:|---:|---:|---:|---:|\n"
        "| bc | 0.750 | -0.500 | 0.500 | -1.250 | 2 (1) |\n\n"
        "- **bc**: no held-out fit on 1 of 2 seeds (held_out: 0, or fewer than 2 "
        "demonstrations): its held-out columns are over the others only.\n"
    )
    assert list(SECTION.json(fits)["cloning_fit"]["bc"]) == [
        "accuracy",
        "log_likelihood",
        "held_out_accuracy",
        "held_out_log_likelihood",
        "seeds",
        "held_out_seeds",
    ]
