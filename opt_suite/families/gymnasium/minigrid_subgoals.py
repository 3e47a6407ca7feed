"""A MiniGrid env whose task is a sequence of sub-goals: the sub-goal family of issue 35.

``OptSuite/MiniGrid-Subgoals-v0`` (registered when this module is imported; the gymnasium family
imports it for an id with that prefix, :data:`~opt_suite.families.gymnasium.ids.PROVIDERS`). Every
episode lays out DoorKey's two rooms: a wall splits the grid at a random column (the west room at
least two cells wide), with one locked yellow door at a random row; the agent and the key start
in the west room. The task's ``subgoals`` (a kwarg, so the gymnasium family draws it per task)
names what must be done, from

- ``key``: pick the key up;
- ``door``: open the door (the key opens it and is used up, so the agent's hands are free again);
- ``ball``: pick the ball up (it is collected: it leaves the grid, the hands stay free);
- ``goal``: stand on the goal cell.

written in order with ``-``: ``key-door-goal`` is DoorKey, ``key-door`` is Unlock, ``ball`` is a
one-room pick-up. The ball and the goal are placed where their position in the sequence puts
them: after ``door``, in the east room; before it, in the west room. The episode succeeds once
every listed sub-goal is reached; each of the n sub-goals pays ``(1 - 0.9 * steps / max_steps) /
n`` (MiniGrid's reward, shared out) when it is reached (``reward_each: false``: all of it at the
end). The goal, if listed, comes last, and stepping on it before the rest does nothing. The rest
of the order is what the layout forces: nothing behind the door before it is open, and each
object in its room.

``layout`` (an integer) fixes the walls, the door and the objects of a task at every reset, so a
task is one grid and only the agent's start varies (its west-room cell and heading); unset, every
reset draws a new layout, as DoorKey does.

**Observations.** The whole grid, not MiniGrid's egocentric view: ``image`` is ``Grid.encode()``
([x, y] -> (object, colour, state)) with the agent's cell written (``agent``, ``key`` if it
carries the key else 0, heading), every number times ``CODE_SCALE`` (20): the networks read uint8
frames at 1/255, and MiniGrid's codes (0-10) would reach them as 0-0.04. A 7x7 grid's is 7x7x3,
the shape of the usual view, so the conv options and the learner read it as they read DoorKey's.
Whole and Markov, it lets a scripted option plan from one observation
(:mod:`opt_suite.options.subgoals`, the family's reference options).
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from minigrid.core.constants import OBJECT_TO_IDX
from minigrid.core.grid import Grid
from minigrid.core.mission import MissionSpace
from minigrid.core.world_object import Ball, Door, Goal, Key
from minigrid.minigrid_env import MiniGridEnv

from opt_suite.options.subgoal_grid import CODE_SCALE, SUBGOALS
from opt_suite.options.subgoals import SubgoalOptions

__all__ = ["ENV_ID", "SubgoalsEnv", "parse_subgoals"]

ENV_ID = "OptSuite/MiniGrid-Subgoals-v0"


def parse_subgoals(text: str) -> tuple[str, ...]:
    """``"key-door-goal"`` -> ``("key", "door", "goal")``: each once, ``door`` after ``key``.

    Raises:
      ValueError: an unknown or repeated sub-goal, a door without the key before it, a goal
        that is not last, or none.
    """
    parts = tuple(str(text).split("-"))
    unknown = [p for p in parts if p not in SUBGOALS]
    if not text or unknown:
        raise ValueError(
            f"subgoals {text!r}: expected sub-goals from {list(SUBGOALS)} joined by '-', "
            f"e.g. 'key-door-goal'"
        )
    if len(set(parts)) != len(parts):
        raise ValueError(f"subgoals {text!r}: each sub-goal at most once")
    if "door" in parts and ("key" not in parts or parts.index("key") > parts.index("door")):
        raise ValueError(f"subgoals {text!r}: 'door' needs 'key' before it (the door is locked)")
    if "goal" in parts and parts[-1] != "goal":
        raise ValueError(f"subgoals {text!r}: 'goal' ends the episode, so it comes last")
    return parts


class SubgoalsEnv(MiniGridEnv):
    """Two rooms, a locked door, a key, maybe a ball and a goal; see the module docstring.

    Args:
      subgoals: the task's sub-goals joined by ``-`` (:func:`parse_subgoals`).
      size: the grid's side, walls included (odd: the observation is ``size x size x 3``).
      max_steps: MiniGrid's step cap (its reward shrinks with the steps taken).
      reward_each: each sub-goal pays its share (1/n) of MiniGrid's reward when reached; False:
        all of it once the last is reached.
      layout: a seed that fixes the walls, the door and the objects at every reset (the agent's
        start still varies); None: a new layout at every reset, as in DoorKey.
    """

    def __init__(
        self,
        subgoals: str = "key-door-goal",
        size: int = 7,
        max_steps: int = 200,
        reward_each: bool = True,
        layout: int | None = None,
        **kwargs: Any,
    ) -> None:
        self.subgoals = parse_subgoals(subgoals)
        if layout is not None and (isinstance(layout, bool) or not isinstance(layout, int)):
            raise ValueError(f"layout: expected an integer seed or null, got {layout!r}")
        self.layout = layout
        self.reward_each = bool(reward_each)
        if size < 7 or size % 2 == 0:
            raise ValueError(f"size: expected an odd side of at least 7, got {size}")
        self._reached: set[str] = set()
        self._split = 0  # the dividing wall's column, drawn with the layout
        super().__init__(
            mission_space=MissionSpace(mission_func=lambda: "reach the sub-goals"),
            grid_size=size,
            max_steps=max_steps,
            agent_view_size=size,
            see_through_walls=True,
            **kwargs,
        )

    def _gen_grid(self, width: int, height: int) -> None:
        # A fixed layout draws the walls and objects from its own generator, the same at every
        # reset; the agent's start is always drawn from the reset's.
        episode_rng = self._np_random
        if self.layout is not None:
            self._np_random = np.random.default_rng(self.layout)
        try:
            self._gen_layout(width, height)
        finally:
            self._np_random = episode_rng
        self.place_agent(top=(0, 0), size=(self._split, height))
        self._reached = set()
        self.mission = "reach the sub-goals"

    def _gen_layout(self, width: int, height: int) -> None:
        """The walls, the locked door, the key and the listed ball and goal."""
        self.grid = Grid(width, height)
        self.grid.wall_rect(0, 0, width, height)
        # The west room is at least two cells wide: a one-cell-wide room can be cut in two by the
        # key, with the agent on one side and what it must reach on the other.
        split = self._split = self._rand_int(3, width - 2)
        self.grid.vert_wall(split, 0)
        self.put_obj(Door("yellow", is_locked=True), split, self._rand_int(1, height - 1))
        west = {"top": (0, 0), "size": (split, height)}
        east = {"top": (split + 1, 0), "size": (width - split - 1, height)}
        self.place_obj(Key("yellow"), **west)
        behind_door = (
            self.subgoals[self.subgoals.index("door") + 1 :] if "door" in self.subgoals else ()
        )
        for name, obj in (("ball", Ball("blue")), ("goal", Goal())):
            if name in self.subgoals:
                self.place_obj(obj, **(east if name in behind_door else west))

    def gen_obs(self) -> dict[str, Any]:
        """The whole encoded grid with the agent's cell written in (see the module docstring)."""
        image = self.grid.encode()
        x, y = self.agent_pos
        carries = self.carrying is not None and self.carrying.type == "key"
        image[x, y] = (
            OBJECT_TO_IDX["agent"],
            OBJECT_TO_IDX["key"] if carries else 0,
            self.agent_dir,
        )
        image *= CODE_SCALE  # read by the networks at 1/255: see CODE_SCALE
        return {"image": image, "direction": self.agent_dir, "mission": self.mission}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """MiniGrid's step, with a collected ball, a used-up key and success on every sub-goal."""
        before = len(self._reached)
        front = self.grid.get(*self.front_pos)
        if action == self.actions.pickup and front is not None and front.type == "ball":
            # Collected, not carried: the hands stay free for the key (MiniGrid carries one thing).
            x, y = self.front_pos
            self.grid.set(int(x), int(y), None)
            self._reached.add("ball")
            action = self.actions.done
        unlocking = isinstance(front, Door) and front.is_locked
        _, _, _, truncated, info = super().step(action)
        if self.carrying is not None and self.carrying.type == "key":
            self._reached.add("key")
        if isinstance(front, Door) and front.is_open:
            if unlocking:
                self.carrying = None  # the key is used up in the lock
            self._reached.add("door")
        # The goal is the last sub-goal: standing on it counts once the others are reached.
        cell = self.grid.get(*self.agent_pos)
        on_goal = cell is not None and cell.type == "goal" and "goal" in self.subgoals
        if on_goal and self._reached >= set(self.subgoals[:-1]):
            self._reached.add("goal")
        done = self._reached >= set(self.subgoals)
        if self.reward_each:
            # Each sub-goal pays its share of MiniGrid's reward when it is reached: a sparse
            # reward only at the end of a 3-4 sub-goal task is not learned in a small PPO budget.
            reward = self._reward() * (len(self._reached) - before) / len(self.subgoals)
        else:
            reward = self._reward() if done else 0.0
        return self.gen_obs(), reward, done, truncated and not done, info

    def reference_options(self) -> SubgoalOptions:
        """The scripted sub-goal options (the same for every task: they ignore the order)."""
        assert isinstance(self.action_space, gymnasium.spaces.Discrete)  # MiniGrid's 7 actions
        return SubgoalOptions(int(self.action_space.n))


if ENV_ID not in gymnasium.registry:
    gymnasium.register(ENV_ID, entry_point=SubgoalsEnv)
