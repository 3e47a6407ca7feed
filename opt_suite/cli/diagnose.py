"""``opt-suite diagnose RUN_DIR``: Ĵ of every option set of a run, its terms, and who explains what.

For every discovery cell of the run (every method entry × seed) this scores the option set on that
seed's demonstrations with one objective (``--lambda2``, ``--lambda1``, ``--likelihood``; the
paper spec's offline-options values by default): Ĵ and its terms under the method's own policy over
options (Algorithm 1 stores it in its cell as ``policy.npz``; other methods have none: "—") and
under π fitted as a table with the options frozen, and per demonstration which option explains
which segment and where terminations fall (:mod:`opt_suite.report.diagnose`). It writes
``diagnose.md`` and ``diagnose.json`` into RUN_DIR and changes nothing else: no cell is touched.

    opt-suite diagnose RUN_DIR [--methods NAME...] [--seeds LIST] [--lambda2 X] [--lambda1 X]
                               [--likelihood log_prob_per_step|prob]

Exit status: 0 written; 2 on bad input — no run in RUN_DIR, a run without demonstrations or
option sets, a discovery or demonstrations cell not done or damaged (its files no longer match
their digests), a run whose stored cells the current code would not plan (the code changed since:
rerun the spec), or a family whose observations are not state indices.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["add_arguments", "run"]

CODE_CHANGED = "the code changed since the run; rerun the spec, then diagnose"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare RUN_DIR, the selections and the objective's weights."""
    parser.add_argument("directory", metavar="RUN_DIR", type=Path,
                        help="the --out directory of `opt-suite run`")  # fmt: skip
    parser.add_argument("--methods", nargs="+", metavar="NAME",
                        help="method entries (default: every entry)")  # fmt: skip
    parser.add_argument("--seeds", metavar="LIST", help="seed indices, e.g. '0-4' or '0,2'")
    parser.add_argument(
        "--lambda2", type=float, default=100.0, help="likelihood term's weight (default 100)"
    )
    parser.add_argument("--lambda1", type=float, default=0.0, help="KL term's weight (default 0)")
    parser.add_argument(
        "--likelihood",
        choices=("log_prob_per_step", "prob"),
        default="log_prob_per_step",
        help="Ĵ's first term: log Pr(h)/|h| (default) or Pr(h)",
    )


class _Problem(Exception):
    """Bad input, reported as one line (exit 2)."""


def _inputs(directory: Path, args: argparse.Namespace) -> tuple[Any, list[tuple[Any, ...]]]:
    """The run's info and, per (method, seed): (method, seed, options, demonstrations, pi)."""
    from opt_suite.cli.run import select_methods_and_seeds
    from opt_suite.methods.offline_options.method import POLICY_FILE, load_policy
    from opt_suite.options import load_option_set
    from opt_suite.runner.protocol import plan_spec, resolve_components
    from opt_suite.spec import parse_spec, spec_hash
    from opt_suite.store import ResultsStore

    with ResultsStore(directory) as store:
        info = store.run()
        spec = parse_spec(store.spec_yaml(), f"{directory} (the spec stored by run {info.run_id})")
        if spec_hash(spec) != info.spec_hash:
            raise _Problem(
                f"{directory}: the stored spec no longer hashes the same: {CODE_CHANGED}"
            )
        try:
            methods, seeds = select_methods_and_seeds(
                store.methods(), store.seeds(), args.methods, args.seeds
            )
        except ValueError as exc:
            raise _Problem(str(exc)) from None
        stored = {(c.kind, c.method, c.seed): c for c in store.cells()}
        planned = plan_spec(spec, seeds, resolve_components(spec))[3]
        wanted_cells = [
            c
            for c in planned.cells
            if c.kind == "demonstrations" or (c.kind == "discovery" and c.method in methods)
        ]
        if not any(c.kind == "demonstrations" for c in wanted_cells):
            raise _Problem(
                f"{directory}: the run has no demonstrations (no method of spec "
                f"{spec.name!r} uses them), so there is nothing to score option sets on"
            )
        for cell in wanted_cells:
            have = stored.get((cell.kind, cell.method, cell.seed))
            if have is None or have.status != "done":
                state = "not run" if have is None else have.status
                raise _Problem(f"{directory}: {cell.label} is {state}: the run is incomplete")
            if have.cell_id != cell.cell_id:
                raise _Problem(
                    f"{directory}: {cell.label} was stored as cell {have.cell_id[:12]}, the "
                    f"current code plans {cell.cell_id[:12]}: {CODE_CHANGED}"
                )
        jobs = []
        for seed in seeds:
            demonstrations = store.demonstrations(seed)
            if not demonstrations:
                raise _Problem(f"{directory}: seed {seed} has no demonstrations")
            for method in methods:
                path = store.option_set_file(method, seed)
                if path is None:
                    raise _Problem(
                        f"{directory}: discovery of {method!r}, seed {seed}: no option set"
                    )
                found = stored[("discovery", method, seed)]
                policy = store.recorded_file(found.cell_id, POLICY_FILE)
                pi = None if policy is None else load_policy(policy)
                jobs.append((method, seed, load_option_set(path), demonstrations, pi))
    return info, jobs


