"""``opt-suite option-usage RUN_DIR``: how often the test-time learner chose each method's options.

Evaluation cells computed before the learner counted its choices store only returns and steps.
For those (and for every cell with ``--replay``) this command replays each completed evaluation
cell of a method with options — the same spec (the one stored in the
run), the same cells (the plan rebuilt from it must name exactly the stored cell ids), the runner's
own seeds and job (:func:`opt_suite.runner.protocol.evaluation_job`) and the option-set files from
the store (digests checked) — with the learner counting its choices, and **checks that every
replayed episode's return and steps equal the stored ones exactly**. Only then it writes
``option_usage.csv`` (one row per method × seed × test task, per-option columns) and
``option_usage.md`` (per method: the fraction of decisions that chose an option over all, the
first and the last 10% of episodes, the mean option length, each option's share) into RUN_DIR,
or for a sweep run into ``variants/<name>/``; see :mod:`opt_suite.report.option_usage`.

    opt-suite option-usage RUN_DIR [--variant NAME]... [--seeds LIST] [--methods NAME...]
                                   [--replay] [--per-episode]

Runs made by code that counts (``smdp_q_learning`` since this command exists; ``tf_agents``, the
deep learner, with an episode or a frame budget, since it counts) keep each evaluation cell's
counts in ``cells/<id>/option_usage.npz``, computed with the cell's own episodes; those are read
instead of replayed (``--replay`` replays them too, to check the code still reproduces them). The
run is opened through :class:`opt_suite.run_view.RunView`; reading and replaying are in
:mod:`opt_suite.report.usage_replay`.

Exit status: 0 written; 2 on bad input, when nothing can be replayed, or when the replay differs
from the stored run (the code changed since the run: rerun the spec, then this command).
Replaying costs about as much as the evaluation cells did; it runs in this process.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from opt_suite.report.usage_replay import REPLAY_DIFFERS
from opt_suite.run_view import RunViewError

__all__ = ["add_arguments", "run", "REPLAY_DIFFERS"]

# How option_usage.md names the learners that count option usage.
LEARNERS = {
    "smdp_q_learning": "SMDP Q-learning over primitives + options",
    "tf_agents": "PPO (tf-agents) over primitives + options",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare RUN_DIR and the selections."""
    parser.add_argument("directory", metavar="RUN_DIR", type=Path,
                        help="the --out directory of `opt-suite run`")  # fmt: skip
    parser.add_argument(
        "--variant",
        action="append",
        metavar="NAME",
        help="a sweep run's variant (repeatable; default: every variant)",
    )
    parser.add_argument(
        "--spec",
        metavar="NAME_OR_HASH",
        help="the spec whose run to replay, by name or hash prefix (a directory shared by several "
        "specs; default: the latest run's)",
    )
    parser.add_argument(
        "--seeds", metavar="LIST", help="seed indices, e.g. '0-4' or '0,2' (default: all run)"
    )
    parser.add_argument(
        "--methods",
        nargs="+",
        metavar="NAME",
        help="method entries (default: every entry with options)",
    )
    parser.add_argument(
        "--replay",
        action="store_true",
        help="replay also the cells that recorded their counts (checks the code still matches)",
    )
    parser.add_argument(
        "--per-episode",
        action="store_true",
        help="also write option_usage_episodes.csv, one row per episode",
    )


def _views(
    directory: Path, names: list[str] | None, spec: str | None = None
) -> list[tuple[str | None, str | None, Path]]:
    """(variant name, spec selector, output folder) to replay: the run, or the chosen variants."""
    from opt_suite.report.sweep import is_sweep_run, read_manifest

    if not is_sweep_run(directory):
        if names:
            raise RunViewError(f"--variant: {directory} is not a sweep run (it has no sweep.json)")
        return [(None, spec, directory)]
    if spec is not None:
        raise RunViewError(
            f"--spec: {directory} is a sweep run; choose its variants with --variant"
        )
    variants = {v["name"]: v["spec_hash"] for v in read_manifest(directory)["variants"]}
    for name in names or []:
        if name not in variants:
            raise RunViewError(f"--variant {name!r}: the sweep has {', '.join(variants)}")
    chosen = names or list(variants)
    return [(name, variants[name], directory / "variants" / name) for name in chosen]


def _write(directory: Path, args: argparse.Namespace) -> list[Path]:
    from opt_suite.report.option_usage import write_usage_files
    from opt_suite.report.usage_replay import view_usage
    from opt_suite.run_view import RunView
    from opt_suite.store import StoreError

    written: list[Path] = []
    cache: dict[str, Any] = {}
    views = _views(directory, args.variant, args.spec)
    for variant, selector, out in views:
        try:
            with RunView(directory, selector, remedy=REPLAY_DIFFERS) as view:
                if variant is None and (which := view.which()) is not None:
                    print(f"note: {which}")
                methods, seeds = view.select(args.methods, args.seeds)
                runs, notes = view_usage(view, methods, seeds, replay=args.replay, cache=cache)
                spec = view.spec()
        except StoreError as exc:
            if variant is None or args.variant:
                raise
            print(f"opt-suite option-usage: variant {variant} left out: {exc}", file=sys.stderr)
            continue
        if not runs:
            print(
                f"opt-suite option-usage: {variant or directory}: no completed evaluation of a "
                "method with options to replay" + (f" ({'; '.join(notes)})" if notes else ""),
                file=sys.stderr,
            )
            continue
        title = spec.name + (f", variant {variant}" if variant else "")
        fraction = spec.report.final_fraction
        learner = LEARNERS.get(spec.evaluation.learner, spec.evaluation.learner)
        written += write_usage_files(runs, out, fraction, title, notes, args.per_episode, learner)
    return written


def run(args: argparse.Namespace) -> int:
    """Replay, verify and write the files; 0 on success, 2 otherwise."""
    from opt_suite.files_guard import InputError
    from opt_suite.registry import RegistryError
    from opt_suite.report.episodes import ReportDataError
    from opt_suite.spec import SpecError
    from opt_suite.store import StoreError

    if not args.directory.is_dir():
        print(f"opt-suite option-usage: {args.directory}: no such directory", file=sys.stderr)
        return 2
    try:
        written = _write(args.directory, args)
    except SpecError as exc:
        print("\n".join(exc.problems), file=sys.stderr)
        print(f"opt-suite option-usage: the stored spec does not load: {REPLAY_DIFFERS}",
              file=sys.stderr)  # fmt: skip
        return 2
    except (StoreError, RegistryError, ReportDataError, ValueError, InputError) as exc:
        print(f"opt-suite option-usage: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"opt-suite option-usage: cannot write: {exc}", file=sys.stderr)
        return 2
    if not written:
        print("opt-suite option-usage: nothing written", file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path}")
    return 0
