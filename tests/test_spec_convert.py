"""YAML -> typed dataclasses: every annotation kind, ranges, unknown keys, registry look-ups.

Line numbers refer to ``spec_fakes.VALID`` (``name`` is line 1, ``family.params.size`` line 8,
``tasks.count`` line 11, the ``ours`` entry's ``lambda2`` line 25, ``evaluation.params`` line 30).
"""

from __future__ import annotations

import dataclasses

import pytest
from spec_fakes import (
    TABLE,
    VALID,
    FakeGrid,
    GridParams,
    GridTask,
    LearnerParams,
    OptionsParams,
    SourceParams,
    edited,
    fake_registry,
    problems_of,
)

from opt_suite import registry
from opt_suite.params import param
from opt_suite.spec import DemonstrationsSpec, parse_spec


@pytest.fixture(autouse=True)
def _fakes():
    with fake_registry():
        yield


def one_problem(*pairs: tuple[str, str]) -> str:
    problems = problems_of(edited(*pairs), "x.yaml")
    assert len(problems) == 1, problems
    return problems[0]


def test_valid_spec_reads_into_the_registered_dataclasses():
    spec = parse_spec(VALID)
    assert spec.family.params == GridParams(size=12, slip=0.2)
    assert spec.tasks.vary.starts == "random" and spec.tasks.vary.goals == "random"
    assert spec.tasks.list == (GridTask(start=(0, 0), goal=(5, 5)),)
    assert spec.methods[0].params == TABLE[registry.METHODS]["primitives"].Params()
    assert spec.methods[1].params == OptionsParams(lambda2=100.0, hidden=(16, 16))
    assert type(spec.methods[1].params.lambda2) is float  # an int written for a float
    assert spec.evaluation.params == LearnerParams(alpha=0.2)
    # a missing section reads as an empty one: its params resolve to the source's defaults
    assert spec.demonstrations == DemonstrationsSpec(params=SourceParams())
    assert spec.description == "A small spec for tests.\nSecond line.\n"


@pytest.mark.parametrize(
    "params",
    ["", "  params:\n", "  params: {}\n", "  params: null\n"],
    ids=["absent", "empty", "{}", "null"],
)
def test_missing_or_empty_params_mean_the_defaults(params):
    spec = parse_spec(edited(("  params: {alpha: 0.2}\n", params)))
    assert spec.evaluation.params == LearnerParams()


def test_missing_section_with_defaults_and_null_section():
    spec = parse_spec(VALID + "demonstrations:\n")
    assert spec.demonstrations == DemonstrationsSpec(params=SourceParams())


