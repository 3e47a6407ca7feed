"""LOVE's fit on MinAtar-shaped frames: a TensorFlow graph (what it runs) against an XLA cluster.

Setting: 12 synthetic demonstrations shaped like ``minatar-breakout``'s (lengths 3-62 actions,
10x10x4 uint8 frames, 3 actions) and LOVE's frame networks, :data:`STEPS` full-batch Adam steps.
Each path is timed warm (after a first call that traces and compiles it). ``extra_info`` records
``xla_over_graph``: XLA's warm seconds over the graph's, measured in the same process. The
target (``baselines/xla.py``): on frames the graph is at least :data:`TARGET` times faster, so a
baseline that compiled its conv training with XLA again would fail here.

    pytest benchmarks/bench_frames_xla.py --benchmark-only

Measured figures: docs/performance.md (not copied here).
"""

from __future__ import annotations

import time

import numpy as np
import pytest

STEPS = 20
TARGET = 5.0


@pytest.fixture(scope="module")
def inputs():
    from opt_suite._tf import tensorflow

    tensorflow()
    from baselines.segmentation import SegmentInputs
    from opt_suite.methods.offline_options.demos import frame_demo_batch
    from opt_suite.option_networks.conv import FrameFeatures
    from opt_suite.trajectory import Trajectory

    rng = np.random.default_rng(0)
    lengths = [60, 55, 58, 62, 5, 12, 3, 17, 9, 14, 6, 11]
    demos = [
        Trajectory(
            f"t{i % 3}",
            rng.integers(0, 2, size=(n + 1, 10, 10, 4), dtype=np.uint8),
            rng.integers(0, 3, size=n),
            np.zeros(n),
        )
        for i, n in enumerate(lengths)
    ]
    batch, frames = frame_demo_batch(demos, 3)
    return SegmentInputs(batch, FrameFeatures.of(frames), 3, True, 0)


def _train(inputs, jit_compile: bool, seed: int) -> None:
    from baselines import skill_networks
    from baselines.love import LoveParams
    from baselines.love import model as love_model

    # train_love passes its own jit_compile (baselines.xla.xla_pays): this one overrides it
    real = love_model.fit
    love_model.fit = lambda *a, **k: skill_networks.fit(*a, **{**k, "jit_compile": jit_compile})
    try:
        params = LoveParams(features="frames", iterations=STEPS)
        love_model.train_love(inputs, params, np.random.SeedSequence(seed))
    finally:
        love_model.fit = real


def test_bench_love_on_frames_graph_against_xla(benchmark, inputs):
    _train(inputs, False, 0)  # warm-up: the graph's trace
    _train(inputs, True, 0)  # warm-up: XLA's compile
    started = time.perf_counter()
    _train(inputs, True, 1)
    xla = time.perf_counter() - started
    benchmark.pedantic(_train, args=(inputs, False, 1), rounds=1, iterations=1)
    graph = benchmark.stats.stats.mean
    ratio = xla / graph
    benchmark.extra_info.update(
        steps=STEPS,
        graph_s=round(graph, 3),
        xla_s=round(xla, 3),
        xla_over_graph=round(ratio, 2),
        target=TARGET,
    )
    assert ratio >= TARGET, f"XLA {xla:.1f} s against the graph's {graph:.1f} s"
