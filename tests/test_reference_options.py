"""Reference options: rooms and hallways derived from the grid, hallway options, the method."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from spec_fakes import where

from baselines.reference_options import ReferenceOptions
from opt_suite.cli import main
from opt_suite.families.tabular import grid_dynamics, layouts
from opt_suite.families.tabular.chain import Chain
from opt_suite.families.tabular.fourrooms import FourRooms, Params, Variation
from opt_suite.families.tabular.hallway_options import GREEDY, hallway_options
from opt_suite.methods.base import DiscoveryContext
from opt_suite.options import from_bytes, to_bytes
from opt_suite.testing import MethodContract

ROOT = Path(__file__).resolve().parents[1]


class TestReferenceOptionsContract(MethodContract):
    method_class = ReferenceOptions
    params = ReferenceOptions.Params()


# Rooms and hallways from the grid -------------------------------------------------------------


@pytest.mark.parametrize("name", list(layouts.LAYOUTS))
def test_derived_hallways_and_rooms_are_the_declared_ones(name):
    layout = layouts.get(name)
    plan = layouts.floor_plan(layout.walls)
    declared = sorted([cell for _, cell in layout.hallways] + list(layout.hallway_extra))
    derived = sorted((int(r), int(c)) for cells in plan.hallways for r, c in cells)
    assert derived == declared
    assert len(plan.hallways) == 4
    as_sets = sorted(sorted(map(tuple, cells.tolist())) for cells in plan.rooms)
    assert as_sets == sorted(sorted(map(tuple, cells.tolist())) for cells in layout.rooms.values())
    # Four rooms: every hallway joins two rooms, every room has two hallways.
    assert all(len(joins) == 2 for joins in plan.joins)
    assert all(len(plan.room_hallways(room)) == 2 for room in range(4))


def test_a_map_given_as_text_gets_its_doorways():
    """Not a named layout: two rooms side by side, a two-cell gap in the wall between them."""
    walls = layouts.parse(
        "\n".join(["....#....", "....#....", ".........", ".........", "....#....", "....#...."])
    )
    plan = layouts.floor_plan(walls)
    assert [sorted(map(tuple, h.tolist())) for h in plan.hallways] == [[(2, 4), (3, 4)]]
    assert [len(room) for room in plan.rooms] == [24, 24] and plan.joins == ((0, 1),)
    options = hallway_options(walls)
    assert options.names == ("room-0-to-hallway-0", "room-1-to-hallway-0")


def test_a_map_without_a_gap_in_a_wall_is_a_clear_error():
    with pytest.raises(ValueError, match="no hallway"):
        layouts.floor_plan(layouts.parse("....\n....\n...."))


# The hallway options (Sutton, Precup & Singh 1999, Fig. 2) ------------------------------------


@pytest.mark.parametrize("name", list(layouts.LAYOUTS))
def test_hallway_options_follow_shortest_paths_and_stop_outside_their_room(name):
    walls = layouts.get(name).walls
    options = hallway_options(walls)
    plan = layouts.floor_plan(walls)
    cells, index = grid_dynamics.states_of(walls)
    neighbours = grid_dynamics.neighbours(walls)
    assert len(options) == 8 and len(set(options.names)) == 8
    np.testing.assert_allclose(options.mu.sum(axis=-1), 1.0)
    initiation = options.initiation_table
    o = 0
    for room, room_cells in enumerate(plan.rooms):
        inside = index[room_cells[:, 0], room_cells[:, 1]]
        for target in plan.room_hallways(room):
            goal = set(index[plan.hallways[target][:, 0], plan.hallways[target][:, 1]].tolist())
            others = [h for h in plan.room_hallways(room) if h != target]
            other_cells = np.concatenate([plan.hallways[h] for h in others])
            start = set(inside.tolist()) | set(index[other_cells[:, 0], other_cells[:, 1]].tolist())
            assert set(np.flatnonzero(initiation[o]).tolist()) == start
            assert set(np.flatnonzero(options.beta[o] == 0).tolist()) == set(inside.tolist())
            assert (options.beta[o][list(goal)] == 1).all()
            # Following the 0.95 action from every start state reaches the target hallway within
            # the room, in as many moves as the room's shortest path (no state is visited twice).
            for s in start:
                path = [s]
                while path[-1] not in goal:
                    assert options.mu[o, path[-1]].max() == GREEDY
                    path.append(int(neighbours[path[-1], options.mu[o, path[-1]].argmax()]))
                    assert path[-1] in start | goal and len(path) <= len(start) + 1
            o += 1


def test_sutton_options_by_hand():
    """Sutton's map: the north-west room's option to the north hallway (3, 6) from (1, 1)."""
    family = FourRooms(Params(layout="sutton-13x13"))
    options = family.reference_options(None)
    o = options.names.index("north-west-to-north")
    down, right, up = 1, 3, 0
    assert options.mu[o, family.state_of((1, 1)), down] == GREEDY  # row 1 -> row 3 first
    assert options.mu[o, family.state_of((3, 5)), right] == GREEDY  # into the hallway
    assert options.mu[o, family.state_of((5, 5)), up] == GREEDY
    assert options.mu[o, family.state_of((1, 1)), up] == pytest.approx((1 - GREEDY) / 3)
    # The west hallway (6, 2) is in its initiation set; it steps up into the room.
    assert options.initiation_table[o, family.state_of((6, 2))]
    assert options.mu[o, family.state_of((6, 2)), up] == GREEDY
    assert options.beta[o, family.state_of((6, 2))] == 1.0
    assert not options.initiation_table[o, family.state_of((1, 7))]  # north-east room


def test_family_offers_the_same_options_for_every_task():
    family = FourRooms(Params(layout="paper-40x40-wide"))
    train, _ = family.make_tasks(Variation(), (), 3, 3, 0, seed=0)
    sets = [family.reference_options(task) for task in train]
    assert len({to_bytes(s) for s in sets}) == 1
    assert not sets[0].mu.flags.writeable  # cached and shared: read-only


def test_options_file_round_trip_keeps_the_initiation_sets():
    options = FourRooms(Params(layout="sutton-13x13")).reference_options(None)
    loaded = from_bytes(to_bytes(options))
    np.testing.assert_array_equal(loaded.initiation_table, options.initiation_table)
    assert loaded.has_initiation


# The method ----------------------------------------------------------------------------------


def test_method_returns_the_family_options():
    family = FourRooms(Params(layout="sutton-13x13"))
    train, _ = family.make_tasks(Variation(), (), 2, 2, 0, seed=0)
    found = ReferenceOptions(ReferenceOptions.Params()).discover(
        DiscoveryContext(family, train, (), 0, np.random.SeedSequence(0))
    )
    assert to_bytes(found.options) == to_bytes(family.reference_options(train[0]))
    assert found.info == {"options": 8}


def test_method_on_a_family_without_reference_options_is_a_clear_error():
    family = Chain()
    train, _ = family.make_tasks(family.Variation(), (), 1, 1, 0, seed=0)
    with pytest.raises(ValueError, match="has no reference options"):
        ReferenceOptions(ReferenceOptions.Params()).discover(
            DiscoveryContext(family, train, (), 0, np.random.SeedSequence(0))
        )


def test_validate_rejects_reference_options_on_chain_at_its_key(tmp_path, capsys):
    text = (ROOT / "specs" / "chain-validation.yaml").read_text()
    text = text.replace(
        "    method: primitives\n",
        "    method: primitives\n  - name: reference\n    method: reference_options\n",
    )
    path = tmp_path / "chain.yaml"
    path.write_text(text)
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (
        f"{path}:{where(text, 'reference_options')}: methods[1].method: reference_options needs a "
        "family with reference options; chain-7 has no reference options; methods that can: "
        "bc_option, bc_ppo, compile, covering_options, eigenoptions, laplacian_options, love, "
        "offline_options, option_critic, primitives, random_options"
    )
