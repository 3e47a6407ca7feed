"""Discovery cost of the field's methods on four rooms, as a ratio to offline_options' (same spec).

Setting: ``fourrooms-field`` (= ``fourrooms-quick``'s tasks): Sutton's 13x13 layout, slip 0.1,
4 train tasks with one optimal demonstration each; each method with the params the spec gives it.
Each method's ``discover`` is timed once after a warm-up call (TensorFlow traces its graphs once per
process; XLA compiles once per input shapes); ``extra_info`` records ``ratio_to_offline_options``
(wall time over offline_options' measured in the same process), ``first_call_s`` (the warm-up:
trace and compile included, what one cell of a run pays), the env frames the discovery stepped (its
counted cost) and, for the methods that declare them, ``seconds_per_step`` (warm time over
``Method.discovery_steps``). Issue 38's targets are asserted as ratios in the same run: LOVE at its
defaults (the README's 20,000 full-batch steps) at most 10x offline_options, CompILE and Laplacian
options at most 2x (``TARGETS``).

    pytest benchmarks/bench_field.py --benchmark-only

Measured figures: docs/performance.md (not copied here).
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from baselines.compile import Compile, CompileParams
from baselines.covering_options import CoveringOptions, CoveringOptionsParams
from baselines.laplacian_options import LaplacianOptions, LaplacianOptionsParams
from baselines.love import Love, LoveParams
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
    "love": (Love, LoveParams()),
    "compile": (Compile, CompileParams()),
}

#: Issue 38's targets: warm discovery time at most this many times offline_options'.
TARGETS = {"love": 10.0, "compile": 2.0, "laplacian-options": 2.0}
#: Asserted floors where the issue's target is not met yet: the target is recorded beside the
#: measured ratio (``extra_info``), the floor keeps the measured gain from sliding back. None
#: since Laplacian options on index observations train compiled by numba (``table_network.py``):
#: 0.8x and 1.1x offline_options' discovery measured (load 12-13 on 2 cores), from 2.5x-6.3x with
#: ALLO in XLA and fitted Q-iteration as a TensorFlow graph, 8.6x before that.
NOT_MET_YET: dict[str, float] = {}


@pytest.mark.parametrize("name", list(METHODS))
def test_bench_field_discovery_against_offline_options(benchmark, setting, offline_seconds, name):
    cls, params = METHODS[name]
    method = cls(params)
    started = time.perf_counter()
    method.discover(_context(setting))  # warm-up (TensorFlow's traces, XLA's compiles)
    first_call = time.perf_counter() - started
    found = benchmark.pedantic(
        method.discover, setup=lambda: ((_context(setting),), {}), rounds=1, iterations=1
    )
    seconds = benchmark.stats.stats.mean
    ratio = seconds / offline_seconds
    steps = cls.discovery_steps(params)
    benchmark.extra_info.update(
        offline_options_seconds=round(offline_seconds, 3),
        ratio_to_offline_options=round(ratio, 3),
        first_call_s=round(first_call, 3),
        env_frames=int(found.info.get("env_frames", 0)),
        options=len(found.options),
    )
    if steps is not None:
        benchmark.extra_info.update(
            discovery_steps=steps.steps, seconds_per_step=round(seconds / steps.steps, 6)
        )
    assert 1 <= len(found.options) <= cls.option_count(params)
    if name in TARGETS:
        benchmark.extra_info["target_ratio"] = TARGETS[name]
        bound = NOT_MET_YET.get(name, TARGETS[name])
        benchmark.extra_info["target_met"] = ratio <= TARGETS[name]
        assert ratio <= bound, f"{name}: {ratio:.2f}x offline_options' discovery"
