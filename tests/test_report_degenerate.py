"""Degenerate options (a copy of a primitive, never chosen): the rule by hand, and its caveat."""

from __future__ import annotations

import types

import numpy as np
import pytest

from opt_suite.learners.base import OptionUsage
from opt_suite.options import TabularOptionSet
from opt_suite.report.degenerate import (
    COPY_ACTION,
    COPY_TERMINATION,
    copies_of_primitives,
    degenerate_messages,
    degenerate_options,
    never_chosen,
    one_step_options,
    state_visits,
)
from opt_suite.trajectory import Trajectory

# S = 3 states, A = 2 actions, 4 options.
BETA = np.array(
    [
        [1.0, 1.0, 1.0],  # 0: ends every step, always action 1: a copy of primitive 1
        [1.0, 1.0, 1.0],  # 1: ends every step, but half and half: not a copy
        [0.0, 0.0, 0.0],  # 2: always action 0 but never ends: an option
        [0.0, 1.0, 1.0],  # 3: a copy of primitive 0 on states 1 and 2 only
    ]
)
MU = np.array(
    [
        [[0.0, 1.0]] * 3,
        [[0.5, 0.5]] * 3,
        [[1.0, 0.0]] * 3,
        [[0.0, 1.0], [1.0, 0.0], [1.0, 0.0]],
    ]
)


def test_copies_of_primitives_by_hand():
    # Every state counts the same: option 3's mean β = 2/3 < 0.95, its action 0 share = 2/3.
    [copy] = copies_of_primitives(MU, BETA, np.zeros(3))
    assert (copy.option, copy.action, copy.termination, copy.share) == (0, 1, 1.0, 1.0)
    # Demonstrations that visit states 1 and 2 only: option 3 acts as primitive 0 there.
    visits = state_visits([np.array([1, 2, 1, 2]), np.array([2, 2, 0])], 3)
    np.testing.assert_array_equal(visits, [0.0, 2.0, 3.0])  # the last state takes no action
    found = copies_of_primitives(MU, BETA, visits)
    assert [(c.option, c.action) for c in found] == [(0, 1), (3, 0)]
    # Just below the thresholds is no copy: β = 0.94 everywhere, or 94% on one action.
    assert COPY_TERMINATION == COPY_ACTION == 0.95
    assert copies_of_primitives(MU[:1], np.full((1, 3), 0.94), visits) == []
    assert copies_of_primitives(np.array([[[0.06, 0.94]] * 3]), BETA[:1], visits) == []


def test_never_chosen_counts_every_episode_and_task():
    calls = np.array([[[3, 1, 0, 2], [0, 0, 0, 1]], [[1, 1, 0, 0], [2, 0, 0, 0]]])  # [t, e, A+m]
    assert never_chosen(calls, num_primitives=2) == [0]  # option 0 = column 2
    assert never_chosen(calls[..., :2], num_primitives=2) == []


def _cell(kind: str, cell_id: str, status: str = "done") -> types.SimpleNamespace:
    return types.SimpleNamespace(
        kind=kind, method="offline", seed=0, status=status, cell_id=cell_id
    )


@pytest.fixture(scope="module")
def fake_store(tmp_path_factory):
    """A duck-typed store: one discovery (the options above), two recorded evaluations."""
    folder = tmp_path_factory.mktemp("degenerate")
    options = TabularOptionSet(MU, BETA, ("copy", "coin", "long", "half"))
    options.save(folder / "options.npz")
    names = ("a0", "a1", "copy", "coin", "long", "half")
    for task, calls in enumerate(([[4, 1, 1, 2, 0, 0]], [[0, 3, 0, 1, 0, 0]])):
        OptionUsage(names, 2, np.array(calls), np.array(calls)).save(folder / f"usage{task}.npz")
    cells = [_cell("discovery", "d"), _cell("evaluation", "0"), _cell("evaluation", "1")]
    store = types.SimpleNamespace(
        option_set_file=lambda method, seed: folder / "options.npz",
        recorded_file=lambda cell_id, name: folder / f"usage{cell_id}.npz",
    )
    demos = {0: [Trajectory("t", np.array([1, 2, 1]), np.array([0, 0]), np.zeros(2))]}
    return store, cells, demos


