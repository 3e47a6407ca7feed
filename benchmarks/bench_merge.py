"""Merging shard stores (``opt-suite merge-stores``) is linear in their rows.

Target: the time per episode row of merging two shard stores stays within 1.5x when the stores
grow 16x (4x the cells, each with 4x the episode rows). The stores are written through the store's
own writer (no cell is computed): two shards of one spec, each with ``cells`` evaluation cells of
``episodes`` episode rows. ``extra_info`` records, per size, the rows, the seconds and the
microseconds per row, and ``per_row_ratio`` (large / small).

    pytest benchmarks/bench_merge.py -n 0 --benchmark-only -s
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from opt_suite.store.merge import merge_stores
from opt_suite.store.writer import CellRecord, StoreWriter

SIZES = ((25, 100), (100, 400))  # (cells per shard, episodes per cell): 16x the rows


def _shard(directory: Path, seed: int, cells: int, episodes: int) -> None:
    writer = StoreWriter(directory)
    run = writer.begin_run(
        spec_name="bench-merge",
        spec_hash="0" * 64,
        spec_yaml="name: bench-merge\n",
        provenance={"git_commit": None, "versions": {}, "host": "bench"},
        backend="inline",
        workers=0,
        seeds=[seed],
        argv=["bench"],
    )
    ids = [f"{seed:04d}{i:060d}" for i in range(cells)]
    writer.record_plan(run, [(c, "evaluation", "m", seed, 0) for c in ids], [("test", 0, "t", {})])
    rng = np.random.default_rng(seed)
    ones = np.ones(episodes, dtype=np.int64)
    for cell_id in ids:
        writer.commit_cell(
            CellRecord(
                cell_id=cell_id,
                kind="evaluation",
                method="m",
                seed=seed,
                inputs={"code": {"learner": "bench"}},
                started=0.0,
                finished=0.0,
                wall_s=0.0,
                host="bench",
                episodes=[(0, rng.normal(size=episodes), ones, np.cumsum(ones))],
            )
        )
    writer.finish_run(run, "done", {"total": cells})
    writer.close()


def _merge_seconds(root: Path, cells: int, episodes: int) -> tuple[int, float]:
    shards = [root / f"shard{seed}" for seed in (0, 1)]
    for seed, shard in enumerate(shards):
        _shard(shard, seed, cells, episodes)
    start = time.perf_counter()
    merge_stores(root / "merged", shards, ["bench"])
    return 2 * cells * episodes, time.perf_counter() - start


def test_bench_merge_is_linear_in_rows(benchmark, tmp_path):
    runs = iter(range(10**6))

    def once():
        root = tmp_path / f"round{next(runs)}"
        return [_merge_seconds(root / f"size{i}", *size) for i, size in enumerate(SIZES)]

    measured = benchmark.pedantic(once, rounds=3, iterations=1)
    per_row = [seconds / rows for rows, seconds in measured]
    for (rows, seconds), us in zip(measured, per_row, strict=True):
        benchmark.extra_info[f"rows_{rows}_s"] = round(seconds, 4)
        benchmark.extra_info[f"rows_{rows}_us_per_row"] = round(1e6 * us, 3)
    benchmark.extra_info["per_row_ratio"] = per_row[1] / per_row[0]
    print(f"\nmerge: {measured}, per-row ratio large/small {per_row[1] / per_row[0]:.2f}")
    assert per_row[1] / per_row[0] <= 1.5
