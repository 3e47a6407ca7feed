"""Where every random draw of a run comes from: one ``SeedSequence`` per (seed index, purpose).

Each purpose gets its own stream through a fixed *spawn key* (numpy's mechanism for independent
child streams), built from constants and names — never from the order in which cells are planned or
scheduled — so results are the same whatever the worker count, backend or subset of seeds run:

- demonstrations of seed i: ``SeedSequence([tasks.seed, i], spawn_key=(DEMOS,))``;
- discovery by method entry ``name``: ``spawn_key=(DISCOVERY, stable_hash(name))``;
- the test-time learner on test task t: ``spawn_key=(EVALUATION, t)`` — the *same* for every method,
  so methods are compared on common random numbers (same learner seed on the same task and seed);
- the reference returns (random policy, expert) on test task t: ``spawn_key=(REFERENCE, t)``.
- the zero-shot episodes on test task t (the learner's untrained policy): ``spawn_key=(ZERO_SHOT,
  t)``, a stream of their own, so measuring them never moves a learning curve;
- the test tasks of seed i when they are drawn per seed (``tasks.test_per_seed``):
  ``spawn_key=(TEST_TASKS,)``; shared test tasks come from ``tasks.seed`` alone.
"""

from __future__ import annotations

import hashlib

import numpy as np

__all__ = [
    "DEMOS",
    "DISCOVERY",
    "EVALUATION",
    "REFERENCE",
    "ZERO_SHOT",
    "TEST_TASKS",
    "zero_shot_seed",
    "stable_hash",
    "demonstrations_seed",
    "discovery_seed",
    "evaluation_seed",
    "reference_seed",
    "task_draw_seed",
]

# Purpose codes (first element of every spawn key). Never renumber: stored results depend on them.
DEMOS = 1
DISCOVERY = 2
EVALUATION = 3
REFERENCE = 4
ZERO_SHOT = 5
TEST_TASKS = 6


def stable_hash(name: str) -> int:
    """A 32-bit integer from ``name`` that is the same in every process (unlike ``hash``)."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "little")


def _root(task_seed: int, seed_index: int, spawn_key: tuple[int, ...]) -> np.random.SeedSequence:
    return np.random.SeedSequence([task_seed, seed_index], spawn_key=spawn_key)


def demonstrations_seed(task_seed: int, seed_index: int) -> np.random.SeedSequence:
    """The seed of the expert training and demonstration sampling of seed ``seed_index``."""
    return _root(task_seed, seed_index, (DEMOS,))


def discovery_seed(task_seed: int, seed_index: int, entry_name: str) -> np.random.SeedSequence:
    """The seed given to method entry ``entry_name``'s option discovery on seed ``seed_index``."""
    return _root(task_seed, seed_index, (DISCOVERY, stable_hash(entry_name)))


def evaluation_seed(task_seed: int, seed_index: int, task_index: int) -> np.random.SeedSequence:
    """The test-time learner's seed on test task ``task_index`` (shared by every method)."""
    return _root(task_seed, seed_index, (EVALUATION, task_index))


def reference_seed(task_seed: int, seed_index: int, task_index: int) -> np.random.SeedSequence:
    """The seed of the reference returns (random policy, expert) on test task ``task_index``."""
    return _root(task_seed, seed_index, (REFERENCE, task_index))


def zero_shot_seed(task_seed: int, seed_index: int, task_index: int) -> np.random.SeedSequence:
    """The seed of the zero-shot episodes on test task ``task_index`` (shared by every method)."""
    return _root(task_seed, seed_index, (ZERO_SHOT, task_index))


def task_draw_seed(task_seed: int, seed_index: int) -> np.random.SeedSequence:
    """The seed of seed ``seed_index``'s own test tasks (``tasks.test_per_seed``)."""
    return _root(task_seed, seed_index, (TEST_TASKS,))
