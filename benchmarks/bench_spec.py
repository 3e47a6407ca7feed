"""How fast specs are read and the non-training commands answer.

``opt-suite validate`` and ``opt-suite list`` must answer in well under a second (they never import
TensorFlow); most of a fresh process goes to importing numpy and gymnasium through the registered
family modules, reading the spec itself takes milliseconds.

    pytest benchmarks/bench_spec.py -n 0 --benchmark-only
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from opt_suite.spec import canonical_yaml, load_spec, spec_hash

PAPER = Path(__file__).resolve().parents[1] / "specs" / "fourrooms-paper.yaml"
QUICK = PAPER.with_name("fourrooms-quick.yaml")


def test_bench_load_paper_spec(benchmark):
    """YAML with marks, registry look-ups, conversion and rules for the paper's spec (warm)."""
    spec = benchmark.pedantic(load_spec, args=(PAPER,), rounds=30, iterations=1, warmup_rounds=2)
    assert spec.name == "fourrooms-paper"


def test_bench_canonical_hash(benchmark):
    """Canonical YAML and hash of the paper's spec (done per run and per cell)."""
    spec = load_spec(PAPER)
    digest = benchmark(lambda: (canonical_yaml(spec), spec_hash(spec))[1])
    assert len(digest) == 64


def _command(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "opt_suite", *args], capture_output=True, text=True
    )


def test_bench_validate_command(benchmark):
    """A fresh ``opt-suite validate specs/fourrooms-paper.yaml`` process, end to end."""
    result = benchmark.pedantic(_command, args=("validate", str(PAPER)), rounds=5, iterations=1)
    assert result.returncode == 0, result.stderr


def test_bench_validate_quick_command(benchmark):
    """A fresh ``opt-suite validate specs/fourrooms-quick.yaml`` (target: <= 1.0 s idle).

    Neither TensorFlow nor numba may be imported (``tests/test_cli_list.py`` checks it).
    """
    result = benchmark.pedantic(_command, args=("validate", str(QUICK)), rounds=5, iterations=1)
    assert result.returncode == 0, result.stderr


def test_bench_list_command(benchmark):
    """A fresh ``opt-suite list`` process (loads every registered class; target <= 1.0 s idle)."""
    result = benchmark.pedantic(_command, args=("list",), rounds=5, iterations=1)
    assert result.returncode == 0, result.stderr


HELP_COMMANDS = ("run", "validate", "report", "compare", "gate-rates", "diagnose", "export-demos")


def test_bench_help_screens(benchmark):
    """Every command's ``--help`` in a fresh process (target: <= 1.0 s each on an idle machine).

    A help screen loads the command's module and its argument declarations only: no SciPy,
    matplotlib or TensorFlow (``tests/test_cli_help.py`` checks the imports). Each command's time
    is recorded, with its ratio to a bare ``python -c "import opt_suite"`` measured in the same run.
    """
    import time

    def timed(*args: str) -> float:
        start = time.perf_counter()
        result = subprocess.run([sys.executable, *args], capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        return time.perf_counter() - start

    bare = min(timed("-c", "import opt_suite") for _ in range(3))
    times = {c: min(timed("-m", "opt_suite", c, "--help") for _ in range(3)) for c in HELP_COMMANDS}
    benchmark.extra_info["import opt_suite (s)"] = round(bare, 3)
    for command, seconds in times.items():
        benchmark.extra_info[f"{command} --help (s)"] = round(seconds, 3)
        benchmark.extra_info[f"{command} --help / import"] = round(seconds / bare, 2)
    benchmark.pedantic(timed, args=("-m", "opt_suite", "compare", "--help"), rounds=3)


def test_bench_validate_deep_quick(benchmark):
    """``opt-suite validate --deep specs/fourrooms-quick.yaml`` in a fresh process (target: <= 60 s
    idle; measured 19 s beside a CI run). Every component's contract checks at the contracts' own
    small budgets, on two of the spec's tasks."""
    result = benchmark.pedantic(
        _command, args=("validate", "--deep", str(QUICK)), rounds=1, iterations=1
    )
    assert result.returncode == 0, result.stderr
    assert "components pass their contract checks" in result.stdout


def test_bench_plan_paper_spec(benchmark):
    """Planning fourrooms-paper's 880 cells and pricing them (``run``, ``validate``, every reopen).

    Every cell names the package versions of its code and the family's params; both are computed
    once per process / plan (a 1,000-cell plan took 53 s of which 47 s re-read package metadata).
    """
    from opt_suite.runner.cost_model import estimate_time, load_calibration
    from opt_suite.runner.planning import cost_keys, plan_spec, resolve_components

    spec = load_spec(PAPER)
    components = resolve_components(spec)
    calibration = load_calibration()
    assert calibration is not None

    def plan_and_price() -> float:
        plan = plan_spec(spec, list(range(spec.evaluation.seeds)), components)[3]
        keyed = cost_keys(spec, components, plan)
        return estimate_time(plan.cells, keyed, calibration, 2).wall_s

    seconds = benchmark.pedantic(plan_and_price, rounds=3, iterations=1, warmup_rounds=1)
    assert seconds > 0