def diagnose_run(directory: Path, args: argparse.Namespace) -> tuple[Path, Path, float]:
    """Score every option set, write ``diagnose.md`` and ``diagnose.json``; (paths, seconds)."""
    from opt_suite._tf import tensorflow

    tensorflow()  # quietly, before the objective imports it
    from opt_suite.objective import JhatConfig
    from opt_suite.report.diagnose import diagnose_option_set, render_markdown, to_json
    from opt_suite.store.files import write_text_atomic

    started = time.perf_counter()
    info, jobs = _inputs(directory, args)
    if not jobs:
        raise _Problem(f"{directory}: no option set to diagnose")
    config = JhatConfig(lambda1=args.lambda1, lambda2=args.lambda2, likelihood=args.likelihood)
    diagnoses = []
    for method, seed, options, demonstrations, pi in jobs:
        if options.kind != "tabular":
            raise _Problem(
                f"{directory}: {method!r}, seed {seed}: a {options.kind!r} option set; diagnose "
                "scores tabular option sets (state-index observations) only"
            )
        diagnoses.append(diagnose_option_set(method, seed, options, demonstrations, config, pi))
    seconds = time.perf_counter() - started
    header = {
        "spec": info.spec_name,
        "spec_hash": info.spec_hash,
        "run_dir": str(directory),
        "objective": {
            "lambda1": config.lambda1,
            "lambda2": config.lambda2,
            "likelihood": config.likelihood,
        },
        "wall_time_s": round(seconds, 1),
    }
    md, js = directory / "diagnose.md", directory / "diagnose.json"
    write_text_atomic(md, render_markdown(diagnoses, header))
    write_text_atomic(js, json.dumps(to_json(diagnoses, header), indent=1) + "\n")
    return md, js, seconds


def run(args: argparse.Namespace) -> int:
    """Diagnose and write; 0 on success, 2 on bad input."""
    from opt_suite.registry import RegistryError
    from opt_suite.spec import SpecError
    from opt_suite.store import StoreError

    if not args.directory.is_dir():
        print(f"opt-suite diagnose: {args.directory}: no such directory", file=sys.stderr)
        return 2
    if args.lambda2 < 0 or args.lambda1 < 0:
        print("opt-suite diagnose: --lambda1 and --lambda2 must be >= 0", file=sys.stderr)
        return 2
    try:
        md, js, seconds = diagnose_run(args.directory, args)
    except SpecError as exc:
        print(f"opt-suite diagnose: the stored spec does not load ({exc.problems[0]}): "
              f"{CODE_CHANGED}", file=sys.stderr)  # fmt: skip
        return 2
    except (_Problem, StoreError, RegistryError, ValueError) as exc:
        print(f"opt-suite diagnose: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"opt-suite diagnose: cannot write: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {md} and {js.name} ({seconds:.1f} s)")
    return 0
