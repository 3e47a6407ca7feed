"""Wall time of offline_options' discover() in the paper's four-rooms setting.

Setting: ``paper-40x40``, 6 train tasks with one expert demonstration each (17-43 steps), the
default Params (up to 4 options x 50 epochs x 10 Adam steps). Target: seconds, not minutes — a
discover() call after the first (which traces the training graph once per process, ~3-5 s) takes
~2-4 s on one busy core. ``extra_info`` records the options kept and the gradient steps taken.

    pytest benchmarks/bench_offline_options.py -n 0 --benchmark-only
"""

from __future__ import annotations

import numpy as np
import pytest

from opt_suite.demonstrations import collect_demonstrations
from opt_suite.families.tabular.fourrooms import FourRooms, Params, Variation
from opt_suite.methods.base import DiscoveryContext
from opt_suite.methods.offline_options import OfflineOptions
from opt_suite.methods.offline_options import Params as OfflineParams
from opt_suite.spec.schema import DemonstrationsSpec


@pytest.fixture(scope="module")
def context() -> DiscoveryContext:
    family = FourRooms(Params())
    train, _ = family.make_tasks(Variation(), (), 30, 6, 24, seed=0)
    demos = collect_demonstrations(family, train, DemonstrationsSpec(), np.random.SeedSequence(0))
    return DiscoveryContext(family, train, demos, 0, np.random.SeedSequence(0))


def test_bench_discover_paper_40x40(benchmark, context):
    method = OfflineOptions(OfflineParams())
    method.discover(context)  # warm-up: the one trace of the training graph in this process
    found = benchmark.pedantic(method.discover, args=(context,), rounds=3, iterations=1)
    params = OfflineParams()
    steps = sum(r["epochs"] for r in found.info["rounds"]) * params.steps_per_epoch
    benchmark.extra_info.update(options_kept=len(found.options), gradient_steps=steps)
