"""Laplacian options: the ALLO objective by hand, bounds, errors, the eigenfunctions' fidelity."""

from __future__ import annotations

import gymnasium
import numba
import numpy as np
import pytest
from baseline_models import WalkFamily, room, tasks_of

from baselines.laplacian_options import LaplacianOptions, LaplacianOptionsParams
from baselines.laplacian_options.allo import allo_loss
from opt_suite.methods.base import DiscoveryContext
from opt_suite.testing import MethodContract
from opt_suite.testing.method import context_for, tiny_setting

TINY = LaplacianOptionsParams(
    count=2,
    walk_frames=1500,
    steps=40,
    batch_size=32,
    hidden_sizes=(16,),
    fqi_iterations=2,
    fqi_steps=5,
    min_spread=0.01,
)


class TestLaplacianOptionsContract(MethodContract):
    method_class = LaplacianOptions
    params = TINY


class TestLaplacianOptionsImageContract(MethodContract):
    method_class = LaplacianOptions
    params = TINY

    def setting(self):
        from opt_suite.testing.image_family import image_method_setting

        return image_method_setting()


def test_allo_loss_by_hand():
    from opt_suite._tf import tensorflow

    tf = tensorflow()
    # d = 2, two transitions: u(s) - u(s') = (1, 0) and (0, 2): graph norms mean = (0.5, 2.0).
    u_t = tf.constant([[1.0, 0.0], [0.0, 2.0]])
    u_tp1 = tf.constant([[0.0, 0.0], [0.0, 0.0]])
    # Batch a: rows (1, 1), (1, -1): inner = [[1, 0], [0, 1]] -> errors 0.
    u_a = tf.constant([[1.0, 1.0], [1.0, -1.0]])
    # Batch b: rows (2, 0), (0, 0): inner = [[2, 0], [0, 0]] -> lower errors [[1, 0], [0, -1]].
    u_b = tf.constant([[2.0, 0.0], [0.0, 0.0]])
    duals = tf.constant([[1.0, 5.0], [2.0, 3.0]])  # the upper 5 is never used
    loss, graph, errors, quadratic = allo_loss(u_t, u_tp1, u_a, u_b, duals, tf.constant(4.0))
    np.testing.assert_allclose(graph, [0.5, 2.0])
    np.testing.assert_allclose(errors, [[0.5, 0.0], [0.0, -0.5]])
    np.testing.assert_allclose(quadratic, 0.0)  # batch a's errors are 0
    # 2.5 (graph) + 1 * 0.5 + 3 * -0.5 (duals) + 4 * 0 (barrier) = 1.5
    np.testing.assert_allclose(float(loss), 1.5)


def test_compiled_allo_step_has_tensorflows_loss_and_gradient():
    """On index observations ALLO steps in numba: its loss and gradient are the graph's."""
    from baselines.laplacian_options.allo import allo_table_step
    from baselines.laplacian_options.networks import batch_outputs, state_network
    from baselines.laplacian_options.table_network import backward, forward, layout_of
    from opt_suite._tf import tensorflow

    tf = tensorflow()
    S, d = 12, 3
    network = state_network(gymnasium.spaces.Discrete(S), d, (8, 6), 5, "u")
    rng = np.random.default_rng(0)
    here, there, batch_a, batch_b = (rng.integers(0, S - 2, 20) for _ in range(4))
    duals, barrier = np.tril(rng.normal(size=(d, d))), 1.7
    with tf.GradientTape() as tape:  # the graph path: rows gathered from the network on 0..S-3
        outputs = batch_outputs(
            network,
            [(tf.constant(x, tf.int32), tf.range(20)) for x in (here, there, batch_a, batch_b)],
            tf.range(S - 2),
        )
        loss, graph, errors, quadratic = allo_loss(
            *outputs, tf.constant(duals, tf.float32), tf.constant(barrier)
        )
    expected = tape.gradient(loss, network.trainable_variables)
    layout, flat = layout_of(network)
    u, hidden = forward(flat, layout.starts, layout.widths, S - 2)
    found = allo_table_step(u, here, there, batch_a, batch_b, duals, barrier)
    np.testing.assert_allclose(found[0], float(loss), rtol=1e-6)
    for value, want in zip(found[1:4], (graph, errors, quadratic), strict=True):
        np.testing.assert_allclose(value, want.numpy(), atol=1e-6)
    grad = np.zeros_like(flat)
    # From Python the layers come back as a list; numba takes one only typed (a reflected list is
    # deprecated, and the first compile warns). Inside the compiled loops they never leave numba.
    hidden = numba.typed.List(hidden)
    backward(flat, layout.starts, layout.widths, hidden, found[4], grad)
    for value, want in zip(layout.unflatten(grad), expected, strict=True):
        want = tf.convert_to_tensor(want).numpy()  # the embedding's comes as IndexedSlices
        assert np.abs(want).max() > 0.01  # every weight gets a gradient to compare
        np.testing.assert_allclose(value, want, atol=1e-6)


