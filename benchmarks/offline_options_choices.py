"""Measure design choices of offline_options on held-out tasks (features, likelihood form, ...).

For each configuration and discovery seed: learn options with Algorithm 1 from one expert
demonstration on each train task, then run the paper's test-time learner (SMDP Q-learning, the
``smdp_q_learning`` defaults) on every held-out test task with several learner seeds. Reported per
configuration (mean ± standard error over discovery seeds): options kept, discovery wall time, the
mean over test runs of the *total primitive steps over the first K episodes* (lower = learns
faster) and the mean return over the last 10% of episodes. Primitives alone are the reference row.

    .venv/bin/python benchmarks/offline_options_choices.py --layout 10x15 \
        --vary features=onehot features=coords features=both

Each ``--vary`` entry is one configuration: comma-separated ``name=value`` overrides of the
offline_options Params on top of ``--base`` (values parsed as Python literals, strings bare).
Not collected by pytest (no ``bench_`` prefix): it is an experiment, minutes long.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import time

import numpy as np

import opt_suite  # noqa: F401  (sets the Keras flavour before TensorFlow loads)
from opt_suite.demonstrations import collect_demonstrations
from opt_suite.families.tabular.fourrooms import FourRooms
from opt_suite.learners.base import LearnerRun
from opt_suite.learners.smdp_q import SMDPQLearning
from opt_suite.methods.base import DiscoveryContext
from opt_suite.methods.offline_options import OfflineOptions, Params, initial_options
from opt_suite.options import TabularOptionSet
from opt_suite.spec.schema import DemonstrationsSpec


def parse_overrides(text: str) -> dict:
    """``a=1,b=onehot`` -> {"a": 1, "b": "onehot"}; ``base`` (the defaults) -> {}."""
    out = {}
    for item in filter(None, text.split(",")):
        if item == "base":
            continue
        key, _, value = item.partition("=")
        try:
            out[key.strip()] = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError):
            out[key.strip()] = value.strip()
    return out


def evaluate(family, test_tasks, options, seeds, episodes, max_steps, first_k):
    """Means over all runs: (steps in the first K episodes, all steps, return of the last 10%)."""
    runs = [
        LearnerRun(task, np.random.SeedSequence([seed, task.index]))
        for task in test_tasks
        for seed in range(seeds)
    ]
    logs = SMDPQLearning(SMDPQLearning.Params()).run(family, runs, options, episodes, max_steps)
    first = np.mean([log.steps[:first_k].sum() for log in logs])
    total = np.mean([log.steps.sum() for log in logs])
    tail = max(1, episodes // 10)
    return first, total, np.mean([log.returns[-tail:].mean() for log in logs])


def mean_se(values) -> str:
    values = np.asarray(values, dtype=float)
    se = values.std(ddof=1) / np.sqrt(len(values)) if len(values) > 1 else 0.0
    return f"{values.mean():9.1f} ± {se:6.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layout", default="10x15")
    parser.add_argument("--tasks", type=int, nargs=2, default=(6, 24), metavar=("TRAIN", "TEST"))
    parser.add_argument("--goal-region", default="anywhere", help="FourRooms Variation.goal_region")
    parser.add_argument("--task-seed", type=int, default=0)
    parser.add_argument("--discovery-seeds", type=int, default=3)
    parser.add_argument("--learner-seeds", type=int, default=3)
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--first-k", type=int, default=20)
    parser.add_argument("--max-steps", type=int, default=1000)
    parser.add_argument("--base", default="", help="overrides applied to every configuration")
    parser.add_argument("--vary", nargs="+", default=["features=onehot", "features=coords",
                                                      "features=both"])  # fmt: skip
    args = parser.parse_args()

    family = FourRooms(FourRooms.Params(layout=args.layout))
    train, test = family.make_tasks(
        FourRooms.Variation(goal_region=args.goal_region),
        (),
        sum(args.tasks),
        args.tasks[0],
        args.tasks[1],
        args.task_seed,
    )
    model = family.tabular_model(train[0])
    eval_args = (args.learner_seeds, args.episodes, args.max_steps, args.first_k)
    print(f"# {args.layout}, goals {args.goal_region}: {len(train)} train / {len(test)} test, "
          f"{args.discovery_seeds} discovery seeds x {args.learner_seeds} learner seeds, "
          f"{args.episodes} episodes; steps = total over the first {args.first_k}")  # fmt: skip

    def row(label: str, results, kept="-", wall="-") -> None:
        first, total, final = np.array(results, dtype=float).reshape(-1, 3).T
        print(f"{label:44s} | {kept:>4s} | {wall:>6s} | {mean_se(first)} | {mean_se(total)} | "
              f"{mean_se(final)}", flush=True)  # fmt: skip

    print(f"{'configuration':44s} | opts | disc s | {'steps, first K':17s} | "
          f"{'steps, all':17s} | final return")  # fmt: skip
    empty = TabularOptionSet.empty(model.num_states, model.num_actions)
    row("primitives", [evaluate(family, test, empty, *eval_args)])
    base = parse_overrides(args.base)
    # Untrained options (Algorithm 1's initialisation): what training adds over random networks.
    params = dataclasses.replace(Params(), **base)
    untrained = [
        evaluate(family, test, initial_options(family, model, params, params.max_options,
                                               np.random.SeedSequence(seed)), *eval_args)
        for seed in range(args.discovery_seeds)
    ]  # fmt: skip
    row(f"untrained options ({params.max_options})", untrained)
    for config in args.vary:
        params = dataclasses.replace(Params(), **{**base, **parse_overrides(config)})
        kept, walls, results = [], [], []
        for seed in range(args.discovery_seeds):
            demo_seed = np.random.SeedSequence([args.task_seed, seed])
            demos = collect_demonstrations(family, train, DemonstrationsSpec(), demo_seed)
            context = DiscoveryContext(family, train, demos, 0, np.random.SeedSequence(seed))
            start = time.perf_counter()
            discovery = OfflineOptions(params).discover(context)
            walls.append(time.perf_counter() - start)
            kept.append(len(discovery.options))
            results.append(evaluate(family, test, discovery.options, *eval_args))
        row(config, results, f"{np.mean(kept):.1f}", f"{np.mean(walls):.1f}")


if __name__ == "__main__":
    main()
