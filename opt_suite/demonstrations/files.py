"""Demonstrations on disk: one ``.npz`` of concatenated trajectories (the runner's cell file)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from opt_suite.demonstrations.base import DemonstrationError
from opt_suite.files_guard import InputError, regular_file
from opt_suite.trajectory import Trajectory

__all__ = ["MAX_BYTES", "save_demonstrations", "load_demonstrations"]

# Atari demonstrations are compressed 84x84 frames: ~1 kB a step, a few MB per seed at the paper's
# scale. Far above that is a mistake or an attack, not demonstrations.
MAX_BYTES = 4 << 30


def save_demonstrations(path: str | Path, trajectories: Sequence[Trajectory]) -> None:
    """Write trajectories to one ``.npz`` (concatenated arrays plus lengths and task ids).

    Reset seeds, when any trajectory has one, go in ``reset_seeds`` (-1: unknown); files of
    trajectories without them are byte-for-byte what they were before reset seeds existed.
    """
    if not trajectories:
        raise ValueError(f"save_demonstrations({str(path)!r}): no trajectories to save")
    lengths = np.array([len(t) for t in trajectories], dtype=np.int64)
    # Any: numpy's stubs check **arrays against savez_compressed's allow_pickle: bool as well.
    extra: dict[str, Any] = {}
    if any(t.reset_seed is not None for t in trajectories):
        seeds = [-1 if t.reset_seed is None else int(t.reset_seed) for t in trajectories]
        extra["reset_seeds"] = np.array(seeds, dtype=np.int64)
    np.savez_compressed(
        path,
        task_ids=np.array([t.task_id for t in trajectories], dtype=str),
        lengths=lengths,
        observations=np.concatenate([t.observations for t in trajectories]),
        actions=np.concatenate([t.actions for t in trajectories]),
        rewards=np.concatenate([t.rewards for t in trajectories]),
        **extra,
    )


def load_demonstrations(path: str | Path) -> list[Trajectory]:
    """Read what :func:`save_demonstrations` wrote.

    Raises:
      DemonstrationError: the file is missing, truncated, or its arrays disagree in length.
    """
    if not Path(path).exists():
        raise DemonstrationError(f"{path}: demonstrations file not found")
    try:
        # A regular file within MAX_BYTES: np.load on a FIFO waits forever, on /dev/zero never ends.
        regular_file(path, "demonstrations file", MAX_BYTES)
    except InputError as exc:
        raise DemonstrationError(str(exc)) from None
    try:
        with open(path, "rb") as file, np.load(file, allow_pickle=False) as data:
            arrays = {key: data[key] for key in data.files}
    except Exception as exc:  # OSError, zipfile.BadZipFile, zlib.error: truncated or not npz
        raise DemonstrationError(f"{path}: not a readable demonstrations file ({exc})") from exc
    keys = {"task_ids", "lengths", "observations", "actions", "rewards"}
    if not keys <= set(arrays):
        missing = ", ".join(sorted(keys - set(arrays)))
        raise DemonstrationError(f"{path}: not a demonstrations file (missing {missing})")
    lengths = arrays["lengths"]
    if (
        len(arrays["task_ids"]) != len(lengths)
        or len(arrays["observations"]) != int(np.sum(lengths + 1))
        or len(arrays["actions"]) != int(np.sum(lengths))
        or len(arrays["rewards"]) != int(np.sum(lengths))
    ):
        raise DemonstrationError(f"{path}: trajectory lengths disagree with the arrays' lengths")
    obs_ends = np.cumsum(lengths + 1)
    act_ends = np.cumsum(lengths)
    observations = np.split(arrays["observations"], obs_ends[:-1])
    actions = np.split(arrays["actions"], act_ends[:-1])
    rewards = np.split(arrays["rewards"], act_ends[:-1])
    task_ids = [str(t) for t in arrays["task_ids"]]
    reset_seeds = arrays.get("reset_seeds")  # absent in files written without reset seeds
    if reset_seeds is not None and len(reset_seeds) != len(lengths):
        raise DemonstrationError(
            f"{path}: {len(reset_seeds)} reset seeds for {len(lengths)} trajectories"
        )
    seeds: list[int | None] = (
        [None] * len(lengths)
        if reset_seeds is None
        else [None if s < 0 else int(s) for s in reset_seeds]
    )
    return [
        Trajectory(*fields)
        for fields in zip(task_ids, observations, actions, rewards, seeds, strict=True)
    ]
