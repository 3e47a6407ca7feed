"""Four rooms: the contract, the layouts, the exact dynamics against brute force, task sampling."""

from __future__ import annotations

import typing

import gymnasium
import numpy as np
import pytest

from opt_suite.families.tabular import grid_dynamics, layouts
from opt_suite.families.tabular.fourrooms import FourRooms, Params, TaskParams, Variation
from opt_suite.testing import FamilyContract

SUTTON = FourRooms(Params(layout="sutton-13x13"))


class TestFourRoomsPaperContract(FamilyContract):
    """The paper's setting: 40x40, slip 0.1, -1 per step, +10 at the goal, random start/goal."""

    def family(self):
        return FourRooms(Params())


class TestFourRoomsOptionCriticContract(FamilyContract):
    """The option-critic setting: Sutton's map, random-neighbour moves, goal in the east hallway."""

    def family(self):
        return FourRooms(
            Params(layout="sutton-13x13", dynamics="random-neighbour", step_reward=0, goal_reward=1)
        )

    def variation(self):
        return Variation(goal_region="south-east")


# Layouts ------------------------------------------------------------------------------------


def test_layout_names_are_the_params_choices():
    assert typing.get_args(typing.get_type_hints(Params)["layout"]) == tuple(layouts.LAYOUTS)


@pytest.mark.parametrize(
    "name, shape, free, hallway_cells",
    [
        ("sutton-13x13", (13, 13), 104, ((3, 6), (7, 9), (10, 6), (6, 2))),
        ("paper-40x40", (40, 40), 1525, ((9, 19), (21, 29), (30, 19), (19, 9))),
        ("paper-40x40-wide", (40, 40), 1537, ((9, 19), (21, 29), (30, 19), (19, 9))),
        ("10x15", (10, 15), 130, ((2, 7), (5, 11), (7, 7), (4, 3))),
    ],
)
def test_layout_sizes_free_cells_and_hallways(name, shape, free, hallway_cells):
    layout = layouts.get(name)
    assert layout.shape == shape
    assert int((~layout.walls).sum()) == free
    hallways = dict(zip(("north", "east", "south", "west"), hallway_cells, strict=True))
    assert dict(layout.hallways) == hallways
    for cell in hallways.values():
        assert not layout.walls[cell]
    in_rooms = sum(len(cells) for cells in layout.rooms.values())
    assert in_rooms == free - 4 - len(layout.hallway_extra)


def test_wide_layout_is_the_paper_map_with_four_cell_hallways():
    narrow, wide = layouts.get("paper-40x40"), layouts.get("paper-40x40-wide")
    opened = np.argwhere(narrow.walls & ~wide.walls)
    assert not (wide.walls & ~narrow.walls).any()  # only opens cells
    assert sorted(map(tuple, opened)) == sorted(wide.hallway_extra)
    # Each hallway is now a run of four free cells across its wall line.
    assert not wide.walls[8:12, 19].any() and wide.walls[7, 19] and wide.walls[12, 19]
    assert not wide.walls[28:32, 19].any() and wide.walls[27, 19] and wide.walls[32, 19]
    assert not wide.walls[19, 8:12].any() and wide.walls[19, 7] and wide.walls[19, 12]
    assert not wide.walls[21, 28:32].any() and wide.walls[21, 27] and wide.walls[21, 32]


def test_sutton_map_is_the_classic_one():
    walls = layouts.get("sutton-13x13").walls
    assert walls[0].all() and walls[-1].all() and walls[:, 0].all() and walls[:, -1].all()
    # East-west inner wall: row 6 on the west half (door at col 2), row 7 on the east (col 9).
    assert walls[6, 1:6].tolist() == [True, False, True, True, True]
    assert walls[7, 7:12].tolist() == [True, True, False, True, True]
    assert not walls[6, 7:12].any() and not walls[7, 1:6].any()
    # North-south wall at column 6, doors at rows 3 and 10.
    assert [r for r in range(1, 12) if not walls[r, 6]] == [3, 10]
    # State 62 is the option-critic code's goal, the east doorway.
    assert SUTTON.state_of((7, 9)) == 62


