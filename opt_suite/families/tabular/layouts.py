"""Four-rooms grid layouts as text maps, and their parse into walls, rooms and hallways.

A map is text, one line per grid row: ``#`` is a wall, ``.`` a free cell. Cells are
``(row, col)`` with row 0 at the top. **The edge of the map is always a wall**: a move off the map
leaves the agent in place exactly like a move into ``#``. So a map may draw its outer wall
(``sutton-13x13`` does, as in the classic figure) or leave it implicit (the paper's own domains
do, so that "40x40" is the whole grid the agent moves on).

Layouts:

- ``paper-40x40``: Garcia, Nota & Thomas (2020), Sec. 5.1, "a gridworld of size 40x40". The paper
  gives only the size, so this map is Sutton's four rooms scaled up: the 40x40 grid is the whole
  map (no outer wall drawn; the map edge is the wall), a full-height wall at column 19, an
  east-west wall at row 19 on the west half and at row 21 on the east half (offset like Sutton's),
  one one-cell hallway in each of the four inner wall segments. 1525 free cells; rooms (rows x
  cols) 19x19 (NW), 20x19 (SW), 21x20 (NE), 18x20 (SE).
- ``paper-40x40-wide``: the same 40x40 map with every hallway four cells wide (rows 8-11 of the
  north and south hallways, columns 8-11 and 28-31 of the west and east ones): the paper does not
  show its map, and a one-cell hallway is the hardest case for an agent that must find it, so the
  sensitivity study varies it. 1537 free cells.
- ``sutton-13x13``: Sutton, Precup & Singh (1999), Fig. 2, identical to the option-critic code's map
  (Bacon et al. 2017): outer wall drawn, 11x11 inside, 104 free cells, hallways (3,6), (6,2), (7,9),
  (10,6); the east-west wall is at row 6 on the west half and row 7 on the east half.
- ``10x15``: the small domain of the paper's Fig. 3 (10 rows, 15 columns, no outer wall drawn), for
  pictures. 130 free cells.

Hallways are named by the side of the map they sit on: ``north`` joins the two northern rooms,
``east`` the two eastern rooms (the option-critic paper's "east doorway"), and so on.

Rooms and hallways can also be *derived* from the grid alone (:func:`doorways`, :func:`floor_plan`),
so that anything built on them — the hand-made hallway options of
:mod:`opt_suite.families.tabular.hallway_options` — works on any map, not only on the named ones;
on the named maps the derivation finds exactly the declared hallways (a test checks it).
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

__all__ = [
    "Layout",
    "LAYOUTS",
    "ROOMS",
    "HALLWAYS",
    "FloorPlan",
    "doorways",
    "floor_plan",
    "get",
    "parse",
    "region_cells",
]

ROOMS = ("north-west", "north-east", "south-west", "south-east")
HALLWAYS = ("north", "east", "south", "west")

_PAPER_40X40 = "\n".join(
    [
        *["." * 19 + "#" + "." * 20] * 9,
        "." * 40,  # row 9: north hallway at column 19
        *["." * 19 + "#" + "." * 20] * 9,
        "#" * 9 + "." + "#" * 10 + "." * 20,  # row 19: west wall, hallway at column 9
        "." * 19 + "#" + "." * 20,
        "." * 19 + "#" * 10 + "." + "#" * 10,  # row 21: east wall, hallway at column 29
        *["." * 19 + "#" + "." * 20] * 8,
        "." * 40,  # row 30: south hallway at column 19
        *["." * 19 + "#" + "." * 20] * 9,
    ]
)


def _widen_hallways(text: str, extra: tuple[tuple[int, int], ...]) -> str:
    """``text`` with the cells ``extra`` opened (made free)."""
    rows = [list(line) for line in text.splitlines()]
    for r, c in extra:
        rows[r][c] = "."
    return "\n".join("".join(row) for row in rows)


# Four cells per hallway: the one-cell hallway of paper-40x40 and three more beside it.
_WIDE_EXTRA = (
    *((r, 19) for r in (8, 10, 11)),  # north, around (9, 19)
    *((r, 19) for r in (28, 29, 31)),  # south, around (30, 19)
    *((19, c) for c in (8, 10, 11)),  # west, around (19, 9)
    *((21, c) for c in (28, 30, 31)),  # east, around (21, 29)
)

_SUTTON_13X13 = """\
#############
#.....#.....#
#.....#.....#
#...........#
#.....#.....#
#.....#.....#
##.####.....#
#.....###.###
#.....#.....#
#.....#.....#
#...........#
#.....#.....#
#############"""

_SMALL_10X15 = """\
.......#.......
.......#.......
...............
.......#.......
###.####.......
.......####.###
.......#.......
...............
.......#.......
.......#......."""


