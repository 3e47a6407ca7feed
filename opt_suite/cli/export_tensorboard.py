"""``opt-suite export-tensorboard RUN_DIR [--out DIR] [--spec NAME_OR_HASH]``: TensorBoard logs.

Writes one TensorBoard run per (method entry, seed, test task), named as CleanRL names its runs,
``{env_id}__{exp_name}__{seed}__{timestamp}``: the test task's id (``fourrooms-13x13-test-3``),
the method entry, the seed index and the run's start time from the store (not the export's wall
time, so that exporting twice writes the same bytes). Each holds CleanRL's tags:

- ``charts/episodic_return`` and ``charts/episodic_length`` at the global step, the env steps the
  test-time learner had taken when the episode ended;
- ``charts/episodic_return_frames``: the same returns at the emulator frames used by then, when
  the family skips frames (Atari), so that tasks with different frame skips share an axis.

One more run per (method entry, seed) that recorded discovery curves,
``discovery__{exp_name}__{seed}__{timestamp}``, holds each curve as ``discovery/<name>`` at its
epoch: Algorithm 1's Ĵ and its terms (``discovery/jhat``, ``prob``, ``terminations``, ``kl``,
``option_round``; the paper's Fig. 1a) or option-critic's interaction curves.

The values are tensor summaries (as ``tf.summary.scalar`` writes them): TensorBoard's Scalars
dashboard shows them; the classic ``EventAccumulator`` lists them under ``tensors``, not
``scalars`` (``docs/cli.md`` shows how to read them). The format and the writer are in
:mod:`opt_suite.report.tensorboard`.

A sweep run's variants are exported one at a time (``--spec`` with a variant's hash prefix).
Only a complete run is exported (every planned cell done, the run finished): a missing, incomplete
or damaged run exits 2 with one line. DIR is written only when it is absent, empty, or holds an
earlier export whose manifest (``export.json``, the SHA-256 of every file) still matches every
file in it; anything else exits 2 and nothing is deleted. The logs are written into a temporary
folder beside DIR and renamed into place at the end, so DIR never holds a partial export.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from opt_suite.report.tensorboard import MARKER, run_name

__all__ = ["add_arguments", "run", "run_name", "MARKER"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare RUN_DIR, --out and --spec."""
    parser.add_argument("directory", metavar="RUN_DIR", type=Path, help="a run's --out folder")
    parser.add_argument(
        "--out",
        type=Path,
        help="folder of the logs (default: RUN_DIR/tensorboard); written only when absent, empty "
        "or an unchanged earlier export",
    )
    parser.add_argument(
        "--spec",
        metavar="NAME_OR_HASH",
        help="in a directory several specs ran in, export this one (name or hash prefix)",
    )


def run(args: argparse.Namespace) -> int:
    """Export; 0 on success, 2 on bad input (one line, nothing written)."""
    from opt_suite.report.sweep import whole_sweep_problem
    from opt_suite.report.tensorboard import collect, write_export
    from opt_suite.run_view import RunView
    from opt_suite.store import StoreError

    out = args.out if args.out is not None else args.directory / "tensorboard"
    note = None
    try:
        if not args.directory.is_dir():
            raise StoreError(f"{args.directory}: no such directory")
        problem = None if args.spec else whole_sweep_problem(args.directory, "export")
        if problem is not None:
            raise StoreError(problem)
        with RunView(args.directory, args.spec) as view:
            note = view.which()
            runs, stamp = collect(view)
            spec = (view.info.spec_name, view.info.spec_hash)
        write_export(out, runs, stamp, spec)
    except StoreError as exc:
        print(f"opt-suite export-tensorboard: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"opt-suite export-tensorboard: cannot write {out}: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # a damaged store must not print a traceback
        message = f"cannot export {args.directory}: {type(exc).__name__}: {exc}"
        print(f"opt-suite export-tensorboard: {message}", file=sys.stderr)
        return 2
    if note is not None:
        print(f"note: {note}")
    print(f"wrote {len(runs)} TensorBoard runs to {out} (tensorboard --logdir {out})")
    return 0