def test_paper_map_has_no_drawn_outer_wall():
    walls = layouts.get("paper-40x40").walls
    assert not walls[0, 0] and not walls[39, 39] and not walls[0, 39] and not walls[39, 0]


@pytest.mark.parametrize("name", list(layouts.LAYOUTS))
def test_each_hallway_joins_the_two_rooms_on_its_side(name):
    layout = layouts.get(name)
    room_of = {tuple(c): room for room, cells in layout.rooms.items() for c in cells}
    sides = {"north": {"north-west", "north-east"}, "south": {"south-west", "south-east"}}
    sides |= {"west": {"north-west", "south-west"}, "east": {"north-east", "south-east"}}
    for hallway, (r, c) in layout.hallways:
        joined = {room_of.get(n) for n in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1))}
        assert joined - {None} == sides[hallway], (name, hallway)


def test_parse_rejects_bad_maps():
    with pytest.raises(ValueError, match="differ in length"):
        layouts.parse("..\n...")
    with pytest.raises(ValueError, match="only '#'"):
        layouts.parse(".x\n..")
    with pytest.raises(KeyError, match="known: paper-40x40"):
        layouts.get("nope")


# Exact dynamics against a brute-force, one-cell-at-a-time reference ---------------------------


def _reference_dense(walls, dynamics, p):
    """P[s, a, s'] written straight from the definitions, with Python loops."""
    cells = [tuple(c) for c in np.argwhere(~walls)]
    index = {c: i for i, c in enumerate(cells)}
    moves = [(-1, 0), (1, 0), (0, -1), (0, 1)]  # up, down, left, right

    def move(cell, d):
        target = (cell[0] + moves[d][0], cell[1] + moves[d][1])
        return target if target in index else cell  # wall or off the map: stay

    P = np.zeros((len(cells), 4, len(cells)))
    for s, cell in enumerate(cells):
        for a in range(4):
            if dynamics == "slip":
                for d in range(4):
                    P[s, a, index[move(cell, d)]] += 1 - p if d == a else p / 3
                continue
            # Bacon et al. (2017): w.p. 1 - p the intended move, w.p. p a free neighbour of `cell`.
            free = [m for m in (move(cell, d) for d in range(4)) if m != cell]
            P[s, a, index[move(cell, a)]] += 1 - p
            for m in free:
                P[s, a, index[m]] += p / len(free)
    return P


@pytest.mark.parametrize("name", ["sutton-13x13", "10x15"])
@pytest.mark.parametrize("dynamics, p", [("slip", 0.1), ("slip", 0.3), ("random-neighbour", 1 / 3)])
def test_model_matches_brute_force(name, dynamics, p):
    family = FourRooms(Params(layout=name, dynamics=dynamics, slip=p, fail_prob=p))
    walls = layouts.get(name).walls
    goal, start = map(tuple, np.argwhere(~walls)[[0, -1]])
    model = family.tabular_model(TaskParams(start, goal))
    expected = _reference_dense(walls, dynamics, p)
    non_goal = ~model.terminal
    np.testing.assert_allclose(model.dense_transitions()[non_goal], expected[non_goal], atol=1e-12)


def test_slip_probabilities_are_exact():
    model = SUTTON.tabular_model(TaskParams((1, 1), (11, 11)))
    P = model.dense_transitions()
    s = SUTTON.state_of((2, 2))  # interior cell: four distinct outcomes
    up, down, left, right = (SUTTON.state_of(c) for c in ((1, 2), (3, 2), (2, 1), (2, 3)))
    np.testing.assert_allclose(P[s, 0, [up, down, left, right]], [0.9, 0.1 / 3, 0.1 / 3, 0.1 / 3])
    # Corner (1, 1), action up: bumping up (0.9) or left (0.1/3) stays put.
    corner = SUTTON.state_of((1, 1))
    np.testing.assert_allclose(P[corner, 0, corner], 0.9 + 0.1 / 3)
    np.testing.assert_allclose(P[corner, 0, SUTTON.state_of((2, 1))], 0.1 / 3)


