"""``opt-suite export-demos RUN_DIR [--out DIR] [--seed N]...``: a run's demonstrations as Minari.

Each seed's demonstrations (the ones every method of the run learned from) become one Minari
dataset ``<spec name>/demos-seed<seed>-v0`` under ``--out`` (default ``RUN_DIR/minari``). A spec
can read one back with ``demonstrations: {source: minari, params: {dataset: PATH}}``. Exit 2 on bad
input (no run there, a damaged store, no demonstrations stored, an unknown seed, an ``--out`` that
is a file or cannot be written, a dataset folder that is not an earlier export of the suite: a
user's file in it or a symlink; nothing is then deleted). Observations are stored as raw arrays
(never JPEG), so Atari frames read back bit-identical.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare RUN_DIR, --out and --seed."""
    from opt_suite.cli.numbers import MAX_INDEX, integer

    parser.add_argument("directory", metavar="RUN_DIR", type=Path, help="a run's --out folder")
    parser.add_argument("--out", type=Path, help="where datasets go (default: RUN_DIR/minari)")
    parser.add_argument(
        "--seed", type=integer(0, MAX_INDEX), action="append", help="seed index (default: all)"
    )
    parser.add_argument(
        "--spec",
        metavar="NAME_OR_HASH",
        help="the spec whose demonstrations to export, by name or hash prefix (a directory shared "
        "by several specs; default: the latest run's)",
    )


def run(args: argparse.Namespace) -> int:
    """Write one dataset per seed; 2 on bad input."""
    from opt_suite import registry
    from opt_suite.demonstrations.minari_io import (
        dataset_id,
        export_demonstrations,
        export_problem,
    )
    from opt_suite.files_guard import output_dir
    from opt_suite.run_view import RunView
    from opt_suite.store import StoreError

    try:
        with RunView(args.directory, args.spec) as view:
            spec = view.spec()
            seeds = args.seed or view.store.seeds()
            demos = {seed: view.store.demonstrations(seed) for seed in seeds}
    except (StoreError, OSError) as exc:
        print(f"opt-suite export-demos: error: {exc}", file=sys.stderr)
        return 2
    missing = [seed for seed, d in demos.items() if not d]
    if missing:
        print(
            f"opt-suite export-demos: error: {args.directory} holds no demonstrations for seed "
            f"{', '.join(map(str, missing))} (only methods that learn from demonstrations make "
            "them; is the run complete?)",
            file=sys.stderr,
        )
        return 2
    # After the store is read: the default --out lies in RUN_DIR, which must not be created.
    out = output_dir(args.out or args.directory / "minari", "the export folder (--out)")
    # Every seed's folder is checked before any is written: a refusal changes none of them.
    for seed in demos:
        problem = export_problem(out.resolve(), dataset_id(spec.name, seed))
        if problem is not None:
            print(f"opt-suite export-demos: error: {problem}", file=sys.stderr)
            return 2
    family = registry.load(registry.FAMILIES, spec.family.name)(spec.family.params)
    for seed, trajectories in demos.items():
        name = dataset_id(spec.name, seed)
        folder = export_demonstrations(
            trajectories or [],
            family,
            out,
            name,
            f"demonstrations of spec {spec.name!r}, seed {seed}, exported by opt-suite",
        )
        print(f"wrote {folder} ({len(trajectories or [])} episodes)")
    return 0