def test_compiled_fitted_q_iteration_follows_the_graph_path(monkeypatch):
    """The same minibatches, targets and Adam: the numba sweeps end where the graph's do."""
    from baselines.laplacian_options import fqi
    from baselines.laplacian_options.networks import state_network

    S, A, heads, n = 15, 4, 2, 300
    rng = np.random.default_rng(1)
    here, taken = rng.integers(0, S, n), rng.integers(0, A, n)
    there = (here + taken) % S
    reward = rng.normal(size=(n, heads)).astype(np.float32)
    params = LaplacianOptionsParams(
        batch_size=64, fqi_iterations=3, fqi_steps=4, hidden_sizes=(16, 8)
    )
    found = {}
    for path in ("numba", "graph"):
        if path == "graph":
            monkeypatch.setattr(fqi, "is_table_network", lambda network: False)
        network = state_network(gymnasium.spaces.Discrete(S), heads * A, (16, 8), 3, "q")
        start = fqi.values(network, np.arange(S))
        losses = fqi.fitted_q_iteration(
            network, here, taken, there, reward, params, np.random.default_rng(5)
        )
        found[path] = (losses, fqi.values(network, np.arange(S)))
    np.testing.assert_allclose(found["numba"][0], found["graph"][0], rtol=1e-5)
    np.testing.assert_allclose(found["numba"][1], found["graph"][1], atol=1e-5)
    assert np.abs(found["graph"][1] - start).max() > 0.01  # the fit moved Q: the check can fail


def test_walk_past_the_budget_is_refused_before_anything_is_built():
    params = LaplacianOptionsParams(walk_frames=5000)
    with pytest.raises(ValueError, match="walk_frames = 5000 is above evaluation.interaction"):
        LaplacianOptions(params).discover(context_for(tiny_setting(), 0, 3000))


def test_bounds_are_declared_and_networks_are_sized_before_building():
    problems = LaplacianOptions.check_family(
        LaplacianOptionsParams(hidden_sizes=(4096, 4096, 4096, 4096)),
        _BigImages(),
    )
    assert problems and problems[0][0] == "hidden_sizes" and "parameters" in problems[0][1]
    assert LaplacianOptionsParams(hidden_sizes=(8,) * 9).check()[0][0] == "hidden_sizes"


class _BigImages:
    name = "big-images"
    observation_space = gymnasium.spaces.Box(0, 255, (210, 160, 3), np.uint8)


def test_collapsed_eigenfunction_is_an_error_not_an_option():
    # One gradient step: the fresh network's outputs barely vary over the states.
    params = LaplacianOptionsParams(
        count=2, walk_frames=500, steps=1, batch_size=16, hidden_sizes=(4,), min_spread=0.9
    )
    with pytest.raises(ValueError, match=r"eigenfunction\(s\) \[.*\] collapsed to a constant"):
        LaplacianOptions(params).discover(context_for(tiny_setting(), 0, 500))


def _exact_laplacian(model):
    """Eigenpairs of I - P, P the uniform-random policy's transition matrix (symmetric here)."""
    import scipy.linalg

    S, A = model.num_states, model.num_actions
    P = np.zeros((S, S))
    for a in range(A):
        np.add.at(P, (np.arange(S)[:, None], model.next_state[:, a]), model.prob[:, a] / A)
    return scipy.linalg.eigh(np.eye(S) - P)


