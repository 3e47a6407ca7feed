"""A demonstration trajectory: the type demonstrations, methods, agents and pictures all share.

It lives below all of them (it imports nothing of opt_suite), so that none reaches into another's
layer for it; ``opt_suite.methods.base`` re-exports it for older imports.
"""

from __future__ import annotations

import dataclasses

import numpy as np

__all__ = ["Trajectory"]


@dataclasses.dataclass(frozen=True, eq=False)
class Trajectory:
    """One demonstration: observations s_0..s_T, actions a_0..a_{T-1}, rewards r_1..r_T.

    For tabular families ``observations`` are int state indices [T+1]; for image families they are
    arrays [T+1, ...]. ``len(trajectory)`` is T, the number of actions (|h| in the paper).

    ``reset_seed``, when known, is the seed of the ``env.reset(seed=...)`` the trajectory started
    from: with it, a deterministic env (Atari: sticky actions off) reaches the state of step t by
    replaying ``actions[:t]`` (see :func:`opt_suite.plots.option_strips.replay_demonstration`),
    so pictures can start options from states inside a demonstration.
    """

    task_id: str
    observations: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    reset_seed: int | None = None

    def __len__(self) -> int:
        return int(self.actions.shape[0])
