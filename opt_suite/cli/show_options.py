"""``opt-suite show-options``: draw option sets as PNGs in the style of the paper's Figure 2.

Two ways to name what to draw::

    opt-suite show-options RUN_DIR [--method NAME]... [--seed N]... [--task I] [--out DIR]
    opt-suite show-options --options FILE.npz --spec SPEC.yaml [--demos FILE.npz] [--task I]

For each option set: per option, arrows of argmax μ over a demonstration coloured by μ_o(s_t, a_t),
the termination probabilities β, and, on test task I, where the policy over options picks each
option (``π(s, o)`` of an ε-greedy SMDP Q-learner trained for ``--episodes`` episodes with the
spec's learner settings) and the path it takes. One PNG per (method, seed). Exit status 2 on bad
input.

On image families (network option sets, e.g. Atari) there is no grid to draw on: each option is
executed from a state inside a demonstration (the run's demonstrations record their reset seeds;
the demonstrator's actions are replayed up to the step that suits the option best, see
``opt_suite.plots.option_strips``) until it terminates, and its screens are drawn as a strip, one
PNG per (method, seed, option) — the paper's Figs. 4-5.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from opt_suite.files_guard import InputError, output_file
from opt_suite.run_view import RunViewError

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare RUN_DIR or --options/--spec, and the drawing choices."""
    from opt_suite.cli.numbers import MAX_INDEX, integer
    from opt_suite.spec.schema import MAX_EPISODES, MAX_TASKS

    parser.add_argument("directory", metavar="RUN_DIR", type=Path, nargs="?",
                        help="the --out directory of `opt-suite run`")  # fmt: skip
    parser.add_argument("--options", type=Path, help="an option set .npz (instead of RUN_DIR)")
    parser.add_argument(
        "--spec",
        help="with --options: the spec file the option set belongs to; with RUN_DIR: the name or "
        "a hash prefix of the spec whose results to draw (a directory shared by several specs)",
    )
    parser.add_argument("--demos", type=Path, help="demonstrations .npz to draw (with --options)")
    parser.add_argument("--method", action="append", help="method entry to draw (default: all)")
    parser.add_argument("--seed", type=integer(0, MAX_INDEX), action="append",
                        help="seed index (default: first)")  # fmt: skip
    parser.add_argument("--task", type=integer(0, MAX_TASKS - 1), default=0,
                        help="test task index (default 0)")  # fmt: skip
    parser.add_argument("--episodes", type=integer(1, MAX_EPISODES), default=None,
                        help="Q-learning episodes on the test task (default: spec's)")  # fmt: skip
    parser.add_argument("--out", type=Path, help="output folder (default: RUN_DIR/options)")


def _setting(spec: Any, task_index: int, seed: int):
    """(family, model of test task ``task_index`` of ``seed``, params, episodes, max_steps)."""
    from opt_suite import registry
    from opt_suite.families.base import exact_model
    from opt_suite.learners.smdp_q import SMDPQLearning
    from opt_suite.runner.task_draws import draw_tasks

    family_cls = registry.load(registry.FAMILIES, spec.family.name)
    family = family_cls(spec.family.params or family_cls.Params())
    test = draw_tasks(family, spec.tasks).test(seed)
    if not 0 <= task_index < len(test):
        raise InputError(f"--task {task_index}: the spec has test tasks 0..{len(test) - 1}")
    model = exact_model(family, test[task_index])
    if model is None or model.cells is None:
        raise InputError(f"family {spec.family.name!r} is not a grid family: nothing to draw")
    ev = spec.evaluation
    params = ev.params if isinstance(ev.params, SMDPQLearning.Params) else SMDPQLearning.Params()
    return family, model, params, ev.episodes, ev.max_steps


def _draw(out: Path, spec, options, demos, args, label: str, seed: int) -> Path:
    import numpy as np

    from opt_suite.families.tabular.grid_dynamics import MOVES
    from opt_suite.plots.option_data import epsilon_greedy_policy
    from opt_suite.plots.options import save_options_figure
    from opt_suite.plots.policy_on_task import greedy_path, learn_q

    _, model, params, episodes, max_steps = _setting(spec, args.task, seed)
    if options.mu.shape[1:] != (model.num_states, model.num_actions):
        raise InputError(
            f"{label}: options have {options.mu.shape[1]} states and {options.mu.shape[2]} "
            f"actions, the spec's family {model.num_states} and {model.num_actions}"
        )
    episodes = args.episodes or episodes
    q = learn_q(
        model, options, params, episodes, max_steps, np.random.SeedSequence([seed, args.task])
    )
    episode = greedy_path(
        model, options, q, params.termination_bump, max_steps, np.random.default_rng(seed)
    )
    demonstration = max(demos, key=len) if demos else None
    title = f"{label} — test task {args.task}, π after {episodes} episodes of Q-learning"
    # Never through a symlink: a link there would make the picture overwrite a file outside --out.
    path = output_file(out / f"options-{label}.png", "an options picture")
    return save_options_figure(
        path, model, options, MOVES, demonstration=demonstration,
        pi=epsilon_greedy_policy(q, params.epsilon), episode=episode, title=title,
    )  # fmt: skip


