"""``opt-suite diagnose RUN_DIR``: Ĵ of every option set of a run, its terms, and who explains what.

For every discovery cell of the run (every method entry × seed) this scores the option set on that
seed's demonstrations with one objective (``--lambda2``, ``--lambda1``, ``--likelihood``; the
paper spec's offline-options values by default): Ĵ and its terms under the method's own policy over
options (Algorithm 1 stores it in its cell as ``policy.npz``; other methods have none: "—") and
under π fitted as a table with the options frozen, and per demonstration which option explains
which segment and where terminations fall (:mod:`opt_suite.analysis.diagnosis`). It writes
``diagnose.md`` and ``diagnose.json`` into RUN_DIR and changes nothing else: no cell is touched.

    opt-suite diagnose RUN_DIR [--methods NAME...] [--seeds LIST] [--spec NAME_OR_HASH]
                               [--lambda2 X] [--lambda1 X] [--likelihood log_prob_per_step|prob]

``--lambda1`` and ``--lambda2`` must be finite and in [0, 1e6] (checked before anything is read).

Exit status: 0 written; 2 on bad input — no run in RUN_DIR, a run without demonstrations or
option sets, a discovery or demonstrations cell not done or damaged (its files no longer match
their digests), a run whose stored cells the current code would not plan (the code changed since:
rerun the spec), or a family whose observations are not state indices.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

from opt_suite.run_view import RunViewError
from opt_suite.stages import Stage

__all__ = ["add_arguments", "run"]

CODE_CHANGED = "the code changed since the run; rerun the spec, then diagnose"

# Ĵ's weights are checked before anything is built: NaN or inf would make every score NaN, and a
# weight past 1e6 (the paper uses λ2 = 100) overflows the float32 objective to inf.
MAX_WEIGHT = 1e6


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare RUN_DIR, the selections and the objective's weights."""
    parser.add_argument("directory", metavar="RUN_DIR", type=Path,
                        help="the --out directory of `opt-suite run`")  # fmt: skip
    parser.add_argument("--methods", nargs="+", metavar="NAME",
                        help="method entries (default: every entry)")  # fmt: skip
    parser.add_argument("--seeds", metavar="LIST", help="seed indices, e.g. '0-4' or '0,2'")
    parser.add_argument(
        "--spec",
        metavar="NAME_OR_HASH",
        help="in a directory several specs ran in, diagnose this one (name or hash prefix; "
        "default: the latest run's spec)",
    )
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


def _inputs(
    directory: Path, args: argparse.Namespace
) -> tuple[Any, list[tuple[Any, ...]], list[str]]:
    """What to diagnose: the run's view (closed by then), the jobs, the degenerate options.

    A job per (method, seed): (method, seed, options, demonstrations, pi).
    """
    from opt_suite.methods.offline_options.method import POLICY_FILE, load_policy
    from opt_suite.options import load_option_set
    from opt_suite.run_view import RunView

    with RunView(directory, args.spec, remedy=CODE_CHANGED) as view:
        spec = view.spec()
        methods, seeds = view.select(args.methods, args.seeds)
        check = view.check_cells([Stage.DEMONSTRATIONS, Stage.DISCOVERY], methods, seeds)
        if not any(c.stage == Stage.DEMONSTRATIONS for c in check.planned):
            raise RunViewError(
                f"{directory}: the run has no demonstrations (no method of spec "
                f"{spec.name!r} uses them), so there is nothing to score option sets on"
            )
        view.require_done([Stage.DEMONSTRATIONS, Stage.DISCOVERY], methods, seeds)
        discovered = {(c.method, c.seed): c.cell_id for c in check.planned}
        jobs = []
        for seed in seeds:
            demonstrations = view.store.demonstrations(seed)
            if not demonstrations:
                raise RunViewError(f"{directory}: seed {seed} has no demonstrations")
            for method in methods:
                path = view.store.option_set_file(method, seed)
                if path is None:
                    raise RunViewError(
                        f"{directory}: discovery of {method!r}, seed {seed}: no option set"
                    )
                policy = view.store.recorded_file(discovered[(method, seed)], POLICY_FILE)
                pi = None if policy is None else load_policy(policy)
                jobs.append((method, seed, load_option_set(path), demonstrations, pi))
        return view, jobs, _degenerate(view, jobs)


def diagnose_run(directory: Path, args: argparse.Namespace) -> tuple[Path, Path, float]:
    """Score every option set, write ``diagnose.md`` and ``diagnose.json``; (paths, seconds)."""
    from opt_suite._tf import tensorflow

    tensorflow()  # quietly, before the objective imports it
    from opt_suite.analysis.diagnosis import diagnose_option_set
    from opt_suite.objective import JhatConfig
    from opt_suite.report.diagnose import render_markdown, to_json
    from opt_suite.store.files import write_text_atomic

    started = time.perf_counter()
    view, jobs, degenerate = _inputs(directory, args)
    info = view.info
    if (which := view.which()) is not None:
        print(f"note: {which}")
    if not jobs:
        raise RunViewError(f"{directory}: no option set to diagnose")
    config = JhatConfig(lambda1=args.lambda1, lambda2=args.lambda2, likelihood=args.likelihood)
    for line in degenerate:
        print(f"warning: degenerate option: {line}", file=sys.stderr)
    diagnoses = []
    for method, seed, options, demonstrations, pi in jobs:
        if options.kind != "tabular":
            raise RunViewError(
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
        "degenerate_options": degenerate,
    }
    md, js = directory / "diagnose.md", directory / "diagnose.json"
    write_text_atomic(md, render_markdown(diagnoses, header))
    write_text_atomic(js, json.dumps(to_json(diagnoses, header), indent=1) + "\n")
    return md, js, seconds


def _degenerate(view: Any, jobs: list[tuple[Any, ...]]) -> list[str]:
    """The degenerate options of the diagnosed option sets (:mod:`opt_suite.report.degenerate`)."""
    from opt_suite.report.degenerate import degenerate_options

    seeds = {job[1] for job in jobs}
    cells = [c for c in view.store.cells() if c.seed in seeds]
    demos = {job[1]: job[3] for job in jobs}
    return degenerate_options(view.store, cells, demos, {job[0] for job in jobs})


def weights_problem(lambda1: float, lambda2: float) -> str | None:
    """Why ``--lambda1``/``--lambda2`` cannot weight Ĵ (one line), or None when both can."""
    for flag, value in (("--lambda1", lambda1), ("--lambda2", lambda2)):
        if not (math.isfinite(value) and 0 <= value <= MAX_WEIGHT):
            return (
                f"{flag} {value!r}: --lambda1 and --lambda2 must be >= 0 and <= {MAX_WEIGHT:g}"
                " (finite numbers)"
            )
    return None


def run(args: argparse.Namespace) -> int:
    """Diagnose and write; 0 on success, 2 on bad input."""
    from opt_suite.registry import RegistryError
    from opt_suite.store import StoreError

    if not args.directory.is_dir():
        print(f"opt-suite diagnose: {args.directory}: no such directory", file=sys.stderr)
        return 2
    problem = weights_problem(args.lambda1, args.lambda2)
    if problem is not None:
        print(f"opt-suite diagnose: {problem}", file=sys.stderr)
        return 2
    try:
        md, js, seconds = diagnose_run(args.directory, args)
    except (StoreError, RegistryError, ValueError) as exc:
        print(f"opt-suite diagnose: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"opt-suite diagnose: cannot write: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {md} and {js.name} ({seconds:.1f} s)")
    return 0
