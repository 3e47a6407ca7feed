"""Discovery cost beside learning cost: collected from discovery cells, tabled, drawn."""

from __future__ import annotations

import dataclasses

import numpy as np
from report_fakes import linear_table

from opt_suite.report import REPORT_FILES, ReportInputs, write_report_files
from opt_suite.report.discovery_cost import DiscoveryCost, discovery_costs
from opt_suite.report.episodes import learning_curves
from opt_suite.spec.schema import ReportSpec


@dataclasses.dataclass
class _Cell:
    kind: str
    method: str | None
    status: str
    info: dict


def test_costs_are_the_mean_over_done_discoveries_of_what_was_counted():
    cells = [
        _Cell("discovery", "walk", "done", {"counted_env_frames": 1000, "env_steps": 7}),
        _Cell("discovery", "walk", "done", {"counted_env_frames": 3000}),
        _Cell("discovery", "walk", "failed", {"counted_env_frames": 10**9}),  # not a cost paid
        _Cell("discovery", "demos", "done", {"demonstration_steps": 40}),
        _Cell("evaluation", "walk", "done", {"counted_env_frames": 5}),  # not discovery
        # option-critic on a tabular family steps the exact model: no env counted its frames
        _Cell("discovery", "model", "done", {"counted_env_frames": 0, "env_steps": 5000}),
    ]
    costs = discovery_costs(cells)
    assert costs == {
        "walk": DiscoveryCost(2000.0, 0.0, 2),  # the counted frames, not the method's env_steps
        "demos": DiscoveryCost(0.0, 40.0, 1),
        "model": DiscoveryCost(5000.0, 0.0, 1),  # nothing counted: the steps it reports
    }


def test_the_leaderboard_tables_discovery_beside_learning_and_draws_the_shifted_curves(tmp_path):
    table = linear_table({"primitives": 0.0, "walker": 5.0})
    curves = learning_curves(table, ("primitives", "walker"))
    per_run = float(np.mean(curves["walker"].frames[..., -1]))
    inputs = ReportInputs(
        table,
        spec_name="toy-spec",
        spec_hash="feedc0de",
        settings=ReportSpec(threshold=0.0, bootstrap=50),
        methods=("primitives", "walker"),
        sections={"discovery_cost": {"walker": DiscoveryCost(25000.0, 12.0, 2)}},
    )
    paths = write_report_files(inputs, tmp_path / "with")
    assert [p.name for p in paths] == [*REPORT_FILES, "curves_with_discovery.png"]
    assert (tmp_path / "with" / "curves_with_discovery.png").read_bytes()[:4] == b"\x89PNG"
    text = (tmp_path / "with" / "leaderboard.md").read_text()
    assert "## Discovery cost" in text
    assert f"| walker | 25,000 | 12 | {per_run:,.0f} |" in text
    assert "| primitives | 0 | 0 |" in text
    plain = dataclasses.replace(inputs, sections={})
    assert [p.name for p in write_report_files(plain, tmp_path / "without")] == list(REPORT_FILES)
    assert "Discovery cost" not in (tmp_path / "without" / "leaderboard.md").read_text()


def test_a_discovery_is_charged_the_demonstrations_it_declares_it_reads():
    from baselines.covering_options import CoveringOptions, CoveringOptionsParams
    from baselines.eigenoptions import Eigenoptions, EigenoptionsParams
    from opt_suite.runner.cells import DiscoveryJob
    from opt_suite.testing.method import tiny_setting

    setting = tiny_setting()
    steps = sum(len(t.actions) for t in setting.demonstrations)

    def info(method_cls, params):
        job = DiscoveryJob(
            "c", "discovery", type(setting.family), setting.family.params, setting.train_tasks,
            np.random.SeedSequence(0), method_cls, params, setting.demonstrations, 0,
        )  # fmt: skip
        return job.compute()[0].info()

    # Each declares by params (discovery_budget): the graph of the demonstrations' transitions
    # reads them, the exact model's does not (a job handed them anyway is not charged them).
    observed = EigenoptionsParams(count=2, adjacency="observed")
    assert info(Eigenoptions, observed)["demonstration_steps"] == steps > 0
    assert "demonstration_steps" not in info(Eigenoptions, EigenoptionsParams(count=2))
    assert "demonstration_steps" not in info(CoveringOptions, CoveringOptionsParams(count=2))
