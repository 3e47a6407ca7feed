"""Where the baselines' training loops are one XLA cluster: on feature inputs, never on frames.

XLA on the CPU made LOVE on MinAtar-shaped frames 33x slower than TensorFlow's own kernels
(``baselines/xla.py``), so LOVE, CompILE and ALLO (Laplacian options) compile with XLA only what
it speeds up. These tests pin which path each takes; the speed itself is a benchmark
(``benchmarks/bench_frames_xla.py``), not an assertion here.
"""

from __future__ import annotations

import dataclasses

import pytest

import baselines.compile.model as compile_model
import baselines.love.model as love_model
from baselines.compile import Compile, CompileParams
from baselines.laplacian_options import LaplacianOptions, LaplacianOptionsParams
from baselines.love import Love, LoveParams
from baselines.xla import xla_pays
from opt_suite.testing import image_method_setting
from opt_suite.testing.method_checks import context_for, tiny_setting


def test_xla_pays_on_features_not_on_frames():
    assert xla_pays(frames=False)
    assert not xla_pays(frames=True)


def _fit_calls(monkeypatch, module) -> list[bool]:
    """Record the ``jit_compile`` of every ``fit`` the module makes (the fit still runs)."""
    calls: list[bool] = []
    real = module.fit

    def recording(*args, **kwargs):
        calls.append(kwargs["jit_compile"])
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "fit", recording)
    return calls


@pytest.mark.parametrize(
    ("method", "params", "frames", "module"),
    [
        (Love, LoveParams(iterations=3), {}, love_model),
        # the image setting's demonstrations are one action long: one segment each
        (Compile, CompileParams(iterations=3), {"num_segments": 1}, compile_model),
    ],
    ids=["love", "compile"],
)
def test_segmenting_baselines_fit_states_with_xla_and_frames_without(
    monkeypatch, method, params, frames, module
):
    calls = _fit_calls(monkeypatch, module)
    method(params).discover(context_for(tiny_setting(), 0, 0))
    on_frames = dataclasses.replace(params, features="frames", **frames)
    method(on_frames).discover(context_for(image_method_setting(), 0, 0))
    assert calls == [True, False]


def test_allo_compiles_its_steps_with_xla_only_off_frames(monkeypatch):
    import tensorflow as tf

    seen: list[bool] = []
    real = tf.function

    def recording(*args, **kwargs):
        seen.append(kwargs.get("jit_compile"))
        return real(*args, **kwargs)

    monkeypatch.setattr(tf, "function", recording)
    params = LaplacianOptionsParams(count=1, walk_frames=200, steps=4, fqi_iterations=1)
    LaplacianOptions(params).discover(context_for(image_method_setting(), 0, 400))
    assert False in seen and True not in seen  # the frames' ALLO loop: a TensorFlow graph
