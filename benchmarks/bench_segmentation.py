"""Discovery cost of CompILE and LOVE on four rooms, relative to offline_options on the same data.

Setting: ``bench_offline_options.py``'s: ``paper-40x40``, 6 train tasks with one expert
demonstration each (17-43 steps). Every method is timed after a warm-up call (the one trace of its
graphs in a process, as bench_offline_options does); ``extra_info["ratio_to_offline_options"]`` is
the method's warm wall time over offline_options' (default Params) on the same demonstrations.

Both run their defaults: LOVE the README's 20,000 full-batch Adam steps (compiled in XLA chunks
since issue 38; before, 0.08 s a step made it a half-hour projection), CompILE 100 steps.
``extra_info["first_call_s"]`` is the warm-up (trace and XLA compile: what one cell pays).

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
    method = Love(LoveParams())
    started = time.perf_counter()
    method.discover(context)  # warm-up: trace and compile
    first_call = time.perf_counter() - started
    found = benchmark.pedantic(method.discover, args=(context,), rounds=1, iterations=1)
    seconds = benchmark.stats.stats.median
    benchmark.extra_info.update(
        offline_options_s=round(offline_seconds, 3),
        ratio_to_offline_options=round(seconds / offline_seconds, 2),
        first_call_s=round(first_call, 1),
        seconds_per_adam_step=round(seconds / LoveParams().iterations, 6),
        options_kept=len(found.options),
    )
