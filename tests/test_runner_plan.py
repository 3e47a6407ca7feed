"""Cells and seeds: which spec edits change which cells, and where every random draw comes from."""

from __future__ import annotations

import dataclasses

import numpy as np

from opt_suite.families.tabular.chain import Chain
from opt_suite.families.tabular.chain import Params as ChainParams
from opt_suite.families.tabular.chain import Variation as ChainVariation
from opt_suite.methods.budget import DiscoveryBudget
from opt_suite.runner import seeding
from opt_suite.runner.plan import build_plan
from opt_suite.spec.schema import (
    DemonstrationsSpec,
    EvaluationSpec,
    FamilySpec,
    MethodSpec,
    Spec,
    TasksSpec,
)


@dataclasses.dataclass(frozen=True)
class _P:
    k: int = 1


class _Plain:
    @classmethod
    def discovery_budget(cls, params):
        return DiscoveryBudget(False, 0)

    @classmethod
    def count_entry(cls, params):
        return None


class _Demo(_Plain):
    @classmethod
    def discovery_budget(cls, params):
        return DiscoveryBudget(True, 0)


class _Interacting(_Plain):
    @classmethod
    def discovery_budget(cls, params):
        return DiscoveryBudget(False, None)


def _spec(**changes) -> Spec:
    base = Spec(
        name="t",
        family=FamilySpec("chain", ChainParams(num_states=5)),
        tasks=TasksSpec(count=5, train=2, test=3, seed=0, vary=ChainVariation()),
        methods=(
            MethodSpec("a", "plain", _P(1)),
            MethodSpec("b", "demo", _P(2)),
            MethodSpec("c", "interacting", _P(3)),
        ),
        evaluation=EvaluationSpec(learner="l", params=_P(), episodes=10, seeds=2),
    )
    return dataclasses.replace(base, **changes)


CLASSES = (_Plain, _Demo, _Interacting)


def _plan(spec: Spec, seeds=(0, 1), classes=CLASSES):
    family = Chain(spec.family.params)
    t = spec.tasks
    train, test = family.make_tasks(t.vary, t.list, t.count, t.train, t.test, t.seed)
    return build_plan(spec, seeds, train, test, classes)


def _ids(plan) -> dict[tuple, str]:
    return {(c.kind, c.method, c.seed, c.task): c.cell_id for c in plan.cells}


def _changed(before, after) -> set[tuple]:
    a, b = _ids(before), _ids(after)
    return {key for key in a.keys() | b.keys() if a.get(key) != b.get(key)}


def test_plan_shape_and_dependencies():
    plan = _plan(_spec())
    kinds = [c.kind for c in plan.cells]
    # per seed: demos (b uses them) + 3 discoveries + 3 methods x 3 test tasks evaluations
    assert kinds.count("demonstrations") == 2 and kinds.count("discovery") == 6
    assert kinds.count("evaluation") == 18
    evaluations = [c for c in plan.cells if c.kind == "evaluation"]
    assert {(c.method, c.seed, c.task) for c in evaluations} == {
        (m, s, t) for m in "abc" for s in (0, 1) for t in range(3)
    }
    assert evaluations[0].label == "evaluation of 'a', seed 0, test task 0"
    cells = plan.by_id()
    assert len(cells) == len(plan.cells)  # ids are unique
    for cell in plan.cells:
        for dep in cell.deps:
            assert plan.cells.index(cells[dep]) < plan.cells.index(cell)
    discovery = {(c.method, c.seed): c for c in plan.cells if c.kind == "discovery"}
    assert discovery[("a", 0)].deps == () and len(discovery[("b", 0)].deps) == 1
    assert cells[discovery[("b", 1)].deps[0]].kind == "demonstrations"
    assert cells[discovery[("b", 1)].deps[0]].seed == 1


def test_no_demonstrations_cell_when_no_method_uses_them():
    plan = _plan(_spec(), classes=(_Plain, _Plain, _Interacting))
    assert all(c.kind != "demonstrations" for c in plan.cells)


def test_changing_one_method_changes_only_its_cells():
    before = _plan(_spec())
    methods = list(_spec().methods)
    methods[0] = MethodSpec("a", "plain", _P(99))
    after = _plan(_spec(methods=tuple(methods)))
    assert _changed(before, after) == {
        ("discovery", "a", 0, None),
        ("discovery", "a", 1, None),
        *(("evaluation", "a", s, t) for s in (0, 1) for t in range(3)),
    }


def test_adding_a_method_or_seeds_keeps_existing_cells():
    before = _plan(_spec())
    more = _spec(methods=(*_spec().methods, MethodSpec("d", "plain", _P(4))))
    after = _plan(more, seeds=(0, 1, 2), classes=(*CLASSES, _Plain))
    assert set(_ids(before).items()) <= set(_ids(after).items())