@pytest.mark.parametrize(
    "old, new, line",
    [
        (
            "count: 6",
            "count: 6.0",
            "x.yaml:11:10: tasks.count: wrong type (expected int, got float 6.0)",
        ),
        (
            "count: 6",
            "count: true",
            "x.yaml:11:10: tasks.count: wrong type (expected int, got bool true)",
        ),
        (
            "count: 6",
            "count: '6'",
            "x.yaml:11:10: tasks.count: wrong type (expected int, got str '6')",
        ),
        (
            "slip: 0.2",
            "slip: yes",
            "x.yaml:9:11: family.params.slip: wrong type (expected float, got bool true)",
        ),
        (
            "slip: 0.2",
            "slip: '1e-2'",
            "x.yaml:9:11: family.params.slip: wrong type (expected float, got str '1e-2')",
        ),
        (
            "slip: 0.2",
            "slip: .nan",
            "x.yaml:9:11: family.params.slip: wrong type (expected a finite float, got float nan)",
        ),
        (
            "size: 12",
            "size: 12\n    diagonal: 1",
            "x.yaml:9:15: family.params.diagonal: wrong type (expected bool, got int 1)",
        ),
        (
            "name: grid-test",
            "name: 123",
            "x.yaml:1:7: name: wrong type (expected str, got int 123); quote it to make it text",
        ),
        (
            "size: 12",
            "size: 12\n    layout: smal",
            "x.yaml:9:13: family.params.layout: wrong type (expected one of 'small', 'large', got "
            "str 'smal'); did you mean 'small'?",
        ),
        (
            "size: 12",
            "size: 12\n    max_steps: abc",
            "x.yaml:9:16: family.params.max_steps: wrong type (expected int or null, got str "
            "'abc')",
        ),
        (
            "size: 12",
            "size: 12\n    max_steps: 0",
            "x.yaml:9:16: family.params.max_steps: out of range (expected >= 1 and "
            "<= 10000000000, got 0)",
        ),
        (
            "hidden: [16, 16]",
            "hidden: 16",
            "x.yaml:26:15: methods[1].params.hidden: wrong type (expected a list of int, "
            "got int 16)",
        ),
        (
            "hidden: [16, 16]",
            "hidden: [16, 0]",
            "x.yaml:26:20: methods[1].params.hidden[1]: out of range (expected >= 1 and "
            "<= 10000000000, got 0)",
        ),
        (
            "{start: [0, 0], goal: [5, 5]}",
            "{start: [0], goal: [5, 5]}",
            "x.yaml:18:15: tasks.list[0].start: wrong length (expected [int, int], got 1 item)",
        ),
        (
            "{start: [0, 0], goal: [5, 5]}",
            "{start: [0, 0], goal: {row: 5}}",
            "x.yaml:18:29: tasks.list[0].goal: wrong type (expected [int, int], got a mapping)",
        ),
        (
            "report:\n",
            "demonstrations: 3\nreport:\n",
            "x.yaml:31:17: demonstrations: wrong type (expected a mapping "
            "(DemonstrationsSpec), got int 3)",
        ),
        (
            "slip: 0.2",
            "slip: 1.0",
            "x.yaml:9:11: family.params.slip: out of range (expected >= 0 and < 1, got 1.0)",
        ),
        (
            "count: 6",
            "count: 0",
            "x.yaml:11:10: tasks.count: out of range (expected >= 1 and <= 10000, got 0)",
        ),
        (
            "params: {alpha: 0.2}",
            "params: {alpha: 0}",
            "x.yaml:30:19: evaluation.params.alpha: out of range (expected > 0 and <= 1, got 0.0)",
        ),
    ],
)
def test_type_and_range_problems(old, new, line):
    assert one_problem((old, new)) == line


def test_unquoted_exponent_is_a_number():
    spec = parse_spec(edited(("slip: 0.2", "slip: 1e-2")))
    assert spec.family.params.slip == 0.01


def test_unknown_keys_with_and_without_suggestion():
    assert one_problem(("lambda2: 100", "lamda2: 100")) == (
        "x.yaml:25:7: methods[1].params.lamda2: unknown key; did you mean 'lambda2'? (expected "
        "one of: lambda1, lambda2, delta, epochs, hidden, optimizer)"
    )
    assert one_problem(("seeds: 2", "seeds: 2\n  zzz: 1")) == (
        "x.yaml:30:3: evaluation.zzz: unknown key (expected one of: learner, params, episodes, "
        "frames, max_steps, seeds, interaction_budget, zero_shot_episodes)"
    )
    assert one_problem(
        ("    method: primitives\n", "    method: primitives\n    params: {x: 1}\n")
    ) == ("x.yaml:22:14: methods[0].params.x: unknown key (it takes no keys)")


def test_missing_required_keys_point_at_their_mapping():
    assert one_problem(("  count: 6\n", "")) == (
        "x.yaml:11:3: tasks.count: missing required key (expected int: number of task variations)"
    )
    assert one_problem(("  - name: ours\n", "  -\n")) == (
        "x.yaml:23:5: methods[1].name: missing required key (expected str: unique display name "
        "of this entry (leaderboard row))"
    )


def test_dataclass_check_hook_reports_at_the_field():
    assert one_problem(("size: 12", "size: 8\n    layout: large")) == (
        "x.yaml:8:11: family.params.size: the large layout needs size >= 10 (got 8)"
    )
    # size left at its default: reported where family.params starts
    assert one_problem(("    size: 12\n", "    layout: large\n")) == (
        "x.yaml:8:5: family.params.size: the large layout needs size >= 10 (got 8)"
    )


def test_family_check_task_reports_at_the_listed_task():
    assert one_problem(("{start: [0, 0], goal: [5, 5]}", "{start: [20, 0], goal: [5, 5]}")) == (
        "x.yaml:18:15: tasks.list[0].start: cell (20, 0) is outside the 12x12 grid"
    )