def test_the_report_names_copies_and_unused_options_with_the_thresholds(fake_store):
    store, cells, demos = fake_store
    lines = degenerate_options(store, cells, demos)
    assert lines == [
        "offline, seed 0: option 'copy' is a copy of primitive 1: on the demonstrated states it"
        " terminates with mean β = 1.00 (≥ 0.95) and puts 100% of its choices on action 1"
        " (≥ 95%)",
        "offline, seed 0: option 'half' is a copy of primitive 0: on the demonstrated states it"
        " terminates with mean β = 1.00 (≥ 0.95) and puts 100% of its choices on action 0"
        " (≥ 95%)",
        "offline, seed 0: option 'long' was never chosen by the test-time learner in 2 recorded"
        " evaluation episodes",
        "offline, seed 0: option 'half' was never chosen by the test-time learner in 2 recorded"
        " evaluation episodes",
    ]
    assert degenerate_options(store, cells, demos, methods={"other"}) == []
    # A seed whose evaluation is not done (no counts): only the copies, never "never chosen".
    cells = [*cells[:2], _cell("evaluation", "1", status="failed")]
    assert all("never chosen" not in line for line in degenerate_options(store, cells, demos))


def test_a_degenerate_option_is_a_caveat_of_the_leaderboard():
    from report_fakes import linear_table

    from opt_suite.report.build import ReportInputs, analyse, leaderboard
    from opt_suite.report.degenerate import SECTION
    from opt_suite.report.tables import leaderboard_markdown

    line = "offline, seed 0: option 'copy' is a copy of primitive 1: ..."
    inputs = ReportInputs(
        episodes=linear_table({"a": 0.0, "b": 1.0}),
        spec_name="s",
        spec_hash="0" * 64,
        sections={SECTION.key: (line,)},
    )
    text = leaderboard_markdown(leaderboard(inputs, analyse(inputs)))
    assert f"degenerate option: {line}" in text


def test_the_section_reads_the_run_through_its_store(fake_store):
    from opt_suite.report.degenerate import SECTION
    from opt_suite.report.section import StoredRun
    from opt_suite.spec.stored import stored_sections

    store, cells, demos = fake_store
    with_demos = types.SimpleNamespace(
        seeds=lambda: sorted(demos), demonstrations=lambda seed: demos[seed], **vars(store)
    )
    run = StoredRun(with_demos, stored_sections("name: x\n"))
    found = SECTION.collect(cells, ["offline"], run)
    assert found == tuple(degenerate_options(store, cells, demos)) and len(found) == 4
    assert SECTION.caveats(found)[0].startswith("degenerate option: offline, seed 0: option 'copy'")
    assert SECTION.column(found) is None and SECTION.markdown(found, {}) == ""
    assert SECTION.json(found) == {}


def test_options_of_one_step_per_call_are_flagged_from_their_counts():
    # Network option sets: only the counts can say an option ends after (almost) every step.
    calls = np.array([[5, 5, 20, 10, 19], [0, 0, 1, 10, 0]])  # [episodes, A + m], A = 2
    steps = np.array([[5, 5, 20, 30, 19], [0, 0, 1, 30, 0]])
    # option 0: 21 steps in 21 calls; option 1: 3 steps a call; option 2: 19 calls (too few)
    assert one_step_options(calls, steps, num_primitives=2) == [(0, 1.0, 21)]
    [line] = degenerate_messages("deep, seed 3", ("o0", "o1", "o2"), [], [], 2, [(0, 1.0, 21)])
    assert line == (
        "deep, seed 3: option 'o0' runs 1.00 primitive steps per call over 21 calls (≤ 1.05 over"
        " ≥ 20): it terminates after (almost) every step, like a primitive (its actions are not"
        " checked: a network option set)"
    )


def test_discovery_warnings_are_caveats_of_the_leaderboard_once_per_line_with_their_seeds():
    from report_fakes import linear_table

    from opt_suite.methods.base import DISCOVERY_WARNINGS
    from opt_suite.report.build import ReportInputs, analyse, leaderboard
    from opt_suite.report.source import discovery_warnings
    from opt_suite.report.tables import leaderboard_markdown

    def cell(method: str, seed: int, warnings: list[str], status: str = "done"):
        info = {DISCOVERY_WARNINGS: warnings}
        return types.SimpleNamespace(
            kind="discovery", method=method, seed=seed, status=status, info=info
        )

    line = "compile: dropped demonstration 2 (t/0): 1 action(s), fewer than the 3 segments"
    cells = [
        cell("compile", 1, [line]),
        cell("compile", 0, [line]),
        cell("love", 0, ["other"], status="failed"),  # a failed cell's info is not read
        cell("gone", 0, ["not reported"]),  # an entry the report leaves out
    ]
    lines = discovery_warnings(cells, ["compile", "love"])
    assert lines == [f"discovery of 'compile' (seed 0, 1): {line}"]
    inputs = ReportInputs(
        episodes=linear_table({"a": 0.0, "b": 1.0}),
        spec_name="s",
        spec_hash="0" * 64,
        discovery_warnings=tuple(lines),
    )
    text = leaderboard_markdown(leaderboard(inputs, analyse(inputs)))
    assert f"discovery of 'compile' (seed 0, 1): {line}" in text