@dataclasses.dataclass(frozen=True)
class Layout:
    """A named four-rooms map.

    Attributes:
      name: the spec name (``family.params.layout``).
      tag: short size tag used in task ids, e.g. ``"40x40"``.
      text: the map, ``#`` wall and ``.`` free, one line per row.
      hallways: ``(name, (row, col))`` pairs, one per inner wall segment, in :data:`HALLWAYS` order
        (for a hallway wider than one cell, its middle cell: the ``<name>-hallway`` region).
      hallway_extra: the other cells of hallways wider than one cell (they join two rooms too, so
        they belong to no room).
    """

    name: str
    tag: str
    text: str
    hallways: tuple[tuple[str, tuple[int, int]], ...]
    hallway_extra: tuple[tuple[int, int], ...] = ()

    @functools.cached_property
    def walls(self) -> np.ndarray:
        """Bool [rows, cols], True on walls (read-only)."""
        return parse(self.text)

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, cols) of the map."""
        rows, cols = self.walls.shape
        return rows, cols

    @functools.cached_property
    def rooms(self) -> dict[str, np.ndarray]:
        """Room name -> int [n, 2] cells, row-major; hallways belong to no room."""
        return _rooms(self.walls, [cell for _, cell in self.hallways] + list(self.hallway_extra))


LAYOUTS: dict[str, Layout] = {
    layout.name: layout
    for layout in (
        Layout(
            "paper-40x40",
            "40x40",
            _PAPER_40X40,
            (("north", (9, 19)), ("east", (21, 29)), ("south", (30, 19)), ("west", (19, 9))),
        ),
        Layout(
            "paper-40x40-wide",
            "40x40-wide",
            _widen_hallways(_PAPER_40X40, _WIDE_EXTRA),
            (("north", (9, 19)), ("east", (21, 29)), ("south", (30, 19)), ("west", (19, 9))),
            _WIDE_EXTRA,
        ),
        Layout(
            "sutton-13x13",
            "13x13",
            _SUTTON_13X13,
            (("north", (3, 6)), ("east", (7, 9)), ("south", (10, 6)), ("west", (6, 2))),
        ),
        Layout(
            "10x15",
            "10x15",
            _SMALL_10X15,
            (("north", (2, 7)), ("east", (5, 11)), ("south", (7, 7)), ("west", (4, 3))),
        ),
    )
}


def get(name: str) -> Layout:
    """The layout called ``name``; raises ``KeyError`` listing the known names."""
    try:
        return LAYOUTS[name]
    except KeyError:
        raise KeyError(f"unknown layout {name!r} (known: {', '.join(LAYOUTS)})") from None


def parse(text: str) -> np.ndarray:
    """A text map -> bool [rows, cols] wall array (read-only).

    Raises:
      ValueError: ragged rows, an empty map, or a character other than ``#`` and ``.``.
    """
    lines = text.strip("\n").split("\n")
    if not lines or not lines[0]:
        raise ValueError("empty layout map")
    if len({len(line) for line in lines}) != 1:
        raise ValueError(f"layout rows differ in length: {sorted({len(x) for x in lines})}")
    bad = set("".join(lines)) - {"#", "."}
    if bad:
        raise ValueError(f"layout map may hold only '#' (wall) and '.' (free), got {sorted(bad)}")
    walls = np.array([[ch == "#" for ch in line] for line in lines], dtype=bool)
    walls.flags.writeable = False
    return walls


def region_cells(layout: Layout, region: str) -> np.ndarray:
    """Int [n, 2] cells of a region: ``"anywhere"``, a room name, or ``"<hallway>-hallway"``."""
    if region == "anywhere":
        return np.argwhere(~layout.walls)
    if region in layout.rooms:
        return layout.rooms[region]
    hallways = dict(layout.hallways)
    name = region.removesuffix("-hallway")
    if region.endswith("-hallway") and name in hallways:
        return np.array([hallways[name]])
    raise ValueError(
        f"unknown region {region!r} (expected 'anywhere', a room {ROOMS} or a hallway "
        f"{tuple(h + '-hallway' for h in HALLWAYS)})"
    )


def _rooms(walls: np.ndarray, hallways: list[tuple[int, int]]) -> dict[str, np.ndarray]:
    """Connected free regions once hallways are blocked, named by their centre's quadrant."""
    blocked = walls.copy()
    for cell in hallways:
        blocked[cell] = True
    label = np.full(walls.shape, -1)
    components: list[np.ndarray] = []
    for seed in map(tuple, np.argwhere(~blocked)):
        if label[seed] >= 0:
            continue
        label[seed], frontier, members = len(components), [seed], [seed]
        while frontier:  # flood fill; runs once per layout (cached), so plain Python is fine
            r, c = frontier.pop()
            for nr, nc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
                inside = 0 <= nr < walls.shape[0] and 0 <= nc < walls.shape[1]
                if inside and not blocked[nr, nc] and label[nr, nc] < 0:
                    label[nr, nc] = len(components)
                    frontier.append((nr, nc))
                    members.append((nr, nc))
        components.append(np.array(sorted(members)))
    centre = (np.array(walls.shape) - 1) / 2
    rooms = {}
    for cells in components:
        r, c = cells.mean(axis=0) - centre
        rooms[f"{'north' if r < 0 else 'south'}-{'west' if c < 0 else 'east'}"] = cells
    if sorted(rooms) != sorted(ROOMS) or len(components) != 4:
        raise ValueError(f"a four-rooms layout needs one room per quadrant, got {len(components)}")
    return {name: rooms[name] for name in ROOMS}