def test_random_neighbour_probabilities_are_exact():
    # The paper's rule (Bacon et al. 2017): w.p. 2/3 the intended move, w.p. 1/3 a random free
    # neighbour of the *current* cell.
    family = FourRooms(Params(layout="sutton-13x13", dynamics="random-neighbour"))
    P = family.tabular_model(TaskParams((1, 1), (11, 11))).dense_transitions()
    corner = family.state_of((1, 1))  # free neighbours: (1, 2) and (2, 1)
    # Up, into the wall: stays w.p. 2/3, else (1, 2) or (2, 1) w.p. 1/6 each.
    np.testing.assert_allclose(P[corner, 0, corner], 2 / 3)
    np.testing.assert_allclose(P[corner, 0, family.state_of((1, 2))], 1 / 6)
    np.testing.assert_allclose(P[corner, 0, family.state_of((2, 1))], 1 / 6)
    # Right: (1, 2) w.p. 2/3 + 1/6 = 5/6, (2, 1) w.p. 1/6.
    np.testing.assert_allclose(P[corner, 3, family.state_of((1, 2))], 5 / 6)
    np.testing.assert_allclose(P[corner, 3, family.state_of((2, 1))], 1 / 6)
    np.testing.assert_allclose(P[corner].sum(axis=-1), 1.0)
    # An open cell with four free neighbours: 2/3 + 1/12 to the intended one, 1/12 to the others.
    middle = family.state_of((2, 2))
    np.testing.assert_allclose(P[middle, 1, family.state_of((3, 2))], 2 / 3 + 1 / 12)
    for cell in ((1, 2), (2, 1), (2, 3)):
        np.testing.assert_allclose(P[middle, 1, family.state_of(cell)], 1 / 12)


def test_wall_bump_leaves_the_agent_in_place_in_the_env():
    family = FourRooms(Params(layout="sutton-13x13", slip=0.0))
    env = family.make_env(TaskParams((1, 1), (11, 11)))
    obs, _ = env.reset(seed=0)
    for action in (0, 2):  # up, left: both walls
        obs, reward, terminated, _, _ = env.step(action)
        assert family.cell_of(obs) == (1, 1) and reward == -1.0 and not terminated
    obs, *_ = env.step(1)
    assert family.cell_of(obs) == (2, 1)


def test_goal_step_pays_goal_reward_instead_of_step_reward():
    family = FourRooms(Params(layout="sutton-13x13", slip=0.0))
    model = family.tabular_model(TaskParams((6, 9), (7, 9)))
    goal = family.state_of((7, 9))
    live = ~model.terminal[:, None, None]  # the goal's own row is absorbing with reward 0
    assert np.all(model.reward[(model.next_state == goal) & live] == 10.0)
    assert np.all(model.reward[(model.next_state != goal) & live] == -1.0)
    assert np.all(model.reward[goal] == 0.0) and np.all(model.next_state[goal] == goal)
    env = family.make_env(TaskParams((6, 9), (7, 9)))
    env.reset(seed=0)
    assert env.step(1)[:3] == (goal, 10.0, True)  # down into the east hallway


def test_shared_tables_are_cached_and_read_only():
    family = FourRooms(Params())
    a = family.tabular_model(TaskParams((0, 0), (39, 39)))
    b = family.tabular_model(TaskParams((5, 5), (20, 30)))
    assert not a.prob.flags.writeable and not a.reward.flags.writeable
    assert b.reward[family.state_of((20, 29)), 3, 3] == 10.0  # b's goal, not a's
    assert a.reward[family.state_of((20, 29)), 3, 3] == -1.0


# States, tasks and variations ----------------------------------------------------------------


