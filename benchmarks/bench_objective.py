"""Speed of Ĵ + gradient on the reference workload, against an eager loop and the networks alone.

Reference workload (issue "Ĵ in TensorFlow"): B = 64 demonstrations of T = 200 steps on the 40x40
four-rooms grid, n = 8 options (4 learned + 4 primitives), the 4 option networks and the policy over
options each 2 layers x 32 units with the state index as input (first layer = a row lookup, which
equals the one-hot matmul), λ1 = 0.001 and λ2 = 100 as in the paper.

Figures (measured in one process, interleaved, best of several rounds: the machine is shared):

- R1 = eager per-step Python loop (networks, recursion step by step, tape) / compiled step.
  Goal >= 30.
- R2 = compiled step (networks + Ĵ + gradient) / the networks' own forward + backward.
  Goal <= 1.3.
- time(T = 1000) / time(T = 200) of the compiled step. Goal <= 5.5.
- trajectory-steps per second of the compiled step.

"Compiled step" is one ``tf.function``: networks -> tables -> Ĵ -> gradients. Variant
``training`` is the form offline_options' training compiles (``opt_suite.methods.offline_options.
training``: a tape through :func:`opt_suite.objective.jhat` with ``jit_compile=False``, inside the
round's graph); variant ``jhat-xla`` computes Ĵ and its table gradients as one XLA cluster
(:func:`opt_suite.objective.jhat_and_gradients`) and chains them into the networks. The networks'
baseline is the same networks in the same kind of ``tf.function``.

TensorFlow runs on ``OPT_SUITE_BENCH_THREADS`` threads (default 1): on a small shared machine one
thread gives repeatable ratios; set it to the core count to measure the multi-threaded case.

    .venv/bin/pytest benchmarks/bench_objective.py -n 0 --benchmark-only -s
    OPT_SUITE_BENCH_THREADS=2 .venv/bin/pytest benchmarks/bench_objective.py -n0 --benchmark-only -s
"""

from __future__ import annotations

import os
import time
from typing import Any, NamedTuple

import numpy as np
import pytest
import tensorflow as tf  # noqa: I001

import opt_suite  # noqa: F401  (sets TF_USE_LEGACY_KERAS before TensorFlow is imported)
from opt_suite.objective import JhatConfig, jhat, jhat_and_gradients, option_diversity

THREADS = int(os.environ.get("OPT_SUITE_BENCH_THREADS", "1"))
tf.config.threading.set_intra_op_parallelism_threads(THREADS)
tf.config.threading.set_inter_op_parallelism_threads(THREADS)

NUM_STATES, NUM_ACTIONS, NUM_LEARNED, HIDDEN, BATCH = 40 * 40, 4, 4, 32, 64
CONFIG = JhatConfig(lambda1=1e-3, lambda2=100.0)
_INT = tf.TensorSpec([None, None], tf.int32)
_LENGTHS = tf.TensorSpec([None], tf.int32)
VARIANTS = ["training", "jhat-xla"]


class Tables(NamedTuple):
    """π, μ, β [B, L, n] and the learned options' action distributions [B, L, m, A]."""

    pi: Any
    mu: Any
    beta: Any
    option_action_probs: Any


