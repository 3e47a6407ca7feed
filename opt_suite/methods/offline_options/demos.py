"""Demonstrations as padded index arrays, the input layout of the objective.

Ĵ (Eq. 2) averages over a set of demonstrated trajectories of different lengths; the objective
(``opt_suite.objective``) takes them padded to a common length with their true lengths alongside.
The networks only ever need to be evaluated on the states the demonstrations visit, so we keep those
once (``states``) and refer to them by position.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from opt_suite.trajectory import Trajectory

__all__ = ["DemoBatch", "demo_batch", "frame_demo_batch", "vector_demo_batch"]


@dataclasses.dataclass(frozen=True, eq=False)
class DemoBatch:
    """B demonstrations padded to the longest one, T actions.

    Attributes:
      states: int32 [U], the distinct states the demonstrations visit (sorted).
      positions: int32 [B, T+1], ``states[positions[b, t]]`` is s_t of demonstration b (padding: 0).
      actions: int32 [B, T], a_t of demonstration b (padding: 0).
      lengths: int32 [B], |h| of each demonstration (its number of actions).
    """

    states: np.ndarray
    positions: np.ndarray
    actions: np.ndarray
    lengths: np.ndarray

    @property
    def observations(self) -> np.ndarray:
        """int32 [B, T+1] state indices s_t (padding repeats ``states[0]``)."""
        return self.states[self.positions]


def demo_batch(
    demonstrations: Sequence[Trajectory], num_states: int, num_actions: int
) -> DemoBatch:
    """Pad tabular demonstrations; raises ValueError naming a bad trajectory.

    Args:
      demonstrations: trajectories whose observations are int state indices [T+1].
      num_states: S, to check the indices.
      num_actions: A, to check the actions.
    """
    if not demonstrations:
        raise ValueError("offline_options needs at least one demonstration, got none")
    for i, h in enumerate(demonstrations):
        obs, act = np.asarray(h.observations), np.asarray(h.actions)
        where = f"demonstration {i} ({h.task_id})"
        if obs.ndim != 1 or not np.issubdtype(obs.dtype, np.integer):
            raise ValueError(
                f"{where}: expected integer state indices [T+1] (a tabular family), "
                f"got {obs.dtype} array of shape {obs.shape}"
            )
        _check_actions(where, obs, act, num_actions)
        if obs.min() < 0 or obs.max() >= num_states:
            raise ValueError(f"{where}: state index out of range [0, {num_states})")
    states = np.unique(np.concatenate([np.asarray(h.observations) for h in demonstrations]))
    lengths = np.array([len(h) for h in demonstrations], dtype=np.int32)
    horizon = int(lengths.max())
    positions = np.zeros((len(demonstrations), horizon + 1), dtype=np.int32)
    actions = np.zeros((len(demonstrations), horizon), dtype=np.int32)
    for b, h in enumerate(demonstrations):
        positions[b, : len(h) + 1] = np.searchsorted(states, np.asarray(h.observations))
        actions[b, : len(h)] = np.asarray(h.actions)
    return DemoBatch(states.astype(np.int32), positions, actions, lengths)


def frame_demo_batch(
    demonstrations: Sequence[Trajectory], num_actions: int
) -> tuple[DemoBatch, np.ndarray]:
    """Number every frame of every demonstration: (padded batch of frame numbers, frames [U, ...]).

    Every observation is its own state (two frames of Atari are rarely equal, and deduplicating
    would cost a hash of every frame for little). The frames are concatenated once; the batch's
    ``states`` are 0..U-1 and ``positions[b, t]`` is the number of demonstration b's t-th frame.

    Raises:
      ValueError: no demonstrations, or one that is not uint8 frames [T+1, H, W, C] with T >= 1
        actions in range, or frames of different shapes.
    """
    return _numbered_batch(demonstrations, num_actions, "frames")


def vector_demo_batch(
    demonstrations: Sequence[Trajectory], num_actions: int
) -> tuple[DemoBatch, np.ndarray]:
    """As :func:`frame_demo_batch`, for vector observations [T+1, d]: (batch, float32 [U, d]).

    Every observation is its own state (a continuous vector rarely repeats).

    Raises:
      ValueError: no demonstrations, or one that is not finite real vectors [T+1, d] with T >= 1
        actions in range, or vectors of different widths.
    """
    return _numbered_batch(demonstrations, num_actions, "vectors")


def _numbered_batch(
    demonstrations: Sequence[Trajectory], num_actions: int, kind: str
) -> tuple[DemoBatch, np.ndarray]:
    """Every observation of every demonstration numbered once (``kind``: frames or vectors)."""
    if not demonstrations:
        raise ValueError("offline_options needs at least one demonstration, got none")
    shape = None
    for i, h in enumerate(demonstrations):
        obs, act = np.asarray(h.observations), np.asarray(h.actions)
        where = f"demonstration {i} ({h.task_id})"
        if kind == "frames" and (obs.ndim != 4 or obs.dtype != np.uint8):
            raise ValueError(
                f"{where}: expected uint8 frames [T+1, H, W, C] (features: frames), got "
                f"{obs.dtype} array of shape {obs.shape}"
            )
        if kind == "vectors" and (
            obs.ndim != 2 or not np.issubdtype(obs.dtype, np.number) or not np.isfinite(obs).all()
        ):
            raise ValueError(
                f"{where}: expected finite real vectors [T+1, d] (vector observations), got "
                f"{obs.dtype} array of shape {obs.shape}"
            )
        if shape is not None and obs.shape[1:] != shape:
            raise ValueError(f"{where}: {kind} of shape {obs.shape[1:]}, the first had {shape}")
        shape = obs.shape[1:]
        _check_actions(where, obs, act, num_actions)
    observations = np.concatenate([np.asarray(h.observations) for h in demonstrations])
    if kind == "vectors":
        observations = observations.astype(np.float32)
    lengths = np.array([len(h) for h in demonstrations], dtype=np.int32)
    horizon = int(lengths.max())
    positions = np.zeros((len(demonstrations), horizon + 1), dtype=np.int32)
    actions = np.zeros((len(demonstrations), horizon), dtype=np.int32)
    offset = 0
    for b, h in enumerate(demonstrations):
        positions[b, : len(h) + 1] = offset + np.arange(len(h) + 1)
        positions[b, len(h) + 1 :] = offset + len(h)  # padding: a valid state, ignored by Ĵ
        actions[b, : len(h)] = np.asarray(h.actions)
        offset += len(h) + 1
    states = np.arange(len(observations), dtype=np.int32)
    return DemoBatch(states, positions, actions, lengths), observations


def _check_actions(where: str, obs: np.ndarray, act: np.ndarray, num_actions: int) -> None:
    """T >= 1 actions in [0, num_actions) and T+1 observations, else a ValueError at ``where``."""
    if len(act) < 1 or obs.shape[0] != len(act) + 1:
        raise ValueError(
            f"{where}: expected T >= 1 actions and T+1 observations, got {len(act)} and "
            f"{obs.shape[0]}"
        )
    if act.min() < 0 or act.max() >= num_actions:
        raise ValueError(f"{where}: action out of range [0, {num_actions})")
