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
from opt_suite.families.fourrooms import FourRooms
from opt_suite.learners.base import LearnerRun
from opt_suite.learners.smdp_q import SMDPQLearning
from opt_suite.methods.base import DiscoveryContext, TabularOptionSet
from opt_suite.methods.offline_options import OfflineOptions, Params, initial_options
from opt_suite.spec.schema import DemonstrationsSpec


def parse_overrides(text: str) -> dict:
    """``a=1,b=onehot`` -> {"a": 1, "b": "onehot"}."""
    out = {}
    for item in filter(None, text.split(",")):
        key, _, value = item.partition("=")
        try:
            out[key.strip()] = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError):
            out[key.strip()] = value.strip()
    return out


def evaluate(family, test_tasks, options, seeds, episodes, max_steps, first_k):
    """(mean steps over the first K episodes, mean return over the last 10%) over all runs."""
    runs = [
        LearnerRun(task, np.random.SeedSequence([seed, task.index]))
        for task in test_tasks
        for seed in range(seeds)
    ]
    logs = SMDPQLearning(SMDPQLearning.Params()).run(family, runs, options, episodes, max_steps)
    steps = np.array([log.steps[:first_k].sum() for log in logs], dtype=float)
    tail = max(1, episodes // 10)
    returns = np.array([log.returns[-tail:].mean() for log in logs])
    return steps.mean(), returns.mean()


def mean_se(values) -> str:
    values = np.asarray(values, dtype=float)
    se = values.std(ddof=1) / np.sqrt(len(values)) if len(values) > 1 else 0.0
    return f"{values.mean():9.1f} ± {se:6.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layout", default="10x15")
    parser.add_argument("--tasks", type=int, nargs=2, default=(6, 24), metavar=("TRAIN", "TEST"))
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
        FourRooms.Variation(), (), sum(args.tasks), args.tasks[0], args.tasks[1], args.task_seed
    )
    model = family.tabular_model(train[0])
    eval_args = (args.learner_seeds, args.episodes, args.max_steps, args.first_k)
    print(f"# {args.layout}: {len(train)} train / {len(test)} test tasks, "
          f"{args.discovery_seeds} discovery seeds x {args.learner_seeds} learner seeds, "
          f"{args.episodes} episodes; steps = total over the first {args.first_k}")  # fmt: skip
    steps, ret = evaluate(
        family, test, TabularOptionSet.empty(model.num_states, model.num_actions), *eval_args
    )
    print(f"{'primitives':48s} options -     wall -     steps {steps:9.1f}   return {ret:7.2f}")
    base = parse_overrides(args.base)
    # Untrained options (Algorithm 1's initialisation): what training adds over random networks.
    untrained = []
    for seed in range(args.discovery_seeds):
        params = dataclasses.replace(Params(), **base)
        seq = np.random.SeedSequence(seed)
        options = initial_options(family, model, params, params.max_options, seq)
        untrained.append(evaluate(family, test, options, *eval_args))
    steps, ret = np.array(untrained).T
    print(f"{'untrained options (max_options)':48s} options -     wall -     "
          f"steps {mean_se(steps)}  return {mean_se(ret)}")  # fmt: skip
    for config in args.vary:
        params = dataclasses.replace(Params(), **{**base, **parse_overrides(config)})
        kept, walls, all_steps, all_returns = [], [], [], []
        for seed in range(args.discovery_seeds):
            demo_seed = np.random.SeedSequence([args.task_seed, seed])
            demos = collect_demonstrations(family, train, DemonstrationsSpec(), demo_seed)
            context = DiscoveryContext(family, train, demos, 0, np.random.SeedSequence(seed))
            start = time.perf_counter()
            discovery = OfflineOptions(params).discover(context)
            walls.append(time.perf_counter() - start)
            kept.append(len(discovery.options))
            steps, ret = evaluate(family, test, discovery.options, *eval_args)
            all_steps.append(steps)
            all_returns.append(ret)
        print(f"{config:48s} options {np.mean(kept):.1f}  wall {np.mean(walls):5.1f}s  "
              f"steps {mean_se(all_steps)}  return {mean_se(all_returns)}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
