"""Scripted sub-goal options: each plans the shortest route to its own sub-goal from where it is.

The sub-goal MiniGrid family's reference options (its positive control, issue 35): "pick up the
key", "open the door", "pick up the ball", "reach the goal". An option's policy must act on the
observation alone (:class:`~opt_suite.options.base.OptionSet`), and this family's observation is
the whole encoded grid, agent and carried key included (:mod:`opt_suite.options.subgoal_grid`), so
each option is a shortest-path planner over one observation: it takes the first action of its
route and terminates (beta = 1) where its sub-goal is reached or cannot be reached (then its
action is MiniGrid's no-op ``done``); its initiation set is where it would not terminate. None
depends on the task's order of sub-goals: the learner chooses which to run when.

Planning is a breadth-first search over (cell, heading) per observation: results are cached per
observation's bytes, since a learner sees the same few hundred grids again and again.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from opt_suite.options.base import OptionSet, PathOrFile
from opt_suite.options.subgoal_grid import DONE, SUBGOALS, subgoal_plan

__all__ = ["SubgoalOptions"]

#: Distinct observations whose plans are kept (a 7x7 grid has a few thousand reachable ones).
_CACHE = 1 << 16


@functools.lru_cache(maxsize=_CACHE)
def _act(frame: bytes, shape: tuple[int, ...], num_actions: int) -> tuple[np.ndarray, np.ndarray]:
    """(mu [m, A], beta [m]) of every sub-goal option on one observation (its bytes)."""
    grid = np.frombuffer(frame, np.uint8).reshape(shape)
    mu = np.zeros((len(SUBGOALS), num_actions))
    beta = np.zeros(len(SUBGOALS))
    for o, subgoal in enumerate(SUBGOALS):
        actions, done = subgoal_plan(grid, subgoal)
        if done is False:
            mu[o, actions[0]] = 1.0
        else:  # reached or unreachable: stop, after a step that changes nothing
            mu[o, DONE] = 1.0
            beta[o] = 1.0
    return mu, beta


class SubgoalOptions(OptionSet):
    """The four scripted sub-goal options over MiniGrid's actions (see the module docstring).

    Args:
      num_actions: A, MiniGrid's 7 actions.
    """

    kind = "minigrid_subgoals"

    def __init__(self, num_actions: int = 7) -> None:
        if num_actions <= DONE:
            raise ValueError(f"SubgoalOptions: expected MiniGrid's 7 actions, got {num_actions}")
        self._num_actions = int(num_actions)

    @property
    def names(self) -> tuple[str, ...]:
        """``key``, ``door``, ``ball``, ``goal``: each option's sub-goal."""
        return SUBGOALS

    @property
    def num_actions(self) -> int:
        """A."""
        return self._num_actions

    def probabilities(self, observations: Any) -> tuple[np.ndarray, np.ndarray]:
        """Each option's one-hot next action and 0/1 termination on every observation."""
        frames = np.asarray(observations)
        if frames.ndim != 4 or frames.shape[-1] != 3:
            raise ValueError(
                f"SubgoalOptions: expected encoded grids [n, width, height, 3], got {frames.shape}"
            )
        frames = frames.astype(np.uint8, copy=False)
        shape = tuple(int(d) for d in frames.shape[1:])
        acted = [_act(frame.tobytes(), shape, self._num_actions) for frame in frames]
        mu = np.stack([a[0] for a in acted]) if acted else np.zeros((0, 4, self._num_actions))
        beta = np.stack([a[1] for a in acted]) if acted else np.zeros((0, 4))
        return mu, beta

    @property
    def has_initiation(self) -> bool:
        """Yes: an option may start only where its sub-goal can be planned (not reached yet)."""
        return True

    def initiation(self, observations: Any) -> np.ndarray:
        """Bool [n, m]: the options whose sub-goal is in reach and not yet reached.

        Starting one elsewhere would only spend a step on ``done`` and stop (the learner would
        pay for a call that does nothing), so the learner is not offered it there.
        """
        _, beta = self.probabilities(observations)
        return beta == 0

    def non_finite(self) -> str | None:
        """Never: the options are fixed plans."""
        return None

    def save(self, path: PathOrFile) -> None:
        """Only A: the plans are code."""
        self._savez(path, num_actions=np.array(self._num_actions))

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> SubgoalOptions:
        """Rebuild from the arrays of a file written by :meth:`save`."""
        return cls(int(arrays["num_actions"]))