class Networks:
    """The option networks and the policy over options (Glorot-uniform weights, seeded)."""

    def __init__(self, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)

        def dense(fan_in, fan_out):
            limit = np.sqrt(6.0 / (fan_in + fan_out))
            return tf.Variable(rng.uniform(-limit, limit, (fan_in, fan_out)).astype(np.float32))

        def mlp(outputs):
            return [dense(NUM_STATES, HIDDEN), dense(HIDDEN, HIDDEN), dense(HIDDEN, outputs)]

        self.options = [mlp(NUM_ACTIONS + 1) for _ in range(NUM_LEARNED)]  # μ logits and β logit
        self.policy = mlp(NUM_ACTIONS + NUM_LEARNED)
        self.variables = [w for net in [*self.options, self.policy] for w in net]

    @staticmethod
    def _mlp(weights, states):
        first, second, head = weights
        x = tf.nn.relu(tf.gather(first, states))  # = one-hot(s) @ first, without the one-hot
        return tf.matmul(tf.nn.relu(tf.matmul(x, second)), head)

    def tables(self, states, actions) -> Tables:
        """(π, μ, β, learned options' action distributions) on a [B, L] batch of states."""
        shape = tf.shape(states)
        flat = tf.reshape(states, [-1])
        out = [self._mlp(w, flat) for w in self.options]
        probs = tf.stack([tf.nn.softmax(o[:, :NUM_ACTIONS]) for o in out], axis=1)  # [BL, m, A]
        probs = tf.reshape(probs, tf.concat([shape, [NUM_LEARNED, NUM_ACTIONS]], 0))
        beta = tf.reshape(
            tf.sigmoid(tf.stack([o[:, -1] for o in out], 1)), [*tf.unstack(shape), -1]
        )
        pi = tf.nn.softmax(self._mlp(self.policy, flat))
        pi = tf.reshape(pi, [*tf.unstack(shape), -1])
        primitive = tf.one_hot(actions, NUM_ACTIONS)  # μ_a(s_t, a_t) = 1[a = a_t], β_a = 1
        mu_learned = tf.reduce_sum(probs * primitive[:, :, None, :], axis=-1)
        return Tables(
            pi,
            tf.concat([primitive, mu_learned], -1),
            tf.concat([tf.ones_like(primitive), beta], -1),
            probs,
        )


def random_walks(length: int, seed: int = 0):
    """BATCH random walks of ``length`` steps on the 40x40 grid (states, actions, lengths)."""
    rng = np.random.default_rng(seed)
    moves = np.array([(-1, 0), (0, 1), (1, 0), (0, -1)])
    actions = rng.integers(0, NUM_ACTIONS, (BATCH, length + 1))
    cells = np.empty((BATCH, length + 1, 2), dtype=np.int64)
    cells[:, 0] = rng.integers(0, 40, (BATCH, 2))
    for t in range(length):
        cells[:, t + 1] = np.clip(cells[:, t] + moves[actions[:, t]], 0, 39)
    states = cells[..., 0] * 40 + cells[..., 1]
    return (
        tf.constant(states, tf.int32),
        tf.constant(actions, tf.int32),
        tf.constant(np.full(BATCH, length), tf.int32),
    )


def eager_reference(nets: Networks, states, actions, lengths):
    """The plain implementation: eager networks, the scaled recursion one step at a time, a tape."""
    length = int(lengths[0])
    with tf.GradientTape() as tape:
        pi, mu, beta, probs = nets.tables(states, actions)
        alpha = pi[:, 0] * mu[:, 0]
        z = tf.reduce_sum(alpha, -1)
        log_prob, p, terminations = tf.math.log(z), alpha / z[:, None], tf.zeros_like(z)
        for t in range(1, length + 1):
            stop = tf.reduce_sum(p * beta[:, t], -1)  # Pr(T_t = 1 | h_t)
            terminations += stop
            if t == length:
                break
            alpha = (p * (1.0 - beta[:, t]) + stop[:, None] * pi[:, t]) * mu[:, t]
            z = tf.reduce_sum(alpha, -1)
            log_prob, p = log_prob + tf.math.log(z), alpha / z[:, None]
        total = tf.reduce_mean(
            CONFIG.lambda2 * tf.exp(log_prob)
            - terminations / length
            + CONFIG.lambda1 * option_diversity(probs, lengths)
        )
    return total, tape.gradient(total, nets.variables)


def networks_step(nets: Networks, jit_compile: bool):
    """The networks' own forward + backward (from a simple loss on every table they output)."""

    @tf.function(input_signature=[_INT, _INT], jit_compile=jit_compile)
    def step(states, actions):
        with tf.GradientTape() as tape:
            # Squares, not plain sums: a constant upstream gradient could let grappler fold work.
            loss = tf.add_n([tf.reduce_sum(tf.square(x)) for x in nets.tables(states, actions)])
        return tape.gradient(loss, nets.variables)

    return step


