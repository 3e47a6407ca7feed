"""MiniGrid's view without grids (``minigrid_view``) is MiniGrid's ``gen_obs``, bit for bit."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from minigrid.core.grid import Grid
from minigrid.core.world_object import Ball, Key
from minigrid.minigrid_env import MiniGridEnv

from opt_suite.families.gymnasium.env import GymnasiumTaskEnv, make_inner
from opt_suite.families.gymnasium.minigrid_view import fast_gen_obs, install_fast_view

# Walls, doors (locked, closed, open), keys, balls, boxes, lava, goals, worlds smaller and larger
# than the view, and views that see through walls (the last three).
ENVS = [
    "MiniGrid-DoorKey-6x6-v0",
    "MiniGrid-UnlockPickup-v0",
    "MiniGrid-ObstructedMaze-1Dlhb-v0",
    "MiniGrid-LavaCrossingS9N1-v0",
    "MiniGrid-FourRooms-v0",
    "MiniGrid-Empty-Random-6x6-v0",
    "MiniGrid-Dynamic-Obstacles-6x6-v0",
    "MiniGrid-Fetch-5x5-N2-v0",
]
STATES = 400  # per env, each seen in 4 directions, carrying nothing and a key: 3,200 views


def _same(found: dict, expected: dict) -> bool:
    image, reference = found["image"], expected["image"]
    return (
        image.dtype == reference.dtype
        and image.shape == reference.shape
        and image.flags.writeable
        and np.array_equal(image, reference)
        and found["direction"] == expected["direction"]
        and found["mission"] == expected["mission"]
    )


@pytest.mark.parametrize("env_id", ENVS)
def test_fast_view_is_minigrids_on_random_states(env_id):
    """Random walks (seeded), every state in all 4 headings, empty-handed and with a key."""
    make_inner(env_id, {}, 10_000)  # registers MiniGrid's ids
    env = gymnasium.make(env_id, disable_env_checker=True).unwrapped
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    compared, differing, kinds = 0, 0, set()
    for _ in range(STATES):
        heading, held = env.agent_dir, env.carrying
        for direction in range(4):
            for carried in (held, Key("red") if held is None else None):
                env.agent_dir, env.carrying = direction, carried
                expected = MiniGridEnv.gen_obs(env)
                differing += not _same(fast_gen_obs(env), expected)
                compared += 1
                kinds.update(np.unique(expected["image"][..., 0]).tolist())
        env.agent_dir, env.carrying = heading, held
        _, _, terminated, truncated, _ = env.step(int(rng.integers(env.action_space.n)))
        if terminated or truncated:
            env.reset(seed=int(rng.integers(2**31)))
    assert differing == 0, f"{env_id}: {differing} of {compared} views differ from MiniGrid's"
    seen = {1, 2} if env.see_through_walls else {0, 1, 2}
    assert seen.issubset(kinds), f"{env_id}: the walk saw only cells of kinds {sorted(kinds)}"


def test_task_env_observes_as_minigrid():
    """A task env gets the fast view, and observes exactly what it observes without it."""
    fast = GymnasiumTaskEnv("MiniGrid-DoorKey-6x6-v0", start_actions=3, max_episode_frames=360)
    slow = GymnasiumTaskEnv("MiniGrid-DoorKey-6x6-v0", start_actions=3, max_episode_frames=360)
    assert "gen_obs" in vars(fast.inner), "the task env did not install the fast view"
    del slow.inner.gen_obs  # MiniGrid's own again
    rng = np.random.default_rng(1)
    observations = 0
    for episode in range(6):
        a, _ = fast.reset(seed=episode)
        b, _ = slow.reset(seed=episode)
        done = False
        while not done:
            assert np.array_equal(a, b) and a.dtype == b.dtype
            observations += 1
            action = int(rng.integers(fast.action_space.n))
            a, ra, ta, ua, _ = fast.step(action)
            b, rb, tb, ub, _ = slow.step(action)
            assert (ra, ta, ua) == (rb, tb, ub)
            done = ta or ua
    assert observations > 1000


def test_installed_only_where_it_is_minigrids():
    """Not on other envs, nor on a MiniGrid class with its own gen_obs; another world falls back."""
    assert not install_fast_view(gymnasium.make("CartPole-v1"))

    class OwnView(type(gymnasium.make("MiniGrid-Empty-5x5-v0").unwrapped)):
        def gen_obs(self):
            return super().gen_obs()

    own = OwnView()
    assert not install_fast_view(own)
    assert "gen_obs" not in vars(own)

    class ShiftedGrid(Grid):  # a world of another class: MiniGrid's own gen_obs, whatever it does
        def slice(self, topX, topY, width, height):  # noqa: N803 (MiniGrid's names)
            return super().slice(topX + 1, topY, width, height)

    env = gymnasium.make("MiniGrid-Empty-5x5-v0").unwrapped
    assert install_fast_view(env)
    env.reset(seed=0)
    env.carrying = Ball("blue")
    plain = env.gen_obs()["image"]
    env.grid.__class__ = ShiftedGrid
    assert _same(env.gen_obs(), MiniGridEnv.gen_obs(env))
    assert not np.array_equal(env.gen_obs()["image"], plain)  # ShiftedGrid's slice ran
