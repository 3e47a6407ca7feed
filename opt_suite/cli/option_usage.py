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

Runs made by code that counts (``smdp_q_learning`` since this command exists) keep each evaluation
cell's counts in ``cells/<id>/option_usage.npz``, computed with the cell's own episodes; those are
read instead of replayed (``--replay`` replays them too, to check the code still reproduces them).

Exit status: 0 written; 2 on bad input, when nothing can be replayed, or when the replay differs
from the stored run (the code changed since the run: rerun the spec, then this command).
Replaying costs about as much as the evaluation cells did; it runs in this process.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from opt_suite.stages import Stage

__all__ = ["add_arguments", "run", "REPLAY_DIFFERS"]

REPLAY_DIFFERS = "replay differs from the stored run — the code changed since; rerun the spec"


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


class _Problem(Exception):
    """A bad input or a replay that cannot be trusted, reported as one line (exit 2)."""


def _replay_view(
    directory: Path,
    spec_hash_: str | None,
    args: argparse.Namespace,
    cache: dict[str, Any],
) -> tuple[list[Any], list[str], Any]:
    """Replay the view of ``spec_hash_`` (None: the latest run): (runs, notes, spec)."""
    import numpy as np

    from opt_suite.cli.run import select_methods_and_seeds
    from opt_suite.learners.base import OptionUsage
    from opt_suite.options import from_bytes
    from opt_suite.report.option_usage import RunUsage
    from opt_suite.runner.cells import execute
    from opt_suite.runner.protocol import evaluation_job, plan_spec, resolve_components
    from opt_suite.spec import parse_spec, spec_hash
    from opt_suite.store import ResultsStore
    from opt_suite.store.files import USAGE_FILE

    with ResultsStore(directory, spec_hash_) as store:
        info = store.run()
        spec = parse_spec(store.spec_yaml(), f"{directory} (the spec stored by run {info.run_id})")
        if spec_hash(spec) != info.spec_hash:
            raise _Problem(
                f"{directory}: the stored spec no longer hashes to {info.spec_hash[:12]} (the spec"
                f" format changed since the run): {REPLAY_DIFFERS}"
            )
        components = resolve_components(spec)
        if not components.learner.counts_usage:
            raise _Problem(
                f"{directory}: the learner {spec.evaluation.learner!r} does not count option usage"
                " (smdp_q_learning does)"
            )
        try:
            methods, seeds = select_methods_and_seeds(
                store.methods(), store.seeds(), args.methods, args.seeds
            )
        except ValueError as exc:
            raise _Problem(str(exc)) from None
        plan = plan_spec(spec, seeds, components)[3]
        stored_cells = [
            c
            for c in store.cells()
            if c.kind == Stage.EVALUATION and c.method in methods and c.seed in seeds
        ]
        planned = {c.cell_id for c in plan.cells if c.stage is Stage.EVALUATION}
        done = {c.cell_id for c in stored_cells if c.status == "done"}
        if done - planned:
            raise _Problem(
                f"{directory}: {len(done - planned)} stored evaluation cells are not those the "
                f"stored spec plans with the current code (their inputs changed): {REPLAY_DIFFERS}"
            )
        stored: dict[tuple[str, int, int], tuple[np.ndarray, np.ndarray]] = {}
        for method in methods:
            rows = store.episodes(method)
            for seed_task in {(r.seed, r.task) for r in rows}:
                mine = [r for r in rows if (r.seed, r.task) == seed_task]
                stored[(method, *seed_task)] = (
                    np.array([r.ret for r in mine], dtype=np.float64),
                    np.array([r.steps for r in mine], dtype=np.int64),
                )
        recorded = {c: store.recorded_file(c, USAGE_FILE) for c in sorted(done)}
        option_files: dict[tuple[str, int], bytes] = {}
        for method in methods:
            for seed in seeds:
                path = store.option_set_file(method, seed)
                if path is not None:
                    option_files[(method, seed)] = path.read_bytes()
    sizes = {key: len(from_bytes(data)) for key, data in option_files.items()}
    with_options = [m for m in methods if any(sizes.get((m, s), 0) for s in seeds)]
    notes = []
    left_out = [m for m in methods if m not in with_options]
    if left_out:
        notes.append(f"left out (no options on any seed): {', '.join(left_out)}")
    runs, replayed, reused, read, started = [], 0, 0, 0, time.perf_counter()
    missing = 0
    for cell in plan.cells:
        if cell.stage is not Stage.EVALUATION or cell.method not in with_options:
            continue
        if cell.cell_id not in done:
            missing += 1
            continue
        assert cell.task is not None, cell.label
        task = plan.test_tasks[cell.task].index
        key = (cell.method or "", cell.seed, task)
        path = recorded.get(cell.cell_id)
        if path is not None and not args.replay:
            usage = OptionUsage.load(path)  # counted by the run itself, with these very episodes
            read += 1
        else:
            if cell.cell_id in cache:
                outcome = cache[cell.cell_id]
                reused += 1
            else:
                data = option_files[(cell.method, cell.seed)]
                job = evaluation_job(spec, components, plan, cell, data, record_usage=True)
                outcome = execute(job)
                if outcome.error:
                    raise _Problem(f"replay of {cell.label} failed: {outcome.error}")
                cache[cell.cell_id] = outcome
                replayed += 1
            [(_, returns, steps, _frames)] = outcome.episodes
            [usage] = outcome.usage
            _check_equal(cell.label, stored.get(key), returns, steps)
        if key not in stored or not np.array_equal(
            np.asarray(usage.steps).sum(axis=1), stored[key][1]
        ):
            raise _Problem(
                f"{cell.label}: its option counts do not add up to the stored episodes' steps"
            )
        runs.append(
            RunUsage(
                cell.method or "",
                cell.seed,
                int(task),
                tuple(usage.names),
                int(usage.num_primitives),
                np.asarray(usage.calls),
                np.asarray(usage.steps),
            )
        )
    wall = time.perf_counter() - started
    if missing:
        notes.append(
            f"{missing} evaluation cells of these methods are not done (failed or not run yet) "
            "and are left out"
        )
    if read:
        notes.append(
            f"{read} evaluation cells counted their option choices when they ran (read from "
            f"cells/<id>/{USAGE_FILE})"
        )
    if replayed or reused:
        notes.append(
            f"replayed {replayed} evaluation cells in {wall:.1f} s"
            + (f" ({reused} shared with another variant)" if reused else "")
            + f" from the stored option sets with the current code (git {_commit()}; the run's: "
            f"{info.git_commit or 'unknown'}); every replayed episode's return and steps equal "
            "the stored ones exactly"
        )
    return runs, notes, spec


