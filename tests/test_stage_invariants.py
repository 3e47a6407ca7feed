"""What the stage objects (runner/stage_kinds.py) must not change: cell ids and spec hashes.

Each bundled spec below is planned for seeds 0 and 1, and the sha256 of its cells (id, kind,
method entry, seed, dependencies) must be what the planner gave before each stage's hashed inputs
moved into its stage object (main at 7e491f8, with the same pinned providers), except where a
method's dependencies were then planned from its ``discovery_budget`` on purpose: eigenoptions with
the default ``adjacency: known`` no longer depends on the demonstrations cell (fourrooms-quick,
fourrooms-heldout: the digests the ``deps`` branch gave before the stage objects were merged).
The protocol is pinned at 2 as well: version 3 marks that planning change (every id moves once,
which ``test_the_protocol_enters_every_cell_id`` checks; reference cells, shared between specs,
have a version of their own). The providers are
pinned because a cell id also hashes the code's version and source digest (runner/versions.py):
any edit to opt_suite gives new ids by design, and what is checked here is everything else.
Between them the specs plan every stage: references cells (heldout, related-controls), an entry
counting another's options (related-controls), frame budgets (atari-smoke), per-seed test tasks.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

import opt_suite.runner.plan as plan_module
import opt_suite.runner.versions as versions
from opt_suite.runner.planning import plan_spec, resolve_components
from opt_suite.spec import load_spec, spec_hash

SPECS = Path(__file__).resolve().parents[1] / "specs"

#: spec -> (its hash's first 16 digits, cells planned for seeds 0-1, sha256 of them, first 16).
BEFORE = {
    "fourrooms-quick": ("395dea5a672e2d32", 84, "b112e4aed728ebd0"),
    "fourrooms-heldout": ("299da2f511f5b0e7", 126, "4983de86be88271f"),
    "fourrooms-related-controls": ("23922a1bc400385f", 156, "84d3740882e3cd31"),
    "chain-validation": ("1e7cbb501c1fc69a", 22, "5eeaff9788455349"),
    "atari-smoke": ("68443a2d90bc7824", 14, "909d3b88e5669382"),
    "gymnasium-frozenlake": ("8f38fc3c6f66786d", 108, "da923e68967d1ba3"),
}


@pytest.mark.parametrize("name", sorted(BEFORE))
def test_cell_ids_and_spec_hashes_are_what_they_were(name, monkeypatch):
    monkeypatch.setattr(versions, "_module_provider", lambda top: f"{top} pinned")
    monkeypatch.setattr(plan_module, "PROTOCOL", 2)  # the protocol the pinned digests were made by
    spec = load_spec(SPECS / f"{name}.yaml")
    plan = plan_spec(spec, [0, 1], resolve_components(spec))[3]
    cells = "\n".join(f"{c.cell_id} {c.kind} {c.method} {c.seed} {c.deps}" for c in plan.cells)
    digest = hashlib.sha256(cells.encode()).hexdigest()[:16]
    assert (spec_hash(spec)[:16], len(plan.cells), digest) == BEFORE[name]


def test_the_protocol_enters_every_cell_id(monkeypatch):
    monkeypatch.setattr(versions, "_module_provider", lambda top: f"{top} pinned")
    spec = load_spec(SPECS / "fourrooms-quick.yaml")
    ids = {}
    for protocol in (2, 3):
        monkeypatch.setattr(plan_module, "PROTOCOL", protocol)
        cells = plan_spec(spec, [0], resolve_components(spec))[3].cells
        # Reference cells are shared between specs and plannings: they have their own version.
        ids[protocol] = {c.cell_id for c in cells if c.kind != "references"}
    assert ids[2] and ids[2].isdisjoint(ids[3])
