"""Fingerprints and CPU seconds of ``tf_agents`` runs: proof that a speed-up changed no number.

    nice -n 10 .venv/bin/python benchmarks/ppo_run_hashes.py [--frames 4000] [--specs cartpole ...]
    [--profile out.prof]  (a CPU-time profile of the runs)  [--again]

One run per (spec, option set): the spec's first test task of seed 0, its evaluation seed and
learner params, a frame budget of ``--frames``; option sets: none (``primitives``) and 3 untrained
options as ``random_options`` draws them (vector MLPs or conv nets on frames), so that option
execution is exercised too. Each run's returns, steps, frames and option-usage counts are hashed
(SHA-256 of their bytes); two checkouts that print the same hashes produced bit-identical runs.
To compare against another commit, run this file with that commit's package first on the path
(``git archive <commit> | tar -x -C /tmp/old`` then ``PYTHONPATH=/tmp/old``).

``--again`` runs every configuration a second time in the same process, in reverse order, after
all of them: as in a worker, those whose agent is still kept (``opt_suite.agents.agent_cache``,
the last ``MAX_AGENTS`` graphs) reuse it, reset, without tracing again; every hash must equal the
first pass's (the script exits 1 if one does not).

Runs in a run's worker environment (one thread per op, deterministic kernels:
``runner.cells.worker_environment``), so the figures are those of a cell.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import time
from pathlib import Path

from opt_suite.runner.cells import apply_worker_environment

apply_worker_environment()  # before TensorFlow or NumPy's BLAS load

import numpy as np  # noqa: E402

SPECS = {
    "cartpole": "gymnasium-cartpole.yaml",
    "doorkey": "minigrid-doorkey.yaml",
    "minatar": "minatar-breakout.yaml",
}


def _options(family, task, with_options: bool):
    """No option (primitives) or 3 untrained ones, drawn as ``random_options`` draws them."""
    from opt_suite.option_networks.initial import initial_frame_options, initial_vector_options
    from opt_suite.options.network import NetworkOptionSet

    env = family.make_env(task)
    shape, actions = env.observation_space.shape, int(env.action_space.n)
    env.close()
    if not with_options:
        return NetworkOptionSet.empty(actions, shape)  # as the primitives baseline's
    seed = np.random.SeedSequence(1234)
    if len(shape) == 1:
        return initial_vector_options(shape[0], actions, (32, 32), 3, seed)
    return initial_frame_options(family, task, 3, seed)


def spec_run(name: str, with_options: bool, frames: int):
    """(learner, context) of one run: ``name``'s spec, its first test task of seed 0, ``frames``."""
    from opt_suite import registry
    from opt_suite.learners.base import LearnerContext, LearnerRun
    from opt_suite.runner.protocol import resolve_components
    from opt_suite.runner.seeding import evaluation_seed
    from opt_suite.runner.task_draws import draw_tasks
    from opt_suite.spec.load import load_sweep

    spec = load_sweep(Path(__file__).parent.parent / "specs" / SPECS[name]).base
    components = resolve_components(spec)
    family = components.family(spec.family.params)
    task = draw_tasks(family, spec.tasks).test(0)[0]
    options = _options(family, task, with_options)
    learner = registry.load(registry.LEARNERS, spec.evaluation.learner)(spec.evaluation.params)
    run = LearnerRun(task, evaluation_seed(spec.tasks.seed, 0, task.index))
    return learner, LearnerContext(family, [run], options, 1, spec.evaluation.max_steps, frames)


def run_one(name: str, with_options: bool, frames: int):
    """(hash, wall s, CPU s, a summary) of one run; see the module doc."""
    learner, context = spec_run(name, with_options, frames)
    wall, cpu = time.perf_counter(), time.process_time()
    [(log, usage)] = learner.run_with_usage(context)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    digest = hashlib.sha256()
    for array in (log.returns, log.steps, log.frames, usage.calls, usage.steps, usage.frames):
        found = np.ascontiguousarray(array)
        digest.update(str((found.dtype, found.shape)).encode())
        digest.update(found.tobytes())
    summary = f"{len(log.returns)} episodes, mean return {np.mean(log.returns):.4f}"
    return digest.hexdigest()[:16], wall, cpu, summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=4000)
    parser.add_argument("--specs", nargs="*", default=list(SPECS))
    parser.add_argument("--no-options", action="store_true", help="primitives only")
    parser.add_argument("--profile", help="write a cProfile of all runs here")
    parser.add_argument(
        "--again", action="store_true", help="rerun every configuration in this process (reversed)"
    )
    args = parser.parse_args()
    import opt_suite

    print(f"package {Path(opt_suite.__file__).parent}; load {os.getloadavg()[0]:.1f}")
    profiler = None
    if args.profile:
        import cProfile

        profiler = cProfile.Profile(time.process_time)  # CPU: the machine is shared
    configurations = [
        (name, with_options)
        for name in args.specs
        for with_options in ((False,) if args.no_options else (False, True))
    ]
    order = configurations + (configurations[::-1] if args.again else [])
    first: dict[tuple[str, bool], str] = {}
    for name, with_options in order:
        if profiler is not None:
            profiler.enable()
        digest, wall, cpu, summary = run_one(name, with_options, args.frames)
        if profiler is not None:
            profiler.disable()
        kind = "3 options" if with_options else "primitives"
        again = (name, with_options) in first
        check = "" if not again else " same" if first[name, with_options] == digest else " DIFFERS"
        first.setdefault((name, with_options), digest)
        print(
            f"{name:9s} {kind:10s} {digest}  wall {wall:6.1f} s  cpu {cpu:6.1f} s  "
            f"({args.frames / cpu:,.0f} frames/CPU-s; {summary}){' again' if again else ''}{check}",
            flush=True,
        )
        if check == " DIFFERS":
            raise SystemExit(1)
    if profiler is not None:
        profiler.dump_stats(args.profile)


if __name__ == "__main__":
    main()
