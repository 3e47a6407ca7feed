"""Frames per CPU-second of one ``tf_agents`` run (every deep study's bottleneck), against its env.

One evaluation run as a cell runs it (``ppo_run_hashes.spec_run``: gymnasium-cartpole's learner,
8 envs x 64 steps, 3 epochs, MLP 64x64, on the spec's first test task, primitives only), in a
worker's environment (one thread per op), CPU time (the machine is shared), and in the same
process the reference: the same task's env batch (``make_env_batch``, 8 sub-envs) stepping random
actions, the floor any learner pays.

Where a run's CPU went before (a cProfile of 4,000-frame runs, ``ppo_run_hashes.py --profile``):
building the compiled PPO update dominated. ``tf.function`` traced tf-agents' whole update (3
epochs unrolled, forward and backward, ~4,000 graph ops) *twice* on the first call, because
Adam's moments were created inside it: 3.6 CPU-s, against ~6 ms per later update and ~25 ms
(CartPole) to ~80 ms (DoorKey) per collection of 8 x 64 decisions. With options, each option's
TFLite conversion cost ~0.5 CPU-s more, most of it re-tracing the keras network to save it.

    per run, CPU-s (4,000 frames, one process   before (4ccb494)   after
    each, load ~4 on 2 cores; same hashes)
    CartPole, primitives / 3 options            5.4 / 6.1          3.7 / 3.3
    DoorKey, primitives / 3 options             4.6 / 7.3          3.4 / 3.8
    MinAtar Breakout, primitives / 3 options    6.2 / 8.1          4.3 / 4.8

Here (20,000 frames, CartPole, primitives), before the agent cache: 3.5 CPU-s, 5,700
frames/CPU-s, 0.072 of the env batch's 80,000; the first update 2.6 CPU-s (one trace), the 19
others 6.5 ms each: tf-agents' update graph was rebuilt for every run's new agent.

Since ``opt_suite.agents.agent_cache`` a worker keeps its agent per graph and resets it per run,
so only a worker's first run traces. Measured here: the worker's first run and, in the same
process, a second run of the same cell (the same seed: its curve must equal the first's, which
checks the reset), its CPU-s and its updates' traces (none). Issue 38's target: the second run
<= 1.3 CPU-s (3.1 for every run before), asserted as a ratio to the first run in one process
(``SECOND_TO_FIRST``, 1.3 / 3.1); both runs' figures are in ``extra_info`` and
docs/performance.md. Also asserted: one trace in the first run, none in the second, and a floor
of half the first run's measured ratio to the env.

``test_bench_tf_agents_masked_run``: the same two runs with 3 untrained options whose initiation
sets (the cart's side) mask the policy: a masked agent is kept per worker too (its mask is data to
the kept graph), so its second run traces nothing and is asserted as cheap, by the same ratio.

``test_bench_tf_agents_doorkey_view``: a ``minigrid-doorkey`` evaluation run (its conv network,
20,000 frames of MiniGrid-DoorKey-6x6), a worker's second run with MiniGrid's own observations
against one with :mod:`opt_suite.families.gymnasium.minigrid_view`'s (the same views without
building grids), in one process after a first run that traces: the same curve, and the CPU-s
ratio asserted (``DOORKEY_VIEW_RATIO``). Before it, MiniGrid's ``gen_obs`` was 57% of such a
run's CPU (2.1 of 3.6 CPU-s, issue 38).

    nice -n 10 .venv/bin/pytest benchmarks/bench_tf_agents_run.py -n 0 --benchmark-only -s
"""

from __future__ import annotations

import dataclasses
import os
import time

import numpy as np
from ppo_run_hashes import spec_run  # sets the worker environment before TensorFlow loads

from opt_suite.families.env_batch import make_env_batch, step_rows
from opt_suite.options.network import NetworkOptionSet

FRAMES = int(os.environ.get("OPT_SUITE_BENCH_TF_AGENTS_FRAMES", "20000"))
#: Least run frames/CPU-s as a fraction of the env batch's own: half the 0.072 measured.
FLOOR = 0.035
#: Most CPU-s of a worker's second run as a fraction of its first (which traces the update):
#: issue 38's 1.3 of 3.1 CPU-s.
SECOND_TO_FIRST = 0.42
#: The same with 3 options with initiation sets: each run also runs its options (a TFLite
#: conversion each, the mask's NumPy calls), so the untraced second run is a larger part of the
#: first. Measured 0.43 (load ~11 on 2 cores); before masked agents were kept, each run traced
#: again: ~1.0.
MASKED_SECOND_TO_FIRST = 0.6
#: Most CPU-s of a worker's DoorKey run with the fast MiniGrid view as a fraction of the same
#: run with MiniGrid's own: measured 0.48 and 0.53 (load 3 to 6 on 2 cores); issue 38 asks the
#: whole spec for about 0.5.
DOORKEY_VIEW_RATIO = 0.6


