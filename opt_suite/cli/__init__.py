"""The ``opt-suite`` command line.

Each subcommand lives in its own module ``opt_suite.cli.<name>`` exposing ``add_arguments(parser)``
and ``run(args) -> int``; it is imported only when chosen, so commands that do not train
(``validate``, ``list``, ``report``, ``compare``) never import TensorFlow and answer in well under a
second.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys

from opt_suite.files_guard import InputError

# name -> (module, one-line help). Order is the order shown by --help.
COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("opt_suite.cli.run", "run a spec's whole protocol and write the leaderboard"),
    "validate": ("opt_suite.cli.validate", "check a spec and report every problem at once"),
    "list": ("opt_suite.cli.list_cmd", "list task families, methods, learners and bundled specs"),
    "describe": (
        "opt_suite.cli.describe",
        "one family, method, learner or demonstration source: params, capabilities, entry point",
    ),
    "report": ("opt_suite.cli.report", "(re)write the leaderboard, curves and index.html of a run"),
    "merge-stores": (
        "opt_suite.cli.merge_stores",
        "merge the run directories of a spec's shards (run --shard i/N) into one run",
    ),
    "compare": ("opt_suite.cli.compare", "gate CI: fail when results regress against a baseline"),
    "gate-rates": (
        "opt_suite.cli.gate_rates",
        "measure the gate's false-alarm rate and power on a run of fresh seeds of the spec",
    ),
    "show-options": ("opt_suite.cli.show_options", "draw the options of a run as PNG pictures"),
    "option-usage": (
        "opt_suite.cli.option_usage",
        "replay a run's evaluations to count how often options were chosen and how long they ran",
    ),
    "export-tensorboard": (
        "opt_suite.cli.export_tensorboard",
        "write a run's returns and discovery curves as TensorBoard logs",
    ),
    "diagnose": (
        "opt_suite.cli.diagnose",
        "score every option set of a run on J-hat, term by term, and show who explains what",
    ),
    "export-demos": ("opt_suite.cli.export_demos", "write a run's demonstrations as Minari data"),
    "validate-objective": (
        "opt_suite.cli.validate_objective",
        "reproduce the paper's Appendix D check of the exact objective against Monte Carlo",
    ),
}


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser: the command names and their one-line help."""
    parser = argparse.ArgumentParser(
        prog="opt-suite",
        description="A declarative benchmark suite for option discovery in multi-task RL.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (_, help_text) in COMMANDS.items():
        sub.add_parser(name, help=help_text, description=help_text)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one ``opt-suite`` command; returns its exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    # Parse the command name first, then let only that command's module add its arguments.
    if argv and argv[0] in COMMANDS:
        module = importlib.import_module(COMMANDS[argv[0]][0])
        sub = argparse.ArgumentParser(prog=f"opt-suite {argv[0]}", description=COMMANDS[argv[0]][1])
        module.add_arguments(sub)
        args = sub.parse_args(argv[1:])
        try:
            return int(module.run(args) or 0)
        except InputError as exc:
            # A missing, damaged or wrong-type input (opt_suite.files_guard; StoreError is one,
            # and SQLite's errors on a store are StoreDatabaseError, a StoreError):
            # whichever layer noticed it, the user gets one line naming it, and exit 2.
            print(f"opt-suite {argv[0]}: {exc}", file=sys.stderr)
            return 2
        except KeyboardInterrupt as exc:
            # SIGTERM arrives as Terminated (a KeyboardInterrupt, see cli.run): exit 128 + 15.
            signum = getattr(exc, "signum", signal.SIGINT)
            print(f"interrupted ({signal.Signals(signum).name})", file=sys.stderr)
            return 128 + int(signum)
        except BrokenPipeError:
            # `opt-suite list --json | head`: the reader left; say nothing more, like cat does.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 141
        except Exception as exc:
            from opt_suite.spec import SpecError  # imported only here: the spec loader is not light

            if not isinstance(exc, SpecError):
                raise
            # A spec a command did not expect to fail (e.g. the one stored in a run directory):
            # its located problems, one line each, and exit 2 like `validate`.
            print("\n".join(exc.problems), file=sys.stderr)
            print(f"opt-suite {argv[0]}: the spec does not load", file=sys.stderr)
            return 2
    parser.parse_args(argv)  # prints help / usage error and exits
    return 2


if __name__ == "__main__":
    sys.exit(main())
