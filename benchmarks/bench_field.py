"""Discovery cost of the field's methods on four rooms, as a ratio to offline_options' (same spec).

Setting: ``fourrooms-field`` (= ``fourrooms-quick``'s tasks): Sutton's 13x13 layout, slip 0.1,
4 train tasks with one optimal demonstration each; each method with the params the spec gives it.
Each method's ``discover`` is timed once after a warm-up call (TensorFlow traces its graphs once per
process); ``extra_info`` records ``ratio_to_offline_options`` (wall time over offline_options'
measured in the same process) and the env frames the discovery stepped (its counted cost).

    pytest benchmarks/bench_field.py --benchmark-only

Measured (2026-11-27, 2 shared cores, load ~5-7; docs/performance.md): offline_options 2.8 s;
covering options on the exact model 0.04 s (ratio 0.015), on a 20 000-step random walk 0.38 s
(0.135, 20 000 env frames); Laplacian options with their defaults (20 000-step walk, 10 000 ALLO
steps of 512) 24.1 s (8.6, 20 000 env frames): above offline_options' cost, stated there.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from baselines.covering_options import CoveringOptions, CoveringOptionsParams
from baselines.laplacian_options import LaplacianOptions, LaplacianOptionsParams
from opt_suite.demonstrations import collect_demonstrations
from opt_suite.families.tabular.fourrooms import FourRooms
from opt_suite.methods.base import DiscoveryContext
from opt_suite.methods.offline_options import OfflineOptions
from opt_suite.methods.offline_options import Params as OfflineParams
from opt_suite.spec.schema import DemonstrationsSpec

BUDGET = 50000  # fourrooms-quick's evaluation.interaction_budget


@pytest.fixture(scope="module")
def setting():
    family = FourRooms(FourRooms.Params(layout="sutton-13x13", slip=0.1, max_episode_steps=500))
    variation = FourRooms.Variation(start_region="anywhere", goal_region="anywhere")
    train, _ = family.make_tasks(variation, (), 10, 4, 6, seed=0)
    demos = collect_demonstrations(family, train, DemonstrationsSpec(), np.random.SeedSequence(0))
    return family, tuple(train), tuple(demos)


def _context(setting) -> DiscoveryContext:
    family, train, demos = setting
    return DiscoveryContext(family, train, demos, BUDGET, np.random.SeedSequence(0))


@pytest.fixture(scope="module")
def offline_seconds(setting) -> float:
    method = OfflineOptions(OfflineParams())
    method.discover(_context(setting))  # warm-up: the one trace of its training graph
    started = time.perf_counter()
    method.discover(_context(setting))
    return time.perf_counter() - started


METHODS = {
    "covering-options": (CoveringOptions, CoveringOptionsParams(count=4)),
    "covering-options-walk": (
        CoveringOptions,
        CoveringOptionsParams(count=4, graph="random_walk", walk_frames=20000),
    ),
    "laplacian-options": (LaplacianOptions, LaplacianOptionsParams(count=4, walk_frames=20000)),
}


@pytest.mark.parametrize("name", list(METHODS))
def test_bench_field_discovery_against_offline_options(benchmark, setting, offline_seconds, name):
    cls, params = METHODS[name]
    method = cls(params)
    method.discover(_context(setting))  # warm-up (TensorFlow's traces)
    found = benchmark.pedantic(
        method.discover, setup=lambda: ((_context(setting),), {}), rounds=1, iterations=1
    )
    seconds = benchmark.stats.stats.mean
    benchmark.extra_info.update(
        offline_options_seconds=round(offline_seconds, 3),
        ratio_to_offline_options=round(seconds / offline_seconds, 3),
        env_frames=int(found.info.get("env_frames", 0)),
        options=len(found.options),
    )
    assert len(found.options) == params.count