def env_frames_per_cpu_s(context, frames: int) -> float:
    """Frames per CPU-s of the run's env batch stepping uniformly random actions."""
    run = context.runs[0]
    envs = make_env_batch(context.family, run.task, 8, context.max_steps)
    rows = np.arange(envs.num_envs)
    rng = np.random.default_rng(0)
    for i in rows:
        envs.reset_at(int(i), int(i))
    used, start = 0, time.process_time()
    while used < frames:
        step = step_rows(envs, rows, rng.integers(envs.single_action_space.n, size=len(rows)))
        used += int(step.frames.sum())
        for i in np.flatnonzero(step.terminated | step.truncated):
            used += envs.reset_at(int(i), None)[1]
    cpu = time.process_time() - start
    envs.close()
    return used / cpu


def _first_and_second_run(benchmark, monkeypatch, learner, context) -> tuple[dict, list, list]:
    """A worker's first run (it traces) and, in the same process, a second run of the same cell.

    Returns (figures, the two runs' logs, each run's updates as (CPU-s, traces so far)).
    """
    from opt_suite.agents import agent_cache
    from opt_suite.learners import ppo_parts

    compiled, updates, functions = ppo_parts._compiled_train, [], []

    def timed_train(agent):  # times each update and keeps the compiled function to ask it
        train = compiled(agent)

        def update(experience):
            start = time.process_time()
            train(experience)
            updates.append((time.process_time() - start, train.experimental_get_tracing_count()))
            functions.append(train)

        return update

    monkeypatch.setattr(ppo_parts, "_compiled_train", timed_train)
    agent_cache.clear()  # the first run builds and traces, as in a worker's first cell
    results: dict[str, float] = {}
    logs, per_run, compiled_by_run = [], [], []

    def measure() -> None:
        for name in ("run", "second_run"):
            updates.clear()
            start = time.process_time()
            logs.append(learner.run(context)[0])
            results[f"{name}_cpu_s"] = time.process_time() - start
            per_run.append(list(updates))
            compiled_by_run.append({id(f) for f in functions})
            functions.clear()
        results["env"] = env_frames_per_cpu_s(context, FRAMES)

    benchmark.pedantic(measure, rounds=1, iterations=1)
    r = results
    r["run"] = FRAMES / r["run_cpu_s"]
    r["ratio"] = r["run"] / r["env"]
    r["second_run"] = FRAMES / r["second_run_cpu_s"]
    r["second_ratio"] = r["second_run"] / r["env"]
    r["second_to_first"] = r["second_run_cpu_s"] / r["run_cpu_s"]
    first, second = per_run
    r["first_update_cpu_s"], _ = first[0]
    r["other_updates_cpu_s"] = sum(cpu for cpu, _ in first[1:]) / max(len(first) - 1, 1)
    r["second_run_first_update_cpu_s"], _ = second[0]
    r["same_compiled_update"] = float(len(compiled_by_run[0] | compiled_by_run[1]) == 1)
    benchmark.extra_info.update({k: round(v, 4) for k, v in r.items()})
    return r, logs, per_run


def _check_second_run(r: dict, logs: list, per_run: list, bound: float) -> None:
    """One trace, one compiled update for both runs; the same seed's same curve; the ratio."""
    first, second = per_run
    traces, traces_after = first[0][1], second[0][1]
    assert traces == 1, f"the compiled PPO update was traced {traces} times in one run"
    assert traces_after == 1, "the second run traced the PPO update again: the agent not kept"
    assert r["same_compiled_update"] == 1.0, "the second run built another compiled update"
    for array in ("returns", "steps", "frames"):  # the same seed: a reset agent, the same run
        assert np.array_equal(getattr(logs[0], array), getattr(logs[1], array)), array
    assert r["second_to_first"] <= bound, (
        f"second run {r['second_to_first']:.2f}x the first's CPU-s > {bound}"
    )