def best_time(fn, *args, repeats: int) -> float:
    """Fastest of ``repeats`` calls, in seconds (results forced to host)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        tf.nest.map_structure(lambda x: x.numpy() if hasattr(x, "numpy") else x, fn(*args))
        best = min(best, time.perf_counter() - start)
    return best


@pytest.fixture(scope="module")
def nets():
    return Networks()


@pytest.fixture(scope="module")
def batch200():
    return random_walks(200)


def _compiled(nets, variant):
    """The compiled step of ``variant`` (see the module docstring)."""
    if variant == "training":
        c = CONFIG

        @tf.function(input_signature=[_INT, _INT, _LENGTHS])
        def step(states, actions, lengths):
            with tf.GradientTape() as tape:
                t = nets.tables(states, actions)
                parts = jhat(*t[:3], lengths, t[3], c.lambda1, c.lambda2, jit_compile=False)
            return parts, tape.gradient(parts.total, nets.variables)

        return step

    @tf.function(input_signature=[_INT, _INT, _LENGTHS])
    def xla_step(states, actions, lengths):
        with tf.GradientTape() as tape:
            tables = nets.tables(states, actions)
        # Ĵ and its table gradients in one XLA cluster, then the chain rule into the networks.
        parts, table_grads = jhat_and_gradients(*tables[:3], lengths, tables[3], CONFIG)
        outputs = [x for x in tables if x is not None]
        upstream = [g for g in table_grads if g is not None]
        grads = tape.gradient(outputs, nets.variables, output_gradients=upstream)
        return parts, grads

    return xla_step


@pytest.mark.parametrize("variant", VARIANTS)
def test_jhat_step(benchmark, nets, batch200, variant):
    """The compiled step at T = 200, with R1, R2 and steps/s in extra_info."""
    step = _compiled(nets, variant)
    baseline = networks_step(nets, jit_compile=False)
    states, actions, lengths = batch200
    step(*batch200), baseline(states, actions)  # compile outside the timings
    benchmark.pedantic(step, args=batch200, rounds=30, warmup_rounds=3, iterations=1)

    ours, nets_only, eager = [], [], []
    for _ in range(6):  # interleaved rounds: a busy neighbour slows all three alike
        eager.append(best_time(eager_reference, nets, *batch200, repeats=1))
        ours.append(best_time(step, *batch200, repeats=10))
        nets_only.append(best_time(baseline, states, actions, repeats=10))
    ours_s, nets_s, eager_s = min(ours), min(nets_only), min(eager)
    info = {
        "step_ms": round(1e3 * ours_s, 2),
        "networks_ms": round(1e3 * nets_s, 2),
        "eager_reference_ms": round(1e3 * eager_s, 1),
        "R1": round(eager_s / ours_s, 1),
        "R2": round(ours_s / nets_s, 2),
        "steps_per_s": round(BATCH * 200 / ours_s),
        "threads": THREADS,
    }
    benchmark.extra_info.update(info)
    print(f"\n[{variant}] {info}")


@pytest.mark.parametrize("variant", VARIANTS)
def test_length_scaling(benchmark, nets, batch200, variant):
    """time(T = 1000) / time(T = 200) of the compiled step."""
    step = _compiled(nets, variant)
    baseline = networks_step(nets, jit_compile=False)
    batch1000 = random_walks(1000, seed=1)
    step(*batch200), step(*batch1000), baseline(*batch200[:2]), baseline(*batch1000[:2])
    benchmark.pedantic(step, args=batch1000, rounds=10, warmup_rounds=1, iterations=1)
    times = {key: [] for key in ("short", "long", "nets_short", "nets_long")}
    for _ in range(4):
        times["short"].append(best_time(step, *batch200, repeats=8))
        times["long"].append(best_time(step, *batch1000, repeats=3))
        times["nets_short"].append(best_time(baseline, *batch200[:2], repeats=8))
        times["nets_long"].append(best_time(baseline, *batch1000[:2], repeats=3))
    best = {key: min(value) for key, value in times.items()}
    info = {
        "T200_ms": round(1e3 * best["short"], 2),
        "T1000_ms": round(1e3 * best["long"], 2),
        "ratio_1000_200": round(best["long"] / best["short"], 2),
        "networks_ratio_1000_200": round(best["nets_long"] / best["nets_short"], 2),
        "steps_per_s_T1000": round(BATCH * 1000 / best["long"]),
        "threads": THREADS,
    }
    benchmark.extra_info.update(info)
    print(f"\n[{variant}] {info}")
