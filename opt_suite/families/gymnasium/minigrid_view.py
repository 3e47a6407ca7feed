"""MiniGrid's egocentric view (its observation's ``image``) computed without building grids.

Why: MiniGrid makes every observation (``MiniGridEnv.gen_obs``) by building a 7x7 ``Grid`` of
the cells in front of the agent (``Grid.slice``: a new ``Wall`` object per cell outside the
world), rotating it ``agent_dir + 1`` times (``Grid.rotate_left``: a new grid and 49 asserted
``get``/``set`` calls each), walking it for occlusion (``Grid.process_vis``) and encoding it
(``Grid.encode``) — about 100 us a step, 57% of a ``minigrid-doorkey`` evaluation cell's CPU
(a 20,000-frame PPO run: 2.1 of 3.6 CPU-s; ``benchmarks/bench_tf_agents_run.py``).

:func:`fast_gen_obs` computes the same observation from the same objects: where each view cell
comes from is a fixed table per (view size, direction) — the composition of ``slice`` and the
rotations, derived from MiniGrid's own index arithmetic (:func:`_view_sources`) — so a step reads
49 cells of the world's list once, runs ``process_vis``'s occlusion loop on flat lists, and
encodes the visible cells with each object's own ``encode``. Every object method MiniGrid calls
(``see_behind``, ``encode``) is still called on the same objects, and the view's extents come
from the env's own ``get_view_exts``; only the grid building is skipped.

:func:`install_fast_view` puts it on an env only where it is MiniGrid's computation: the env is a
``MiniGridEnv`` whose class keeps MiniGrid's ``gen_obs`` and ``gen_obs_grid``, with MiniGrid
3.2 (the version the equality test ran against: ``minigrid==3.2.*`` in pyproject.toml), and a
step whose world is not exactly MiniGrid's ``Grid`` falls back to MiniGrid's own ``gen_obs``.
``tests/test_minigrid_view.py`` compares both on thousands of random states of several envs, bit
for bit.
"""

from __future__ import annotations

import functools
import sys
import types
from typing import Any

import numpy as np

__all__ = ["fast_gen_obs", "install_fast_view"]

#: The MiniGrid versions whose ``gen_obs`` :func:`fast_gen_obs` was proven equal to.
PROVEN_VERSIONS = ("3.2.",)


def install_fast_view(env: Any) -> bool:
    """Make ``env.unwrapped`` compute its observations with :func:`fast_gen_obs`; True if done.

    Nothing is changed (False) unless the env is a MiniGrid env whose observation is MiniGrid's
    own (see the module docstring); MiniGrid is never imported here (an env of it already has).
    """
    minigrid = sys.modules.get("minigrid")
    module = sys.modules.get("minigrid.minigrid_env")
    if minigrid is None or module is None:
        return False
    if not str(getattr(minigrid, "__version__", "")).startswith(PROVEN_VERSIONS):
        return False
    inner = env.unwrapped
    base = module.MiniGridEnv
    if not isinstance(inner, base) or any(
        getattr(type(inner), name) is not getattr(base, name)
        for name in ("gen_obs", "gen_obs_grid")
    ):
        return False
    # An instance attribute: MiniGridEnv.step and reset call self.gen_obs(); the class is untouched.
    inner.gen_obs = types.MethodType(fast_gen_obs, inner)
    return True


