"""Specs that compose: ``extends`` a bundled name, ``methods+`` / ``methods-``, root cause first."""

from __future__ import annotations

import dataclasses

import pytest

from opt_suite.spec import SpecError, find_spec, load_spec, load_sweep, spec_hash
from opt_suite.spec.schema import EvaluationSpec

QUICK = load_spec(find_spec("fourrooms-quick"))


def problems(path) -> list[str]:
    with pytest.raises(SpecError) as info:
        load_sweep(path)
    return info.value.problems


def write(tmp_path, text: str, name: str = "mine.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_extends_a_bundled_spec_by_name_from_any_folder(tmp_path):
    spec = load_spec(write(tmp_path, "extends: fourrooms-quick\nname: mine\n"))
    assert spec.name == "mine" and spec.methods == QUICK.methods and spec.tasks == QUICK.tasks
    # The same spec as extending the file by its path: only the name differs from the parent.
    by_path = load_spec(write(tmp_path, f"extends: {find_spec('fourrooms-quick')}\nname: mine\n"))
    assert spec_hash(spec) == spec_hash(by_path) != spec_hash(QUICK)


def test_a_file_beside_the_spec_wins_over_the_bundled_name(tmp_path):
    write(tmp_path, "extends: fourrooms-quick\nname: local-quick\n", "fourrooms-quick.yaml")
    spec = load_spec(write(tmp_path, "extends: fourrooms-quick.yaml\nname: mine\n"))
    assert spec.name == "mine"  # read through the local file, which extends the bundled one
    assert spec.tasks == QUICK.tasks


def test_unknown_bundled_name_is_the_only_problem_with_a_suggestion(tmp_path):
    (line,) = problems(write(tmp_path, "extends: fourrooms-quik\nname: mine\n"))
    assert line.startswith(f"{tmp_path}/mine.yaml:1:10: extends: no such file")
    assert "no bundled spec named 'fourrooms-quik'; did you mean 'fourrooms-quick'?" in line


def test_a_missing_parent_is_reported_first_and_alone(tmp_path):
    # Before: three "missing required key" lines at 1:1 came first; they only followed from it.
    (line,) = problems(write(tmp_path, "name: mine\nextends: nowhere.yaml\n"))
    assert line == f"{tmp_path}/mine.yaml:2:10: extends: no such file '{tmp_path}/nowhere.yaml'"


def test_a_broken_grandparent_is_the_first_and_only_problem(tmp_path):
    write(tmp_path, "name: a\n  bad: 1\n", "a.yaml")
    write(tmp_path, "extends: a.yaml\nname: b\n", "b.yaml")
    child = write(tmp_path, "extends: b.yaml\nname: c\n")
    (line,) = problems(child)
    assert line.startswith(f"{child}: inherited from {tmp_path}/a.yaml:2:6: (spec): invalid YAML")


def test_methods_are_removed_and_added_by_name(tmp_path):
    spec = load_spec(
        write(
            tmp_path,
            "extends: fourrooms-quick\nname: mine\n"
            "methods-: [random-options, option-critic]\n"
            "methods+:\n"
            "  - {name: offline-options-kl, method: offline_options, params: {lambda1: 0.001}}\n",
        )
    )
    names = [m.name for m in spec.methods]
    assert names == ["primitives", "offline-options", "eigenoptions", "offline-options-kl"]
    assert spec.methods[-1].params.lambda1 == 0.001
    assert spec.methods[1] == QUICK.methods[2]  # kept entries are untouched


def test_replacing_an_entry_is_removing_then_adding_it(tmp_path):
    spec = load_spec(
        write(
            tmp_path,
            "extends: fourrooms-quick\nname: mine\nmethods-: [eigenoptions]\n"
            "methods+: [{name: eigenoptions, method: eigenoptions, params: {count: 2}}]\n",
        )
    )
    assert spec.methods[-1].name == "eigenoptions" and spec.methods[-1].params.count == 2


def test_methods_edits_apply_along_a_chain(tmp_path):
    write(tmp_path, "extends: fourrooms-quick\nname: b\nmethods-: [option-critic]\n", "b.yaml")
    spec = load_spec(write(tmp_path, "extends: b.yaml\nname: c\nmethods-: [eigenoptions]\n"))
    assert [m.name for m in spec.methods] == ["primitives", "random-options", "offline-options"]


def test_removing_a_name_that_is_not_inherited_names_the_inherited_ones(tmp_path):
    (line,) = problems(
        write(tmp_path, "extends: fourrooms-quick\nname: mine\nmethods-: [eigenoption]\n")
    )
    assert line.startswith(f"{tmp_path}/mine.yaml:3:12: methods-[0]: no inherited methods entry")
    assert "did you mean 'eigenoptions'?" in line and "'option-critic'" in line


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "extends: fourrooms-quick\nmethods: []\nmethods+: []\n",
            "give either methods (replacing the inherited list) or methods+ / methods-",
        ),
        ("extends: fourrooms-quick\nmethods+: primitives\n", "expected a list of methods entries"),
        ("extends: fourrooms-quick\nmethods-: {a: 1}\n", "expected a list of methods entry names"),
    ],
)
def test_bad_edits_are_located_errors(tmp_path, text, message):
    assert any(message in line for line in problems(write(tmp_path, text)))