def test_state_cell_mapping_is_row_major_and_inverse():
    for state in range(len(SUTTON.cells)):
        assert SUTTON.state_of(SUTTON.cell_of(state)) == state
    assert SUTTON.cell_of(0) == (1, 1) and SUTTON.cell_of(103) == (11, 11)
    with pytest.raises(ValueError, match="is a wall"):
        SUTTON.state_of((0, 0))


def test_instance_names():
    assert FourRooms().instance_name == "fourrooms-40x40"
    assert SUTTON.instance_name == "fourrooms-13x13"
    assert FourRooms(Params(layout="10x15")).instance_name == "fourrooms-10x15"


def test_check_task_names_the_bad_cell():
    assert SUTTON.check_task(TaskParams((1, 1), (7, 9))) == []
    assert SUTTON.check_task(TaskParams((0, 0), (7, 9))) == [
        ("start", "cell (0, 0) is a wall in layout 'sutton-13x13'")
    ]
    assert "off the 13x13 map" in SUTTON.check_task(TaskParams((1, 1), (13, 2)))[0][1]
    assert SUTTON.check_task(TaskParams((1, 1), (1, 1)))[0][0] == "goal"


def test_goal_regions_and_fixed_cells():
    rng = np.random.default_rng(0)
    east = SUTTON.sample_tasks(Variation(goal_region="east-hallway"), 20, rng)
    assert {t.goal for t in east} == {(7, 9)} and all(t.start != t.goal for t in east)
    south_east = {tuple(c) for c in layouts.get("sutton-13x13").rooms["south-east"]}
    moved = SUTTON.sample_tasks(Variation(goal_region="south-east"), 50, rng)
    assert {t.goal for t in moved} <= south_east and len({t.goal for t in moved}) > 5
    fixed = SUTTON.sample_tasks(Variation(start=(1, 1), goal_region="north-west"), 20, rng)
    assert {t.start for t in fixed} == {(1, 1)} and (1, 1) not in {t.goal for t in fixed}


def test_bad_variations_are_reported():
    assert Variation(start=(1, 1), start_region="north-west").check()[0][0] == "start_region"
    assert Variation(start=(2, 2), goal=(2, 2)).check()[0][0] == "goal"
    assert SUTTON.check_variation(Variation(goal=(0, 5))) == [
        ("goal", "cell (0, 5) is a wall in layout 'sutton-13x13'")
    ]
    with pytest.raises(ValueError, match=r"tasks.vary.goal: cell \(0, 5\) is a wall"):
        SUTTON.sample_tasks(Variation(goal=(0, 5)), 1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="no start cell differs"):
        SUTTON.sample_tasks(
            Variation(start_region="east-hallway", goal_region="east-hallway"),
            1,
            np.random.default_rng(0),
        )


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _in(room: str, cell: tuple[int, int]) -> bool:
    return cell in {tuple(c) for c in layouts.get("sutton-13x13").rooms[room]}


@pytest.mark.parametrize("room", layouts.ROOMS)
def test_a_held_out_room_gets_the_test_goals_only_and_no_start(room):
    held_out = Variation(held_out_room=room)
    train, test = SUTTON.make_tasks(held_out, (), 40, 20, 20, seed=1)
    others = [r for r in layouts.ROOMS if r != room]
    train_goals = {t.params.goal for t in train}
    assert all(any(_in(r, g) for r in others) for g in train_goals)
    assert {r for r in others if any(_in(r, g) for g in train_goals)} == set(others)
    assert all(_in(room, t.params.goal) for t in test)
    assert not any(_in(room, t.params.start) for t in train + test)
    # Per-seed draws (tasks.test_per_seed) are test tasks too; train draws stay out of the room.
    drawn = SUTTON.sample_test_tasks(held_out, 30, np.random.default_rng(2))
    assert all(_in(room, t.goal) and not _in(room, t.start) for t in drawn)
    assert not any(_in(room, t.goal) for t in SUTTON.sample_tasks(held_out, 30, rng(2)))