def _check_equal(label: str, stored: Any, returns: Any, steps: Any) -> None:
    """Raise _Problem unless the replayed returns and steps equal the stored ones exactly."""
    import numpy as np

    if stored is None:
        raise _Problem(f"{label}: the store has no episodes for it: {REPLAY_DIFFERS}")
    old_returns, old_steps = stored
    if old_returns.shape != returns.shape:
        raise _Problem(
            f"{label}: {old_returns.size} stored episodes, {returns.size} replayed: "
            f"{REPLAY_DIFFERS}"
        )
    differs = np.flatnonzero((old_returns != returns) | (old_steps != steps))
    if differs.size:
        e = int(differs[0])
        raise _Problem(
            f"{label}: episode {e}: stored return {old_returns[e]!r} in {old_steps[e]} steps, "
            f"replayed {returns[e]!r} in {int(steps[e])} steps ({differs.size} episodes differ):"
            f" {REPLAY_DIFFERS}"
        )


def _commit() -> str:
    from opt_suite.store.provenance import collect_provenance

    return str(collect_provenance().get("git_commit") or "unknown")


def _views(
    directory: Path, names: list[str] | None, spec: str | None = None
) -> list[tuple[str | None, str | None, Path]]:
    """(variant name, spec hash, output folder) to replay: the run, or the chosen variants."""
    from opt_suite.report.sweep import is_sweep_run, read_manifest
    from opt_suite.store.reader import select_spec

    if not is_sweep_run(directory):
        if names:
            raise _Problem(f"--variant: {directory} is not a sweep run (it has no sweep.json)")
        return [(None, None if spec is None else select_spec(directory, spec), directory)]
    if spec is not None:
        raise _Problem(f"--spec: {directory} is a sweep run; choose its variants with --variant")
    variants = {v["name"]: v["spec_hash"] for v in read_manifest(directory)["variants"]}
    for name in names or []:
        if name not in variants:
            raise _Problem(f"--variant {name!r}: the sweep has {', '.join(variants)}")
    chosen = names or list(variants)
    return [(name, variants[name], directory / "variants" / name) for name in chosen]


def _write(directory: Path, args: argparse.Namespace) -> list[Path]:
    from opt_suite.report.option_usage import write_usage_files
    from opt_suite.store import StoreError

    written: list[Path] = []
    cache: dict[str, Any] = {}
    views = _views(directory, args.variant, args.spec)
    for variant, hash_, out in views:
        try:
            runs, notes, spec = _replay_view(directory, hash_, args, cache)
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
        written += write_usage_files(runs, out, fraction, title, notes, args.per_episode)
    return written


def run(args: argparse.Namespace) -> int:
    """Replay, verify and write the files; 0 on success, 2 otherwise."""
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
    except (_Problem, StoreError, RegistryError, ReportDataError, ValueError) as exc:
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