def doorways(walls: np.ndarray) -> np.ndarray:
    """Bool [rows, cols]: the free cells that are gaps in an inner wall line (doorway cells).

    A free cell is a doorway cell when, along one axis, the run of free cells through it is closed
    at both ends by a wall cell *inside* the map that the wall continues beyond (the next cell
    further along is a wall too). That is a gap in a straight wall of thickness >= 1, however wide
    the gap: ``sutton-13x13``'s one-cell hallways and ``paper-40x40-wide``'s four-cell ones alike.
    A room's run ends at the map edge or at a wall the room's far side leaves through (a wall one
    cell thick with free cells behind it), so no room cell qualifies; nor does a cell beside the
    drawn outer wall (beyond it is the edge, not more wall).
    """
    walls = np.asarray(walls, dtype=bool)
    found = np.zeros(walls.shape, dtype=bool)
    for axis_walls, axis_found in ((walls, found), (walls.T, found.T)):
        for line, marks in zip(axis_walls.T, axis_found.T, strict=True):  # one column at a time
            free = np.flatnonzero(~line)
            if free.size == 0:
                continue
            runs = np.split(free, np.flatnonzero(np.diff(free) > 1) + 1)
            for run in runs:
                before, after = run[0] - 1, run[-1] + 1
                closed = before - 1 >= 0 and after + 1 < line.size
                if closed and line[before - 1] and line[after + 1]:
                    marks[run] = True
    return found


@dataclasses.dataclass(frozen=True, eq=False)
class FloorPlan:
    """Rooms and the hallways between them, derived from a wall grid (see :func:`floor_plan`).

    Attributes:
      rooms: int [n, 2] cells of each room (row-major), rooms ordered by their first cell.
      hallways: int [n, 2] cells of each hallway (a connected group of doorway cells), ordered by
        their first cell.
      joins: per hallway, the indices of the rooms it touches (sorted).
    """

    rooms: tuple[np.ndarray, ...]
    hallways: tuple[np.ndarray, ...]
    joins: tuple[tuple[int, ...], ...]

    def room_hallways(self, room: int) -> tuple[int, ...]:
        """The hallways that touch room ``room``."""
        return tuple(h for h, rooms in enumerate(self.joins) if room in rooms)


def floor_plan(walls: np.ndarray) -> FloorPlan:
    """The rooms and hallways of a wall grid.

    Rooms are the free cells connected once doorway cells (:func:`doorways`) are blocked;
    hallways are connected groups of doorway cells, each with the rooms it touches.

    Raises:
      ValueError: the map has no doorway, or a hallway that does not join two rooms.
    """
    walls = np.asarray(walls, dtype=bool)
    door = doorways(walls)
    room_of = _components(~walls & ~door)
    hall_of = _components(door)
    rooms = tuple(np.argwhere(room_of == i) for i in range(room_of.max() + 1))
    hallways = tuple(np.argwhere(hall_of == i) for i in range(hall_of.max() + 1))
    if not hallways:
        raise ValueError("layout has no hallway (no gap in an inner wall line)")
    joins = []
    for cells in hallways:
        touched = set()
        for r, c in cells:
            for nr, nc in _neighbours(r, c, walls.shape):
                if room_of[nr, nc] >= 0:
                    touched.add(int(room_of[nr, nc]))
        if len(touched) < 2:
            raise ValueError(
                f"layout hallway at {tuple(int(x) for x in cells[0])} joins "
                f"{len(touched)} room(s), expected at least 2"
            )
        joins.append(tuple(sorted(touched)))
    return FloorPlan(rooms, hallways, tuple(joins))


def _neighbours(r: int, c: int, shape: tuple[int, ...]) -> list[tuple[int, int]]:
    return [
        (nr, nc)
        for nr, nc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1))
        if 0 <= nr < shape[0] and 0 <= nc < shape[1]
    ]


def _components(mask: np.ndarray) -> np.ndarray:
    """Int [rows, cols]: the 4-connected component of each True cell (row-major order), else -1."""
    label = np.full(mask.shape, -1)
    count = 0
    for seed in map(tuple, np.argwhere(mask)):
        if label[seed] >= 0:
            continue
        label[seed], frontier = count, [seed]
        while frontier:  # flood fill; runs once per layout, so plain Python is fine
            r, c = frontier.pop()
            for nr, nc in _neighbours(r, c, mask.shape):
                if mask[nr, nc] and label[nr, nc] < 0:
                    label[nr, nc] = count
                    frontier.append((nr, nc))
        count += 1
    return label
