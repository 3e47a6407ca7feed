"""What a discovery reads is its method's ``discovery_budget(params)``, and only that.

Issue 37: the class flags ``uses_demonstrations`` / ``uses_interaction`` keyed the cells while the
budget priced them, so ``covering_options`` with ``graph: known`` waited on a demonstrations cell
it never reads. Now the plan, the work estimate, ``validate`` and the runner all ask the budget of
each entry's params; a plugin that still sets the old flags runs as it did, with a warning.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from runner_support import (
    fakes,  # noqa: F401  (fixture)
    forget_registered,
    method,
    register_plugin,
    run_cli,
    write_spec,
)

from baselines.covering_options import CoveringOptions, CoveringOptionsParams
from baselines.eigenoptions import EigenoptionsParams
from opt_suite.cli import main
from opt_suite.methods.base import Method
from opt_suite.methods.budget import DiscoveryBudget
from opt_suite.runner.cells import DiscoveryJob
from opt_suite.runner.planning import (
    discovery_steps,
    plan_spec,
    resolve_components,
    work_estimate,
)
from opt_suite.spec import find_spec, load_spec
from opt_suite.spec.schema import MethodSpec
from opt_suite.store import ResultsStore

OLD_PLUGIN = Path(__file__).resolve().parent / "fixtures" / "old_flags_plugin"


@dataclasses.dataclass(frozen=True)
class NoParams:
    pass


def _quick(*methods: MethodSpec):
    """``fourrooms-quick`` with these method entries."""
    return dataclasses.replace(load_spec(find_spec("fourrooms-quick")), methods=methods)


def _cover(graph: str) -> MethodSpec:
    return MethodSpec("cover", "covering_options", CoveringOptionsParams(count=2, graph=graph))


def _planned(spec):
    components = resolve_components(spec)
    family, train, _, plan = plan_spec(spec, [0, 1], components)
    return components, family, train, plan


def _discoveries(plan, name: str):
    return [c for c in plan.cells if c.kind == "discovery" and c.method == name]


def test_covering_options_on_the_exact_model_neither_waits_on_nor_needs_demonstrations():
    spec = _quick(_cover("known"))
    _, family, train, plan = _planned(spec)
    assert [c.kind for c in plan.cells].count("demonstrations") == 0  # no expert is even run
    for cell in _discoveries(plan, "cover"):
        assert cell.deps == ()
        assert cell.inputs["demonstrations"] is None and cell.inputs["interaction_budget"] is None
    # The job the runner builds for it has no demonstrations and no env steps, and computes.
    params = spec.methods[0].params
    steps = discovery_steps(CoveringOptions, params, spec)
    assert steps == 0
    job = DiscoveryJob(
        "c", "discovery of 'cover'", type(family), family.params, tuple(train),
        np.random.SeedSequence(0), CoveringOptions, params, (), steps,
    )  # fmt: skip
    result, problem = job.compute()
    assert problem is None and result.options_count == 2
    assert result.demonstration_steps is None  # not charged what it does not read


@pytest.mark.parametrize(
    ("entry", "reads", "interacts"),
    [
        (_cover("known"), False, False),
        (_cover("observed"), True, False),
        (_cover("random_walk"), False, True),
        (MethodSpec("eigen", "eigenoptions", EigenoptionsParams(count=2)), False, False),
        (
            MethodSpec("eigen", "eigenoptions", EigenoptionsParams(count=2, adjacency="observed")),
            True,
            False,
        ),
    ],
)
def test_a_discovery_depends_on_what_its_params_read(entry, reads, interacts):
    spec = _quick(MethodSpec("primitives", "primitives", NoParams()), entry)
    _, _, _, plan = _planned(spec)
    demos = {c.seed: c.cell_id for c in plan.cells if c.kind == "demonstrations"}
    assert bool(demos) is reads  # primitives read nothing: the only reader is this entry
    for cell in _discoveries(plan, entry.name):
        assert cell.deps == ((demos[cell.seed],) if reads else ())
        assert cell.inputs["demonstrations"] == (demos[cell.seed] if reads else None)
        budget = spec.evaluation.interaction_budget if interacts else None
        assert cell.inputs["interaction_budget"] == budget


def test_the_work_estimate_counts_the_cells_and_env_steps_the_plan_holds():
    walk = dataclasses.replace(_cover("random_walk"), name="walk")
    walk = dataclasses.replace(walk, params=dataclasses.replace(walk.params, walk_frames=1234))
    counted = {}
    for entries in ((_cover("known"),), (_cover("observed"),), (_cover("known"), walk)):
        spec = _quick(*entries)
        components, family, train, plan = _planned(spec)
        estimate = work_estimate(spec, [0, 1], components, family, train)
        assert estimate.cells == len(plan.cells)
        counted[tuple(e.params.graph for e in entries)] = estimate.env_steps
    # The random walk is priced at its declared 1234 env steps per seed, not the whole
    # interaction budget; the known graph's discovery at none.
    walked = counted[("known", "random_walk")] - counted[("known",)]
    evaluations = 2 * _quick().tasks.test * _per_run(_quick())
    assert walked == 2 * 1234 + evaluations
    # Reading the demonstrations costs their steps (and makes the demonstrations cells).
    d = _quick().demonstrations
    read = 2 * _quick().tasks.train * d.trajectories_per_task * d.max_steps
    assert counted[("observed",)] - counted[("known",)] == read


def _per_run(spec) -> int:
    ev = spec.evaluation
    return ev.episodes * ev.max_steps + ev.zero_shot_episodes * ev.max_steps


def test_validate_checks_the_source_only_when_an_entry_reads_demonstrations(tmp_path, capsys):
    # The scripted source's default planner fits MiniGrid only: refused on four rooms, but
    # only when some entry's discovery reads what it would demonstrate.
    def spec(graph: str) -> Path:
        path = tmp_path / f"{graph}.yaml"
        path.write_text(
            f"name: reads-{graph}\nextends: fourrooms-quick\n"
            "demonstrations: {source: scripted}\n"
            "methods:\n  - {name: primitives, method: primitives}\n"
            f"  - {{name: cover, method: covering_options, params: {{count: 2, graph: {graph}}}}}\n"
        )
        return path

    assert main(["validate", str(spec("known"))]) == 0
    out = capsys.readouterr().out
    known = _quick(MethodSpec("primitives", "primitives", NoParams()), _cover("known"))
    assert f"{len(_planned(known)[3].cells)} cells" in out  # the plan's count
    assert main(["validate", str(spec("observed"))]) == 2
    assert "demonstrations.params.function" in capsys.readouterr().err


def test_an_old_plugin_setting_the_flags_is_planned_by_them_with_a_warning():
    with pytest.warns(DeprecationWarning, match=r"uses_demonstrations is deprecated.*0\.4\.0"):

        class Old(Method):
            name = "old"
            Params = NoParams
            uses_demonstrations = True

            def discover(self, context):
                raise NotImplementedError

    assert Old.discovery_budget(NoParams()) == DiscoveryBudget(True, 0)
    with pytest.warns(DeprecationWarning, match="uses_interaction is deprecated"):

        class OldInteracting(Old):  # a flag of its own, one inherited: both count
            uses_interaction = True

    assert OldInteracting.discovery_budget(NoParams()) == DiscoveryBudget(True, None)
    with pytest.warns(DeprecationWarning, match="ignored: its discovery_budget"):

        class Both(Method):  # the budget it defines decides; the flag is dead weight
            name = "both"
            Params = NoParams
            uses_demonstrations = True

            @classmethod
            def discovery_budget(cls, params):
                return DiscoveryBudget(False, 0)

            def discover(self, context):
                raise NotImplementedError

    assert Both.discovery_budget(NoParams()) == DiscoveryBudget(False, 0)
    assert not hasattr(Method, "uses_demonstrations") and not hasattr(Method, "uses_interaction")


@pytest.fixture
def old_plugin(monkeypatch):
    """The 0.2.0 plugin (``tests/fixtures/old_flags_plugin``) registered for this test only."""
    register_plugin(monkeypatch, OLD_PLUGIN)
    yield
    forget_registered()


@pytest.mark.usefixtures("fakes", "old_plugin")
def test_a_run_gives_demonstrations_to_whom_reads_them_old_plugins_included(tmp_path):
    methods = (
        method("skips", "fake_reading_options", reads=False),
        method("reads", "fake_reading_options", reads=True),
        method("old", "old_flags_options"),
    )
    spec, out = write_spec(tmp_path, methods, seeds=1), tmp_path / "out"
    with pytest.warns(DeprecationWarning, match="OldFlagsOptions: uses_demonstrations"):
        assert run_cli(spec, "--out", out, "--workers", "0", "--quiet", "--no-report") == 0
    with ResultsStore(out) as store:
        cells = store.cells()
        assert [c.status for c in cells] == ["done"] * len(cells)
        demos = sum(len(d.actions) for d in store.demonstrations(0))
        given = {c.method: c.info.get("demos") for c in cells if c.kind == "discovery"}
        charged = {
            c.method: c.info.get("demonstration_steps") for c in cells if c.kind == "discovery"
        }
    assert given == {"skips": 0, "reads": 2, "old": 2}
    assert charged == {"skips": None, "reads": demos, "old": demos}


@pytest.mark.usefixtures("fakes")
def test_a_run_whose_entries_read_no_demonstrations_has_no_demonstrations_cell(tmp_path):
    methods = (method("skips", "fake_reading_options", reads=False),)
    spec, out = write_spec(tmp_path, methods, seeds=1), tmp_path / "out"
    assert run_cli(spec, "--out", out, "--workers", "0", "--quiet", "--no-report") == 0
    with ResultsStore(out) as store:
        kinds = [c.kind for c in store.cells()]
        assert "demonstrations" not in kinds and kinds.count("discovery") == 1


def test_list_and_describe_say_what_a_method_reads_at_its_default_params(capsys):
    assert main(["describe", "covering_options", "--json"]) == 0
    entry = json.loads(capsys.readouterr().out)
    # graph: known by default, so neither; the budget's own line says what the others read
    assert (entry["uses_demonstrations"], entry["uses_interaction"]) == (False, False)
    assert "``observed``" in entry["learns_from_doc"]
    assert main(["describe", "option_critic"]) == 0
    assert "learns from  interaction, at the default params\n" in capsys.readouterr().out
    assert main(["describe", "primitives"]) == 0  # the base class's budget: nothing to add
    assert "learns from  nothing (fixed options)\n" in capsys.readouterr().out
