"""Discovery cost of CompILE and LOVE on four rooms, relative to offline_options on the same data.

Setting: ``bench_offline_options.py``'s: ``paper-40x40``, 6 train tasks with one expert
demonstration each (17-43 steps). Every method is timed after a warm-up call (the one trace of its
graphs in a process, as bench_offline_options does); ``extra_info["ratio_to_offline_options"]`` is
the method's warm wall time over offline_options' (default Params) on the same demonstrations.

LOVE's default (the README's 20000 Adam steps) is too long for a benchmark run; it is timed at 200
and 1000 steps, and its default's cost is projected from the per-step slope
(``extra_info["projected_default_s"]``, ``projected_ratio``). CompILE runs its defaults (100 steps).

    pytest benchmarks/bench_segmentation.py --benchmark-only
"""

from __future__ import annotations

import time

import bench_offline_options
import pytest

from baselines.compile import Compile, CompileParams
from baselines.love import Love, LoveParams
from opt_suite.methods.base import DiscoveryContext
from opt_suite.methods.offline_options import OfflineOptions
from opt_suite.methods.offline_options import Params as OfflineParams

#: The same demonstrations as bench_offline_options (its module-scoped fixture).
context = bench_offline_options.context


def _warm_seconds(method, context: DiscoveryContext) -> float:
    method.discover(context)  # warm-up: traces
    start = time.perf_counter()
    method.discover(context)
    return time.perf_counter() - start


@pytest.fixture(scope="module")
def offline_seconds(context) -> float:
    return _warm_seconds(OfflineOptions(OfflineParams()), context)


def test_bench_compile_relative_to_offline_options(benchmark, context, offline_seconds):
    method = Compile(CompileParams())
    method.discover(context)  # warm-up
    found = benchmark.pedantic(method.discover, args=(context,), rounds=2, iterations=1)
    seconds = benchmark.stats.stats.median
    benchmark.extra_info.update(
        offline_options_s=round(offline_seconds, 3),
        ratio_to_offline_options=round(seconds / offline_seconds, 2),
        options_kept=len(found.options),
        adam_steps=CompileParams().iterations,
    )


def test_bench_love_relative_to_offline_options(benchmark, context, offline_seconds):
    short, long = Love(LoveParams(iterations=200)), Love(LoveParams(iterations=1000))
    short_s = _warm_seconds(short, context)
    found = benchmark.pedantic(long.discover, args=(context,), rounds=1, iterations=1)
    long_s = benchmark.stats.stats.median
    per_step = (long_s - short_s) / 800
    projected = long_s + per_step * (LoveParams().iterations - 1000)
    benchmark.extra_info.update(
        offline_options_s=round(offline_seconds, 3),
        ratio_to_offline_options=round(long_s / offline_seconds, 2),
        seconds_per_adam_step=round(per_step, 5),
        projected_default_s=round(projected, 1),
        projected_ratio=round(projected / offline_seconds, 1),
        options_kept=len(found.options),
    )
