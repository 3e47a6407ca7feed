"""Splitting a run's cells across independent jobs (``opt-suite run --shard i/N``) by seed.

A shard is a set of whole seeds: shard ``i`` of ``N`` (1-based, as Slurm's ``--array=1-N``
counts) takes every ``N``-th of the run's seed indices in ascending order, starting at the
``i``-th. Partitioning by seed is the one split that needs no coordination: every cell of seed
``s`` (its demonstrations, each method's discovery, every evaluation) depends only on cells of
seed ``s`` (runner/plan.py), so each shard computes exactly the cells an unsharded run would for
its seeds, from the same seed streams, and no cell is computed twice. The cost is balance: a
shard is at least one seed, so ``N`` is at most the number of seeds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

__all__ = ["Shard", "parse_shard", "shard_seeds"]


@dataclasses.dataclass(frozen=True)
class Shard:
    """Shard ``index`` (1-based) of ``count``."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> Shard:
    """``"2/4"`` -> ``Shard(2, 4)``.

    Raises:
      ValueError: a message naming the bad value and what is expected.
    """
    index, slash, count = text.strip().partition("/")
    try:
        shard = Shard(int(index), int(count))
    except ValueError:
        shard = None
    if not slash or shard is None:
        raise ValueError(f"--shard: {text!r} is not i/N (expected e.g. '1/4': shard 1 of 4)")
    if shard.count < 1 or not 1 <= shard.index <= shard.count:
        raise ValueError(
            f"--shard: {text!r}: shards are numbered 1 to N with N >= 1 (e.g. '1/4' to '4/4'; "
            "with Slurm: --array=1-N and --shard $SLURM_ARRAY_TASK_ID/N)"
        )
    return shard


def shard_seeds(seeds: Sequence[int], shard: Shard) -> list[int]:
    """The seed indices of ``shard`` among ``seeds`` (every N-th, from the i-th, ascending).

    Raises:
      ValueError: the run has fewer seeds than shards, so this shard would run nothing.
    """
    ordered = sorted(set(seeds))
    if shard.count > len(ordered):
        raise ValueError(
            f"--shard {shard}: the run has {len(ordered)} seed(s) and shards split seeds, so "
            f"at most {len(ordered)} shard(s) get work; use N <= {len(ordered)}"
        )
    return ordered[shard.index - 1 :: shard.count]