def test_fidelity_learned_eigenfunctions_match_the_exact_laplacian_and_options_climb_them():
    """Gomez et al. (2024): ALLO recovers the Laplacian's eigenvectors themselves.

    A 5 x 7 open room (35 states, no goal), a 20 000-step uniform random walk, d = 4. Measured
    (this seed): |cos| with the exact eigenvectors of I - P (within each eigenvalue's eigenspace)
    0.999, 0.996, 0.978, 0.924 for u_0..u_3; estimated eigenvalues 0.0485, 0.094, 0.146 against
    0.0495, 0.0955, 0.145. The options, followed greedily on the model from every state, stop at
    the arg-max of u_1 and of u_2 from every start, and at one of u_3's two high corners (its
    arg-max, or state 1, whose value is above 91% of the states'); asserted: above 85%. The same
    figures with ALLO and fitted Q-iteration compiled by numba (a few seconds; ~40 s as
    TensorFlow graphs).
    """
    from baselines.laplacian_options.fqi import values
    from baselines.laplacian_options.method import (
        eigenoption_values,
        learn_eigenfunctions,
        tabular_options,
    )

    model = room(5, 7)
    S = model.num_states
    params = LaplacianOptionsParams(
        count=3,
        walk_frames=20000,
        steps=2000,
        learning_rate=0.01,
        batch_size=128,
        hidden_sizes=(32,),
    )
    context = DiscoveryContext(
        WalkFamily(S), tasks_of(model), (), params.walk_frames, np.random.SeedSequence(0)
    )
    learned = learn_eigenfunctions(context, params, "test")
    eigenvalues, vectors = _exact_laplacian(model)
    u = values(learned.network, np.arange(S))
    for i in range(4):
        same = np.abs(eigenvalues - eigenvalues[i]) < 1e-6  # rotation within an eigenspace
        cosine = np.linalg.norm(vectors[:, same].T @ (u[:, i] / np.linalg.norm(u[:, i])))
        assert cosine >= 0.9, f"u_{i}: |cos| {cosine:.3f}"
    np.testing.assert_allclose(learned.eigenvalues[1:], eigenvalues[1:4], atol=0.01)

    space = gymnasium.spaces.Discrete(S)
    q_network, _ = eigenoption_values(learned, params, space, 4, context.seed, "test")
    options, unvisited = tabular_options(q_network, 3, learned.walk, S, params.termination_tol)
    assert unvisited == 0
    likeliest = np.argmax(model.prob, axis=2)
    for o in range(3):
        e = u[:, o + 1]
        ends = []
        for start in range(S):
            state = start
            for _ in range(3 * S):
                if options.beta[o, state] == 1.0:
                    break
                action = int(np.argmax(options.mu[o, state]))
                state = int(model.next_state[state, action, likeliest[state, action]])
            else:
                pytest.fail(f"option {o} did not stop within {3 * S} steps from {start}")
            ends.append(state)
        rank = (e[ends][:, None] >= e[None, :]).mean(axis=1)  # fraction of states at or below
        assert rank.min() >= 0.85, f"option {o} stops at rank {rank.min():.2f}"


def _interpreted(monkeypatch, *modules):
    """The numba kernels of ``modules`` replaced by their Python source (``py_func``)."""
    for module in modules:
        for name in ("forward", "backward", "adam_step", "allo_table_step", "allo_table_steps",
                     "fqi_table_sweeps"):  # fmt: skip
            kernel = getattr(module, name, None)
            if kernel is not None and hasattr(kernel, "py_func"):
                monkeypatch.setattr(module, name, kernel.py_func)


@pytest.mark.parametrize("loop", ["allo", "fqi"])
def test_the_compiled_table_loops_compute_what_their_python_source_says(monkeypatch, loop):
    """numba and the interpreter on the same kernels end at the same network.

    The compiled loops are what tabular families run, and the interpreter is what their source
    says (and what coverage sees): a numba-only behaviour (a reflected list, an integer type, a
    fused multiply-add beyond float noise) would show here.
    """
    from baselines.laplacian_options import allo, fqi
    from baselines.laplacian_options.networks import state_network

    S, A, heads, n = 12, 3, 2, 200
    rng = np.random.default_rng(3)
    here, taken = rng.integers(0, S, n), rng.integers(0, A, n)
    there = (here + taken) % S
    reward = rng.normal(size=(n, heads))
    params = LaplacianOptionsParams(
        batch_size=32, steps=30, fqi_iterations=2, fqi_steps=3, hidden_sizes=(8, 6)
    )
    found = []
    for interpreted in (False, True):
        if interpreted:
            _interpreted(monkeypatch, allo, fqi)
        if loop == "allo":
            network = state_network(gymnasium.spaces.Discrete(S), 3, (8, 6), 4, "u")
            losses, _ = allo.train_allo(network, here, there, params, np.random.default_rng(6))
        else:
            network = state_network(gymnasium.spaces.Discrete(S), heads * A, (8, 6), 4, "q")
            losses = fqi.fitted_q_iteration(
                network, here, taken, there, reward, params, np.random.default_rng(6)
            )
        found.append((losses, [w.copy() for w in network.get_weights()]))
    (compiled_losses, compiled), (python_losses, python) = found
    np.testing.assert_allclose(python_losses, compiled_losses, rtol=1e-9, atol=1e-12)
    for a, b in zip(python, compiled, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