def fast_gen_obs(env: Any) -> dict[str, Any]:
    """``MiniGridEnv.gen_obs`` of ``env``, the same dict with the same ``image``, faster."""
    grid_class, outside, empty = _minigrid()
    grid = env.grid
    if type(grid) is not grid_class:  # a world of another class may slice or encode its own way
        return type(env).gen_obs(env)
    size = env.agent_view_size or 0
    top_x, top_y, _, _ = env.get_view_exts()
    cells = grid.grid
    # The view's cells in process_vis's frame, flat as [j * size + i] (column i, row j).
    view = [
        cells[k] if k >= 0 else outside
        for k in _world_indices(size, env.agent_dir, grid.width, grid.height, top_x, top_y)
    ]
    visible = [True] * (size * size) if env.see_through_walls else _visible(view, size)
    # gen_obs_grid puts what the agent carries (or nothing) where the agent stands, after the
    # occlusion walk (which saw the world's cell there).
    view[(size - 1) * size + size // 2] = env.carrying if env.carrying else None
    codes: list[int] = []
    for k in _transposed(size):  # Grid.encode's order
        cell = view[k]
        codes.extend((empty if cell is None else cell.encode()) if visible[k] else _UNSEEN)
    # A writable uint8 array of the codes, as Grid.encode's (bytearray: one C call, not 49).
    image = np.frombuffer(bytearray(codes), dtype=np.uint8).reshape(size, size, 3)
    return {"image": image, "direction": env.agent_dir, "mission": env.mission}


def _visible(view: list[Any], size: int) -> list[bool]:
    """``Grid.process_vis``'s mask, flat as ``view``: its loop, line for line, on flat lists."""
    # MiniGrid's test: a cell hides what is behind it when it is truthy and cannot be seen behind.
    clear = [not (cell and not cell.see_behind()) for cell in view]
    mask = [False] * (size * size)
    mask[(size - 1) * size + size // 2] = True
    for j in reversed(range(size)):
        row, above = j * size, (j - 1) * size
        for i in range(size - 1):
            if not mask[row + i] or not clear[row + i]:
                continue
            mask[row + i + 1] = True
            if j > 0:
                mask[above + i + 1] = True
                mask[above + i] = True
        for i in reversed(range(1, size)):
            if not mask[row + i] or not clear[row + i]:
                continue
            mask[row + i - 1] = True
            if j > 0:
                mask[above + i - 1] = True
                mask[above + i] = True
    return mask


#: Grid.encode's code of a cell the agent cannot see (its array's zeros).
_UNSEEN = (0, 0, 0)


@functools.lru_cache(maxsize=4096)
def _world_indices(
    size: int, direction: int, width: int, height: int, top_x: int, top_y: int
) -> tuple[int, ...]:
    """Per view cell (flat ``[j * size + i]``), its index in the world's cell list, -1 outside.

    ``Grid.slice`` reads world cell (top_x + dx, top_y + dy) at ``grid.grid[y * width + x]``.
    """
    indices = []
    for dx, dy in _view_sources(size, direction):
        x, y = top_x + dx, top_y + dy
        indices.append(y * width + x if 0 <= x < width and 0 <= y < height else -1)
    return tuple(indices)


@functools.cache
def _view_sources(size: int, direction: int) -> tuple[tuple[int, int], ...]:
    """Per view cell (flat ``[j * size + i]``), its cell in ``Grid.slice``'s grid (dx, dy).

    ``gen_obs_grid`` rotates the slice left ``direction + 1`` times, and ``rotate_left`` moves
    cell (i, j) to (j, size - 1 - i): the sources are found by applying that map.
    """
    sources: dict[tuple[int, int], tuple[int, int]] = {}
    for i0 in range(size):
        for j0 in range(size):
            i, j = i0, j0
            for _ in range(direction + 1):
                i, j = j, size - 1 - i
            sources[i, j] = (i0, j0)
    return tuple(sources[i, j] for j in range(size) for i in range(size))


@functools.cache
def _transposed(size: int) -> tuple[int, ...]:
    """Flat view indices in ``Grid.encode``'s array order, ``[i, j]`` (column-major here)."""
    return tuple(j * size + i for i in range(size) for j in range(size))


@functools.cache
def _minigrid() -> tuple[Any, Any, tuple[int, int, int]]:
    """(MiniGrid's ``Grid``, what ``Grid.slice`` puts outside the world, an empty cell's code).

    ``slice`` makes a new ``Wall`` per outside cell; one serves: nothing here changes it.
    """
    from minigrid.core.constants import OBJECT_TO_IDX
    from minigrid.core.grid import Grid
    from minigrid.core.world_object import Wall

    return Grid, Wall(), (OBJECT_TO_IDX["empty"], 0, 0)