@pytest.mark.parametrize(
    "old, new, line",
    [
        (
            "  name: grid\n",
            "  name: gird\n",
            "x.yaml:6:9: family.name: unknown task family 'gird'; did you mean 'grid'? "
            "(known: grid)",
        ),
        (
            "method: options",
            "method: option",
            "x.yaml:23:13: methods[1].method: unknown method 'option'; did you mean 'options'? "
            "(known: options, primitives)",
        ),
        (
            "  seeds: 2\n",
            "  seeds: 2\n  learner: q\n",
            "x.yaml:30:12: evaluation.learner: unknown learner 'q' (known: smdp_q_learning)",
        ),
    ],
)
def test_unknown_registered_names(old, new, line):
    assert one_problem((old, new)) == line


def test_unknown_family_skips_its_params_but_reports_the_rest():
    problems = problems_of(
        edited(("  name: grid\n", "  name: nope\n"), ("count: 6", "count: x")), "x.yaml"
    )
    assert problems == [
        "x.yaml:6:9: family.name: unknown task family 'nope' (known: grid)",
        "x.yaml:11:10: tasks.count: wrong type (expected int, got str 'x')",
    ]


@dataclasses.dataclass(frozen=True)
class _ListParams:
    sizes: list[int] = param((1,))


@dataclasses.dataclass(frozen=True)
class _RaisingParams:
    x: int = param(1)

    def __post_init__(self):
        if self.x > 3:
            raise ValueError("x must stay small")

    def check(self):
        raise RuntimeError("boom")


class _Broken:
    Params = dict  # not a dataclass


@pytest.mark.parametrize(
    "cls, params, line",
    [
        (
            type("ListMethod", (), {"Params": _ListParams}),
            "{sizes: [1]}",
            "x.yaml:24:21: methods[1].params.sizes: cannot be read: the declared type list[int] is "
            "not supported by specs",
        ),
        (
            type("Raising", (), {"Params": _RaisingParams}),
            "{x: 5}",
            "x.yaml:24:13: methods[1].params: invalid _RaisingParams: x must stay small",
        ),
        (
            type("Raising", (), {"Params": _RaisingParams}),
            "{x: 1}",
            "x.yaml:24:13: methods[1].params: _RaisingParams.check() failed: RuntimeError('boom')",
        ),
        (
            _Broken,
            "{}",
            "x.yaml:24:13: methods[1].params: _Broken.Params is not a dataclass, so this cannot be "
            "read (the plugin registered for methods[1] is incomplete)",
        ),
    ],
)
def test_broken_plugin_params_are_reported_not_raised(monkeypatch, cls, params, line):
    monkeypatch.setitem(TABLE[registry.METHODS], "odd", cls)
    text = edited(
        ("method: options", "method: odd"),
        ("    params:\n      lambda2: 100\n      hidden: [16, 16]\n", f"    params: {params}\n"),
    )
    assert problems_of(text, "x.yaml") == [line]


def test_family_rejecting_its_params_in_check_task(monkeypatch):
    class Angry(FakeGrid):
        def check_task(self, task):
            raise KeyError("no")

    monkeypatch.setitem(TABLE[registry.FAMILIES], "grid", Angry)
    assert problems_of(VALID, "x.yaml") == [
        "x.yaml:18:7: tasks.list[0]: the family's check_task failed: KeyError('no')"
    ]


def test_family_check_variation_reports_at_the_variation():
    text = edited(("    starts: random\n", "    goals: fixed\n    goal: [3, 30]\n"))
    assert problems_of(text, "x.yaml") == [
        "x.yaml:17:11: tasks.vary.goal: cell (3, 30) is outside the grid"
    ]
    # the variation's own check() is reported once, although the family's hook repeats it
    text = edited(("    starts: random\n", "    goals: fixed\n"))
    assert problems_of(text, "x.yaml") == [
        "x.yaml:16:5: tasks.vary.goal: give a goal exactly when goals is 'fixed'"
    ]


def test_family_constructor_rejecting_params(monkeypatch):
    class Picky(FakeGrid):
        def __init__(self, params):
            raise ValueError("size 12 is not supported on this machine")

    monkeypatch.setitem(TABLE[registry.FAMILIES], "grid", Picky)
    assert problems_of(VALID, "x.yaml") == [
        "x.yaml:8:5: family.params: the family rejects these params: size 12 is not supported "
        "on this machine"
    ]