def test_without_a_held_out_room_test_draws_are_train_draws():
    vary = Variation(goal_region="south-east")
    assert SUTTON.sample_test_tasks(vary, 9, rng(4)) == SUTTON.sample_tasks(vary, 9, rng(4))


def test_held_out_room_conflicts_are_reported_where_written():
    assert [
        k for k, _ in Variation(held_out_room="north-east", goal_region="north-west").check()
    ] == ["held_out_room"]
    assert [k for k, _ in Variation(held_out_room="north-east", goal=(2, 2)).check()] == [
        "held_out_room"
    ]
    assert Variation(held_out_room="north-east", start_region="north-east").check()[0][0] == (
        "start_region"
    )
    inside = tuple(int(x) for x in layouts.get("sutton-13x13").rooms["north-east"][0])
    assert SUTTON.check_variation(Variation(held_out_room="north-east", start=inside)) == [
        (
            "start",
            f"cell {inside} is in the held-out room 'north-east' (expected a start outside it)",
        )
    ]
    with pytest.raises(ValueError, match="tasks.vary.start: cell"):
        SUTTON.sample_test_tasks(Variation(held_out_room="north-east", start=inside), 1, rng(0))


# The gymnasium env ---------------------------------------------------------------------------


def test_gymnasium_make_with_flat_kwargs_and_clear_errors():
    env = gymnasium.make(
        "opt_suite/FourRooms-v0",
        layout="sutton-13x13",
        start=[1, 1],
        goal=[7, 9],
        max_episode_steps=3,
    )
    assert env.unwrapped.task_params == TaskParams((1, 1), (7, 9))
    env.reset(seed=0)
    assert [env.step(1)[3] for _ in range(3)] == [False, False, True]  # TimeLimit at 3
    with pytest.raises(ValueError, match=r"Params.slip: expected a value < 1, got 1.5"):
        gymnasium.make("opt_suite/FourRooms-v0", slip=1.5, start=(0, 0), goal=(1, 1))
    with pytest.raises(ValueError, match=r"Params.dynamics: expected one of \['slip'"):
        gymnasium.make("opt_suite/FourRooms-v0", dynamics="x", start=(0, 0), goal=(1, 1))
    with pytest.raises(TypeError, match=r"unknown keyword\(s\) \['speed'\]"):
        gymnasium.make("opt_suite/FourRooms-v0", speed=2, start=(0, 0), goal=(1, 1))
    with pytest.raises(ValueError, match=r"start: cell \(19, 19\) is a wall"):
        gymnasium.make("opt_suite/FourRooms-v0", start=(19, 19), goal=(1, 1))


def test_pictures_show_walls_goal_and_agent():
    family = FourRooms(Params(layout="sutton-13x13"))
    env = family.make_env(TaskParams((1, 1), (7, 9)), render_mode="rgb_array")
    env.reset(seed=0)
    image = env.render()
    assert image.shape == (13 * 8, 13 * 8, 3)
    assert image[0, 0].tolist() == [64, 64, 64]  # wall
    assert image[8 + 4, 8 + 4].tolist() == [214, 39, 40]  # agent at (1, 1)
    assert image[7 * 8, 9 * 8].tolist() == [46, 160, 67]  # goal at (7, 9)
    text = family.make_env(TaskParams((1, 1), (7, 9)), render_mode="ansi")
    text.reset(seed=0)
    lines = text.render().splitlines()
    assert lines[1][1] == "A" and lines[7][9] == "G" and lines[0] == "#" * 13


def test_step_after_termination_is_an_error():
    family = FourRooms(Params(layout="sutton-13x13", slip=0.0))
    env = family.make_env(TaskParams((6, 9), (7, 9))).unwrapped
    env.reset(seed=0)
    env.step(1)
    with pytest.raises(RuntimeError, match="after the episode terminated"):
        env.step(1)


def test_grid_action_order_is_up_down_left_right():
    assert grid_dynamics.ACTIONS == ("up", "down", "left", "right")
    assert grid_dynamics.MOVES.tolist() == [[-1, 0], [1, 0], [0, -1], [0, 1]]
