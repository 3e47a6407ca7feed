"""``opt-suite validate-objective``: the paper's Appendix D check of the exact objective.

On the chain MDPs of a spec (default: the bundled ``chain-validation``, 10 chains of 7 states) it
draws 4 random options and a policy over options per chain, picks a trajectory, and compares the
exact Pr(h) and expected terminations (Theorems 1–2) with Monte Carlo estimates from ``--trials``
sampled paths (see :mod:`opt_suite.objective.appendix_d`). Prints a table, or with ``--json`` a JSON
list of rows. Exit status: 0 when every exact value is within ``--max-z`` Monte Carlo standard
errors of its estimate, 1 otherwise, 2 for a bad spec or argument.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from opt_suite.cli.numbers import integer, real

#: Below this many reproducing paths the termination SE is too unreliable to judge a z-score.
MIN_MATCHES = 10


MAX_TRIALS = 10_000_000  # ~a minute per chain; the Monte Carlo error is already ~1e-4 there


# Episodes sampled per chain to find the likeliest; each is a short chain episode.
MAX_CANDIDATES = 1_000_000
MAX_SEED = 2**32 - 1  # numpy SeedSequence entropy words are 32-bit


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the command's arguments."""
    parser.add_argument(
        "--spec", default="chain-validation", help="spec of chain tasks (file or bundled name)"
    )
    parser.add_argument("--json", action="store_true", help="print the rows as a JSON list")
    parser.add_argument(
        "--seed",
        type=integer(0, MAX_SEED),
        default=0,
        help="seed of options, trajectories and MC",
    )
    parser.add_argument(
        "--trials",
        type=integer(1, MAX_TRIALS),
        default=10_000,
        help=f"Monte Carlo paths per chain (1..{MAX_TRIALS})",
    )
    parser.add_argument(
        "--candidates",
        type=integer(1, MAX_CANDIDATES),
        default=1000,
        help="episodes sampled per chain; the likeliest is checked (1: the paper's single sample)",
    )
    parser.add_argument(
        "--max-z",
        type=real(0.0, 100.0, open_low=True),
        default=4.0,
        help="largest |z| still counted as agreement, in (0, 100]",
    )


def _format(rows) -> str:
    header = (
        f"{'trajectory':<18} {'|h|':>3} {'hits':>5} {'MC Pr(h)':>17} {'Pr(h)':>9} {'z':>5}  "
        f"{'MC E[#T | h]':>15} {'posterior':>9} {'filtering':>9} {'z':>5}"
    )
    lines = [header, "-" * len(header)]
    for r in rows:
        mc_terms = (
            f"{r.mc_terminations:.3f} ± {r.mc_terminations_se:.3f}" if r.matches >= 2 else "n/a"
        )
        z_terms = "" if math.isnan(r.z_terminations) else f"{r.z_terminations:+.1f}"
        lines.append(
            f"{r.task:<18} {r.length:>3} {r.matches:>5} "
            f"{r.mc_prob:>8.5f} ± {r.mc_prob_se:.5f} {r.prob:>9.5f} {r.z_prob:>+5.1f}  "
            f"{mc_terms:>15} {r.posterior_terminations:>9.3f} {r.filtering_terminations:>9.3f} "
            f"{z_terms:>5}"
        )
    lines.append(
        "MC E[#T | h] estimates the posterior Σ_t Pr(T_t=1 | h); Theorem 1's filtering "
        "Σ_t Pr(T_t=1 | h_t) is a different quantity (the gaps in the paper's table)."
    )
    return "\n".join(lines)


def _setting(spec: str) -> tuple[Any, list[Any], int]:
    """The family, its train + test tasks and the episode cap of ``spec`` (path or bundled name)."""
    from opt_suite import registry
    from opt_suite.spec import find_spec, load_spec

    loaded = load_spec(find_spec(str(spec)))
    family = registry.load(registry.FAMILIES, loaded.family.name)(loaded.family.params)
    t = loaded.tasks
    train, test = family.make_tasks(t.vary, t.list, t.count, t.train, t.test, t.seed)
    return family, [*train, *test], int(getattr(loaded.family.params, "max_episode_steps", 100))


def run(args: argparse.Namespace) -> int:
    """Print the Appendix D table; 0 if exact and Monte Carlo values agree, 1 if not, 2 on error."""
    from opt_suite.spec import SpecError

    if args.trials < 1 or args.candidates < 1:
        print(
            f"validate-objective: --trials and --candidates must be >= 1, "
            f"got {args.trials} and {args.candidates}",
            file=sys.stderr,
        )
        return 2
    from opt_suite.objective.appendix_d import validation_rows  # imports TensorFlow

    try:
        family, tasks, max_steps = _setting(args.spec)
        rows = validation_rows(family, tasks, max_steps, args.seed, args.trials, args.candidates)
    except SpecError as exc:
        print("\n".join(exc.problems), file=sys.stderr)
        return 2
    except (ValueError, FileNotFoundError) as exc:
        print(f"validate-objective: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps([r.as_dict() for r in rows], indent=2))
    else:
        print(_format(rows))
    bad = [r.task for r in rows if not agrees(r, args.max_z)]
    if bad:
        print(
            f"disagreement beyond {args.max_z} standard errors: {', '.join(bad)}", file=sys.stderr
        )
        return 1
    return 0


def agrees(row, max_z: float) -> bool:
    """Whether a row's exact values are within ``max_z`` MC standard errors of the estimates."""
    if abs(row.z_prob) > max_z:
        return False
    if row.matches >= MIN_MATCHES and not math.isnan(row.z_terminations):
        return abs(row.z_terminations) <= max_z
    return True