def _summary(title: str, r: dict, per_run: list) -> str:
    first, second = per_run
    return (
        f"\n{title}, {FRAMES:,} frames: first run {r['run_cpu_s']:.2f} CPU-s "
        f"({r['run']:,.0f} frames/CPU-s, {r['ratio']:.3f} of the env batch's {r['env']:,.0f}), "
        f"first update {r['first_update_cpu_s']:.2f} CPU-s ({first[0][1]} trace), later ones "
        f"{1000 * r['other_updates_cpu_s']:.1f} ms ({len(first)} updates); second run "
        f"{r['second_run_cpu_s']:.2f} CPU-s ({r['second_to_first']:.2f}x the first, "
        f"{r['second_ratio']:.3f} of the env's), its first update "
        f"{1000 * r['second_run_first_update_cpu_s']:.1f} ms "
        f"({second[0][1] - first[0][1]} traces)"
    )


def test_bench_tf_agents_run(benchmark, monkeypatch):
    """A worker's first and second CartPole run: CPU-s, updates, traces; the env's rate."""
    learner, context = spec_run("cartpole", False, FRAMES)
    r, logs, per_run = _first_and_second_run(benchmark, monkeypatch, learner, context)
    print(_summary("tf_agents run, CartPole", r, per_run))
    _check_second_run(r, logs, per_run, SECOND_TO_FIRST)
    assert r["ratio"] >= FLOOR, f"run/env frames per CPU-s {r['ratio']:.3f} < {FLOOR}"


def test_bench_tf_agents_masked_run(benchmark, monkeypatch):
    """The same with 3 options whose initiation sets mask the policy: the second run is cheap too.

    The mask is a NumPy function of the observation (``initiation_mask``: ``tf.numpy_function``
    in the graph), which a kept agent's graph calls with each run's own mask.
    """
    learner, context = spec_run("cartpole", True, FRAMES)
    options = context.options
    masked = dataclasses.replace(
        context,
        options=CartSide(options.networks, options.num_actions, options.observation_shape),
    )
    r, logs, per_run = _first_and_second_run(benchmark, monkeypatch, learner, masked)
    print(_summary("tf_agents run, CartPole, 3 options with initiation sets", r, per_run))
    _check_second_run(r, logs, per_run, MASKED_SECOND_TO_FIRST)


def test_bench_tf_agents_doorkey_view(benchmark, monkeypatch):
    """A DoorKey run's CPU-s with MiniGrid's own observations and with the fast view: one curve."""
    from opt_suite.agents import agent_cache
    from opt_suite.families.gymnasium import env as task_env

    learner, context = spec_run("doorkey", False, FRAMES)
    agent_cache.clear()
    results: dict[str, float] = {}
    logs = []

    def measure() -> None:
        learner.run(context)  # the worker's first run: it traces the update
        for name, own_view in (("minigrid_view_cpu_s", True), ("fast_view_cpu_s", False)):
            with monkeypatch.context() as patch:
                if own_view:  # the task envs keep MiniGrid's gen_obs
                    patch.setattr(task_env, "install_fast_view", lambda env: False)
                start = time.process_time()
                logs.append(learner.run(context)[0])
                results[name] = time.process_time() - start

    benchmark.pedantic(measure, rounds=1, iterations=1)
    r = results
    r["ratio"] = r["fast_view_cpu_s"] / r["minigrid_view_cpu_s"]
    benchmark.extra_info.update({k: round(v, 4) for k, v in r.items()})
    print(
        f"\ntf_agents run, minigrid-doorkey, {FRAMES:,} frames, a worker's second run: "
        f"MiniGrid's observations {r['minigrid_view_cpu_s']:.2f} CPU-s, the fast view "
        f"{r['fast_view_cpu_s']:.2f} CPU-s ({r['ratio']:.2f}x)"
    )
    for array in ("returns", "steps", "frames"):  # the same seed: the same run, either view
        assert np.array_equal(getattr(logs[0], array), getattr(logs[1], array)), array
    assert r["ratio"] <= DOORKEY_VIEW_RATIO, (
        f"the fast view's run {r['ratio']:.2f}x MiniGrid's CPU-s > {DOORKEY_VIEW_RATIO}"
    )


class CartSide(NetworkOptionSet):
    """Untrained options that may start only with the cart left of, right of, or near the centre."""

    @property
    def has_initiation(self) -> bool:
        """Every option has an initiation set."""
        return True

    def initiation(self, observations):
        """Bool [n, m] from the cart's position (the observation's first number)."""
        position = np.asarray(observations)[:, 0]
        sides = np.stack([position < 0.0, position >= 0.0, np.abs(position) < 0.5], axis=1)
        return sides[:, : len(self)]
