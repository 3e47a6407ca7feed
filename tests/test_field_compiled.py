"""The field's methods train compiled: same spec and seed => the same numbers, bit for bit, and the
training step is traced once per cell, not per step (issue 38 item 3).

Each discovery is tiny (a few demonstrations, a few steps) but runs the whole compiled path: the
XLA chunks of :func:`baselines.skill_networks.fit` (LOVE, CompILE) and ALLO's XLA loop and fitted
Q-iteration's graph (Laplacian options).
"""

from __future__ import annotations

import numpy as np
import pytest
from skill_toys import segmented_demonstrations

from baselines.compile import Compile, CompileParams
from baselines.laplacian_options import LaplacianOptions, LaplacianOptionsParams
from baselines.love import Love, LoveParams
from opt_suite.methods.base import DiscoveryContext

TINY = {
    "love": (Love, LoveParams(num_skills=3, hidden_sizes=(8,), iterations=7, learning_rate=0.01)),
    "compile": (
        Compile,
        CompileParams(num_segments=2, latent_dim=3, hidden_dim=8, hidden_sizes=(8,), iterations=7),
    ),
    "laplacian_options": (
        LaplacianOptions,
        LaplacianOptionsParams(
            count=2,
            walk_frames=2000,
            steps=30,
            batch_size=64,
            fqi_iterations=3,
            fqi_steps=4,
            hidden_sizes=(16,),
            min_spread=0.001,
        ),
    ),  # fmt: skip
}


def _context() -> DiscoveryContext:
    context, _ = segmented_demonstrations(4, seed=3)
    # The walk of Laplacian options is an interaction budget (the demonstrations' context has 0).
    return DiscoveryContext(
        family=context.family,
        train_tasks=context.train_tasks,
        demonstrations=context.demonstrations,
        interaction_budget=2000,
        seed=np.random.SeedSequence(3),
    )


@pytest.mark.parametrize("name", list(TINY))
def test_same_spec_and_seed_give_the_same_numbers_bit_for_bit(name):
    cls, params = TINY[name]
    first, second = cls(params).discover(_context()), cls(params).discover(_context())
    assert set(first.curves) == set(second.curves) and first.curves
    for key, curve in first.curves.items():
        assert np.all(np.isfinite(curve)), key
        np.testing.assert_array_equal(curve, second.curves[key], err_msg=key)
    states = np.arange(first.options.num_states)
    for a, b in zip(
        first.options.probabilities(states), second.options.probabilities(states), strict=True
    ):
        np.testing.assert_array_equal(a, b)


def test_the_fit_is_traced_once_per_cell_not_per_step(monkeypatch):
    """Three chunks of steps, then a second cell of the same shapes: one trace in all."""
    import tensorflow as tf

    import baselines.skill_networks as skill_networks

    def loss_parts(weights, batch, noise):
        w = weights["g"]["w"]
        return {"loss": tf.reduce_sum(tf.square(w - batch["target"])) * noise}

    monkeypatch.setattr(skill_networks, "CHUNK", 2)
    start = {"g": {"w": np.zeros(3, np.float32)}}
    batch = {"target": tf.constant([1.0, -1.0, 2.0])}
    one = lambda _: np.float32(1.0)  # noqa: E731
    weights, curves = skill_networks.fit(
        "t", start, loss_parts, ("loss",), batch, 5, 0.1, step_noise=one
    )
    again, curves_again = skill_networks.fit(
        "t", start, loss_parts, ("loss",), batch, 5, 0.1, step_noise=one
    )
    compiled = skill_networks._compiled_chunk(loss_parts, ("loss",), False, True)
    assert compiled.experimental_get_tracing_count() == 1
    assert curves["loss"].shape == (5,) and np.all(np.diff(curves["loss"]) < 0)
    np.testing.assert_array_equal(weights["g"]["w"], again["g"]["w"])
    np.testing.assert_array_equal(curves["loss"], curves_again["loss"])
