"""The frame unit: a family attribute the runner records with the run and the report reads back.

The report names its frame axes and budgets ("emulator frames" on Atari, "env steps" elsewhere)
from the run's record, never by loading the family or matching its name; a run recorded before
the runner wrote it falls back to the rule of that time (Atari by name).
"""

from __future__ import annotations

import pytest
from report_fakes import linear_table, write_store

from opt_suite.families.atari.family import Atari
from opt_suite.families.base import TaskFamily
from opt_suite.registry import FAMILIES, load
from opt_suite.report.episodes import ReportDataError
from opt_suite.report.source import load_inputs
from opt_suite.store import ResultsStore


def _unit(tmp_path, **store) -> str:
    write_store(tmp_path / "run", linear_table({"a": 0.0}, seeds=1, tasks=1), **store)
    inputs, _ = load_inputs(tmp_path / "run")
    return inputs.frame_unit


def test_families_declare_their_unit():
    assert TaskFamily.frame_unit == "env steps"
    assert Atari.frame_unit == "emulator frames"
    assert load(FAMILIES, "chain").frame_unit == "env steps"


def test_the_report_reads_the_unit_the_run_recorded_not_the_family_name(tmp_path):
    recorded = {"name": "atari", "frame_unit": "widgets"}
    assert _unit(tmp_path, family="atari", recorded_family=recorded) == "widgets"
    with ResultsStore(tmp_path / "run") as store:
        assert store.run_family() == recorded


@pytest.mark.parametrize(("family", "unit"), [("atari", "emulator frames"), ("chain", "env steps")])
def test_a_run_recorded_before_the_unit_falls_back_to_the_family_name(tmp_path, family, unit):
    assert _unit(tmp_path, family=family) == unit
    with ResultsStore(tmp_path / "run") as store:
        assert store.run_family() is None


def test_a_recorded_unit_that_is_not_a_string_is_refused_in_one_line(tmp_path):
    with pytest.raises(ReportDataError, match="frame_unit is 3, expected a non-empty string"):
        _unit(tmp_path, recorded_family={"name": "chain", "frame_unit": 3})


@pytest.mark.parametrize("unit", ["", " env steps", "env\nsteps", 3])
def test_the_family_contract_refuses_a_unit_that_is_not_one_line_of_text(monkeypatch, unit):
    from opt_suite.families.tabular.chain import Chain
    from opt_suite.testing import FamilyContract

    class ChainContract(FamilyContract):
        def family(self):
            return Chain()

    ChainContract().check_registered_under_its_name()  # as registered: passes
    monkeypatch.setattr(Chain, "frame_unit", unit)
    with pytest.raises(AssertionError):
        ChainContract().check_registered_under_its_name()
