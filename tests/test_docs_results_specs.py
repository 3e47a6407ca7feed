"""The specs the results pages run (``docs/results/*/*.yaml``) validate, and the four-rooms "why"
runs share what ``regenerate.sh``'s store copies rely on.

``regenerate.sh`` runs ``fourrooms-paper-why-intra`` and ``-intra-bump`` in copies of the
``fourrooms-paper-why`` store so that only their evaluation cells are computed: that holds only
while the three specs plan the same demonstration and discovery cells.
"""

from __future__ import annotations

from pathlib import Path

from opt_suite.cli import main
from opt_suite.runner.protocol import plan_spec, resolve_components
from opt_suite.spec import load_spec

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"
SPECS = sorted(RESULTS.glob("*/*.yaml"))
PAPER = RESULTS / "fourrooms-paper"


def test_every_results_spec_passes_opt_suite_validate(capsys):
    assert SPECS, "no spec under docs/results/"
    assert main(["validate", *(str(p) for p in SPECS)]) == 0
    assert capsys.readouterr().out.count("ok: ") == len(SPECS)


def _cells(name: str) -> tuple[dict[str, set[str]], object]:
    spec = load_spec(PAPER / f"{name}.yaml")
    *_, plan = plan_spec(spec, [0], resolve_components(spec))
    kinds: dict[str, set[str]] = {}
    for cell in plan.cells:
        kinds.setdefault(cell.kind, set()).add(cell.cell_id)
    return kinds, spec.evaluation


def test_the_why_runs_differ_in_their_evaluation_alone():
    smdp, smdp_eval = _cells("fourrooms-paper-why")
    for name in ("fourrooms-paper-why-intra", "fourrooms-paper-why-intra-bump"):
        other, evaluation = _cells(name)
        assert other["demonstrations"] == smdp["demonstrations"]
        assert other["discovery"] == smdp["discovery"]
        assert other["evaluation"].isdisjoint(smdp["evaluation"])
        assert evaluation.learner == "intra_option_q_learning"
        assert evaluation.params.bump_in_target == name.endswith("bump")