def _draw_strips(out: Path, spec, options, demos, args, label: str, seed: int) -> list[Path]:
    """Image families: per option, a strip of the screens of one execution (paper Figs. 4-5)."""
    import numpy as np

    from opt_suite import registry
    from opt_suite.plots.option_strips import (
        ReplayError,
        demonstration_start,
        replay_demonstration,
        run_option,
        save_option_strip,
    )

    family_cls = registry.load(registry.FAMILIES, spec.family.name)
    family = family_cls(spec.family.params or family_cls.Params())
    t = spec.tasks
    train, _ = family.make_tasks(t.vary, t.list, t.count, t.train, t.test, t.seed)
    if not train:
        raise InputError("the spec has no train task to start the options from")
    by_id = {task.task_id: task for task in train}
    bump = getattr(spec.evaluation.params, "termination_bump", 0.05)
    written = []
    for o, name in enumerate(options.names):
        draws = int(np.random.SeedSequence([seed, o]).generate_state(1)[0])
        chosen = demonstration_start(options, o, demos)
        demo = None if chosen is None else demos[chosen.trajectory]
        task = by_id.get(demo.task_id if demo else (demos[0].task_id if demos else ""), train[0])
        env = _render_env(family, task)
        try:
            meanings = getattr(env.unwrapped, "action_meanings", None)
            names = list(meanings()) if callable(meanings) else None
            if chosen is None:
                run = run_option(env, options, o, draws, bump)
                where = f"a reset of {task.task_id} (no replayable demonstration)"
            else:
                try:
                    start = replay_demonstration(env, demo, chosen.step)
                except ReplayError as exc:
                    raise InputError(f"{label}: {exc}") from None
                run = run_option(env, options, o, draws, bump, start=start)
                where = f"step {chosen.step} of demonstration {chosen.trajectory} ({task.task_id})"
        finally:
            env.close()
        ended = f"({run.ended_by}, {len(run.actions)} steps)"
        title = f"{label}: {name} from {where} until it ended {ended}"
        path = output_file(out / f"options-{label}-{name}.png", "an option strip picture")
        written.append(save_option_strip(path, run, names, title))
    return written


def _render_env(family: Any, task: Any) -> Any:
    try:
        return family.make_env(task, render_mode="rgb_array")
    except TypeError:  # an env without rendering: draw its observations
        return family.make_env(task)


def _from_run_dir(args) -> list[Path]:
    from opt_suite.files_guard import output_dir
    from opt_suite.run_view import RunView

    written = []
    with RunView(args.directory, args.spec) as view:
        # Checked once the store is read: the default lies in RUN_DIR, not to be made if missing.
        out = output_dir(args.out or args.directory / "options", "the output folder (--out)")
        spec = view.spec()
        store = view.store
        methods = store.methods()
        for name in args.method or []:
            if name not in methods:
                raise RunViewError(f"--method {name!r}: the run has {', '.join(methods)}")
        seeds = args.seed or store.seeds()[:1]
        for seed in seeds:
            demos = store.demonstrations(seed)
            for method in args.method or methods:
                options = store.option_set(method, seed)
                if options is None or (len(options) == 0 and not args.method):
                    continue  # not discovered yet, or primitives only
                label = f"{method}-seed{seed}"
                if not hasattr(options, "mu"):  # options acted by networks: an image family
                    written += _draw_strips(out, spec, options, demos, args, label, seed)
                    continue
                written.append(_draw(out, spec, options, demos, args, label, seed))
    return written


def _from_files(args) -> list[Path]:
    from opt_suite.files_guard import output_dir
    from opt_suite.options import TabularOptionSet
    from opt_suite.spec import load_spec

    if args.spec is None:
        raise InputError("--options needs --spec (the spec the option set was discovered for)")
    spec = load_spec(Path(args.spec))
    options = TabularOptionSet.load(args.options)
    demos = None
    if args.demos is not None:
        from opt_suite.demonstrations import load_demonstrations

        demos = load_demonstrations(args.demos)
    out = output_dir(args.out or args.options.parent, "the output folder (--out)")
    seed = (args.seed or [0])[0]
    return [_draw(out, spec, options, demos, args, args.options.stem, seed)]


def run(args: argparse.Namespace) -> int:
    """Write the PNGs; 0 on success, 2 on bad input."""
    from opt_suite.registry import RegistryError
    from opt_suite.spec import SpecError
    from opt_suite.store import StoreError

    if (args.directory is None) == (args.options is None):
        print("opt-suite show-options: give either RUN_DIR or --options FILE --spec SPEC",
              file=sys.stderr)  # fmt: skip
        return 2
    spec_file = Path(args.spec) if args.options is not None and args.spec is not None else None
    for path in (args.directory, args.options, spec_file, args.demos):
        if path is not None and not path.exists():
            print(f"opt-suite show-options: {path}: no such file or directory", file=sys.stderr)
            return 2
    try:
        written = _from_run_dir(args) if args.directory is not None else _from_files(args)
    except SpecError as exc:
        print("\n".join(exc.problems), file=sys.stderr)
        return 2
    except (InputError, StoreError, RegistryError, ValueError, OSError) as exc:
        print(f"opt-suite show-options: {exc}", file=sys.stderr)
        return 2
    if not written:
        print("opt-suite show-options: no learned options to draw in this run", file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path}")
    return 0