def test_learner_settings_change_only_evaluations():
    before = _plan(_spec())
    after = _plan(_spec(evaluation=EvaluationSpec(learner="l", params=_P(), episodes=20, seeds=2)))
    assert {k[0] for k in _changed(before, after)} == {"evaluation"}
    assert len(_changed(before, after)) == 18


def test_seed_count_and_budget_reach_only_what_uses_them():
    before = _plan(_spec())
    more_seeds = EvaluationSpec(learner="l", params=_P(), episodes=10, seeds=7)
    assert _changed(before, _plan(_spec(evaluation=more_seeds))) == set()
    budget = EvaluationSpec(learner="l", params=_P(), episodes=10, seeds=2, interaction_budget=5)
    changed = _changed(before, _plan(_spec(evaluation=budget)))
    assert {(k[0], k[1]) for k in changed} == {("discovery", "c"), ("evaluation", "c")}


def test_demonstration_settings_reach_only_methods_that_use_them():
    before = _plan(_spec())
    after = _plan(_spec(demonstrations=DemonstrationsSpec(trajectories_per_task=3)))
    assert {(k[0], k[1]) for k in _changed(before, after)} == {
        ("demonstrations", None),
        ("discovery", "b"),
        ("evaluation", "b"),
    }


def test_more_test_tasks_keep_discoveries_when_train_tasks_stay():
    listed = _plan(_spec()).train_tasks + _plan(_spec()).test_tasks[0]
    params = tuple(t.params for t in listed)
    fixed = _spec(
        tasks=TasksSpec(count=5, train=2, test=3, seed=0, vary=ChainVariation(), list=params)
    )
    grown = _spec(
        tasks=TasksSpec(count=7, train=2, test=5, seed=0, vary=ChainVariation(), list=params)
    )
    changed = _changed(_plan(fixed), _plan(grown))
    assert {k[0] for k in changed} == {"evaluation"}
    # one cell per test task: the three kept test tasks keep their evaluations
    assert {k[3] for k in changed} == {3, 4}


def test_seed_streams_are_independent_of_order_and_shared_across_methods():
    a = seeding.evaluation_seed(0, 3, 2).generate_state(4)
    b = seeding.evaluation_seed(0, 3, 2).generate_state(4)
    assert np.array_equal(a, b)  # common random numbers: every method gets this stream
    streams = [
        seeding.demonstrations_seed(0, 3),
        seeding.discovery_seed(0, 3, "ours"),
        seeding.discovery_seed(0, 3, "eigen"),
        seeding.evaluation_seed(0, 3, 2),
        seeding.evaluation_seed(0, 4, 2),
        seeding.evaluation_seed(1, 3, 2),
    ]
    states = {tuple(s.generate_state(4)) for s in streams}
    assert len(states) == len(streams)


def test_stable_hash_is_fixed_across_processes():
    # sha256("ours")[:4] little-endian; a change here would silently change every stored seed.
    assert seeding.stable_hash("ours") == 2666269614


def test_a_new_version_of_the_providing_package_changes_the_cell_ids(monkeypatch):
    from opt_suite.runner import plan as plan_module

    spec = _spec()
    family = Chain(spec.family.params)
    train, test = family.make_tasks(spec.tasks.vary, (), 5, 2, 3, 0)

    def ids(version):
        monkeypatch.setattr(
            plan_module,
            "provider",
            lambda cls: None if cls is None else f"{cls.__name__} {version}",
        )
        built = build_plan(spec, (0,), train, test, CLASSES, family_cls=Chain, learner_cls=_P)
        return {(c.kind, c.method, c.task): c.cell_id for c in built.cells}

    old, new = ids("1.0"), ids("1.1")
    assert old.keys() == new.keys() and all(old[k] != new[k] for k in old)
    assert ids("1.0") == old
    cell = build_plan(spec, (0,), train, test, CLASSES, family_cls=Chain).cells[0]
    assert cell.inputs["code"]["family"] == "Chain 1.0"  # the provider's version is in the input


class _CountedOfB(_Interacting):
    """An entry that takes entry b's option count (random_options' count_of: b)."""

    @classmethod
    def count_entry(cls, params):
        return ("count_of", "b")


def test_an_entry_that_takes_anothers_count_reads_its_discovery_on_the_same_seed():
    plain, counted = _plan(_spec()), _plan(_spec(), classes=(_Plain, _Demo, _CountedOfB))
    # Only the counting entry's cells change: their inputs name the discovery they read.
    assert {(k[0], k[1]) for k in _changed(plain, counted)} == {
        ("discovery", "c"),
        ("evaluation", "c"),
    }
    by_key = {(c.kind, c.method, c.seed): c for c in counted.cells if c.task is None}
    for seed in (0, 1):
        reads = by_key[("discovery", "b", seed)].cell_id
        assert by_key[("discovery", "c", seed)].deps == (reads,)
        assert by_key[("discovery", "c", seed)].inputs["count_of"] == reads
