"""``extends``: deep merge, lists replaced, relative paths, chains, cycles, and problem marks."""

from __future__ import annotations

import pytest
from spec_fakes import VALID, edited, fake_registry

from opt_suite.spec import SpecError, load_spec


@pytest.fixture(autouse=True)
def _fakes():
    with fake_registry():
        yield


def problems(path) -> list[str]:
    with pytest.raises(SpecError) as info:
        load_spec(path)
    return info.value.problems


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_child_overrides_deeply_and_replaces_lists(tmp_path):
    write(tmp_path / "base.yaml", VALID)
    child = write(
        tmp_path / "child.yaml",
        "extends: base.yaml\nname: child\nfamily:\n  params:\n    slip: 0.3\n"
        "methods:\n  - {name: primitives, method: primitives}\n",
    )
    spec = load_spec(child)
    base = load_spec(tmp_path / "base.yaml")
    assert spec.name == "child"
    assert (spec.family.params.slip, spec.family.params.size) == (0.3, 12)  # merged, not replaced
    assert [m.name for m in spec.methods] == ["primitives"]  # the list replaced whole
    assert spec.tasks == base.tasks and spec.evaluation == base.evaluation


def test_relative_to_the_spec_folder_not_the_working_directory(tmp_path, monkeypatch):
    write(tmp_path / "shared" / "base.yaml", VALID)
    child = write(tmp_path / "specs" / "child.yaml", "extends: ../shared/base.yaml\nname: child\n")
    monkeypatch.chdir(write(tmp_path / "elsewhere" / "x", "").parent)
    assert load_spec(child).name == "child"
    monkeypatch.chdir(tmp_path)
    assert load_spec("specs/child.yaml").family.params.size == 12


def test_chains_of_three(tmp_path):
    write(tmp_path / "a.yaml", VALID)
    write(tmp_path / "b.yaml", "extends: a.yaml\nname: b\ntasks: {seed: 1}\n")
    c = write(tmp_path / "c.yaml", "extends: b.yaml\nname: c\ntasks: {count: 9}\n")
    spec = load_spec(c)
    assert (spec.name, spec.tasks.seed, spec.tasks.count, spec.tasks.train) == ("c", 1, 9, 2)


def test_cycle_is_reported_with_the_chain(tmp_path):
    a = write(tmp_path / "a.yaml", "extends: b.yaml\n" + VALID)
    write(tmp_path / "b.yaml", "extends: a.yaml\nname: b\n")
    assert problems(a) == [
        f"{a}: inherited from {tmp_path}/b.yaml:1:10: extends: extends cycle: a.yaml -> b.yaml "
        "-> a.yaml"
    ]


def test_self_extension_is_a_cycle(tmp_path):
    a = write(tmp_path / "a.yaml", "extends: a.yaml\n" + VALID)
    assert problems(a) == [f"{tmp_path}/a.yaml:1:10: extends: extends cycle: a.yaml -> a.yaml"]


def test_problems_in_the_parent_point_at_the_parent(tmp_path):
    write(tmp_path / "base.yaml", edited(("slip: 0.2", "slip: 2.0")))
    child = write(tmp_path / "child.yaml", "extends: base.yaml\nname: child\ntasks:\n  count: x\n")
    assert problems(child) == [
        f"{child}: inherited from {tmp_path}/base.yaml:9:11: family.params.slip: out of range "
        "(expected >= 0 and < 1, got 2.0)",
        f"{tmp_path}/child.yaml:4:10: tasks.count: wrong type (expected int, got str 'x')",
    ]


def test_parent_syntax_error_points_into_the_parent(tmp_path):
    write(tmp_path / "base.yaml", "name: a\n  bad: 1\n")
    child = write(tmp_path / "child.yaml", "extends: base.yaml\n" + VALID)
    assert problems(child) == [
        f"{child}: inherited from {tmp_path}/base.yaml:2:6: (spec): invalid YAML: mapping values "
        "are not allowed here"
    ]


def test_missing_parent_points_at_the_extends_line(tmp_path):
    child = write(tmp_path / "child.yaml", VALID + "extends: nope.yaml\n")
    assert problems(child) == [
        f"{tmp_path}/child.yaml:33:10: extends: no such file '{tmp_path}/nope.yaml'"
    ]


@pytest.mark.parametrize("value, got", [("[a.yaml]", "a list"), ("3", "int 3"), ("''", "str ''")])
def test_extends_must_be_a_path(tmp_path, value, got):
    child = write(tmp_path / "child.yaml", VALID + f"extends: {value}\n")
    assert problems(child) == [
        f"{tmp_path}/child.yaml:33:10: extends: expected the path of a spec file or a bundled "
        f"spec's name (str), got {got}"
    ]


def test_parent_must_be_a_mapping(tmp_path):
    write(tmp_path / "base.yaml", "- 1\n")
    child = write(tmp_path / "child.yaml", "extends: base.yaml\n" + VALID)
    assert problems(child) == [
        f"{child}: inherited from {tmp_path}/base.yaml:1:1: (spec): expected a mapping of spec "
        "sections, got a list"
    ]