def test_edits_need_an_inherited_list(tmp_path):
    text = QUICK_TEXT.replace("methods:", "methods+:", 1)
    lines = problems(write(tmp_path, text))
    assert any("methods+ edits an inherited list: it needs 'extends'" in line for line in lines)


def test_a_new_entry_with_a_bad_param_points_at_its_own_line(tmp_path):
    lines = problems(
        write(
            tmp_path,
            "extends: fourrooms-quick\nname: mine\nmethods+:\n"
            "  - {name: kl, method: offline_options, params: {lambda1: -1}}\n",
        )
    )
    assert (
        lines[0].startswith(f"{tmp_path}/mine.yaml:4:") and "methods[5].params.lambda1" in lines[0]
    )


QUICK_TEXT = find_spec("fourrooms-quick").read_text()


# chain-validation's episode budget, with a learner that can stop at a frame budget
CHAIN_EPISODES = """\
extends: chain-validation
name: chain-budget
evaluation: {learner: tf_agents, params: null, episodes: 10}
"""


def test_a_child_switches_an_inherited_episode_budget_to_frames_and_back(tmp_path):
    """``frames`` replaces ``episodes``: the one a child writes drops the one it inherits."""
    parent = load_spec(write(tmp_path, CHAIN_EPISODES, "episodes.yaml"))
    assert (parent.evaluation.episodes, parent.evaluation.frames) == (10, None)
    child = write(tmp_path, "extends: episodes.yaml\nevaluation: {frames: 400}\n", "child.yaml")
    default_episodes = EvaluationSpec().episodes  # the inherited 10 is dropped, not kept
    expected = dataclasses.replace(parent.evaluation, frames=400, episodes=default_episodes)
    assert load_spec(child).evaluation == expected
    back = load_spec(
        write(tmp_path, "extends: child.yaml\nname: back\nevaluation: {episodes: 70}\n", "b.yaml")
    )
    assert (back.evaluation.frames, back.evaluation.episodes) == (None, 70)
    # both written in one file are still refused, inherited or not
    (line,) = problems(
        write(
            tmp_path, "extends: episodes.yaml\nevaluation: {episodes: 5, frames: 400}\n", "c.yaml"
        )
    )
    assert "give the evaluation budget as episodes or as frames, not both" in line


def test_an_error_found_in_a_parent_names_the_child_being_validated_first(tmp_path):
    """Renaming the baseline's method in a child surfaces at the parent's report.baseline."""
    child = write(
        tmp_path,
        "extends: fourrooms-quick\nname: mine\nmethods-: [primitives]\n"
        "methods+:\n  - {name: prims, method: primitives}\n",
    )
    (line,) = problems(child)
    parent = find_spec("fourrooms-quick")
    assert line.startswith(f"{child}: inherited from {parent}:")
    assert "report.baseline: no method entry is named 'primitives'" in line


def test_an_unknown_top_level_key_lists_every_key_a_spec_takes(tmp_path):
    lines = problems(write(tmp_path, "extend: fourrooms-quick\nname: mine\n"))
    (line,) = [line for line in lines if ": extend: " in line]  # and the sections it lacks
    assert "unknown key; did you mean 'extends'?" in line
    expected = line.split("expected one of: ")[1]
    for key in ("name", "family", "methods", "extends", "methods+", "methods-", "sweep"):
        assert key in expected.rstrip(")").split(", ")
