"""Runner overhead: wall time of ``opt-suite run`` beyond the cells' own compute.

Target: overhead <= 5% of the cells' compute on ``specs/fourrooms-quick.yaml``. Overhead here is
everything the runner adds around the cells — planning, starting workers, moving inputs and
outputs between processes, storing (files + SQLite), claims, progress — measured with one worker so
that waiting on dependencies does not count:

    overhead = (run wall time - sum of cell wall times) / sum of cell wall times

``extra_info`` records ``cells``, ``compute_s``, ``run_s`` and ``overhead`` (fraction); the
per-cell benchmark records ``ms_per_cell`` with instant fake cells (pure bookkeeping cost).

    pytest benchmarks/bench_runner.py -n 0 --benchmark-only -s
"""

from __future__ import annotations

import io
from pathlib import Path

import yaml

from opt_suite import registry
from opt_suite.runner import run_protocol
from opt_suite.spec import find_spec, load_spec

PLUGIN = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "runner_plugin"


def _run(spec, directory: Path, workers: int) -> tuple[int, float, float]:
    result = run_protocol(spec, directory, workers=workers, stream=io.StringIO(), quiet=True)
    assert result.summary.ok, result.summary.failed
    return result.summary.computed, result.summary.compute_s, result.wall_s


def _record(benchmark, cells: int, compute_s: float, run_s: float) -> float:
    overhead = (run_s - compute_s) / compute_s
    benchmark.extra_info.update(
        cells=cells, compute_s=round(compute_s, 3), run_s=round(run_s, 3), overhead=overhead
    )
    print(f"\n{cells} cells: compute {compute_s:.2f} s, run {run_s:.2f} s, overhead {overhead:.1%}")
    return overhead


def test_fourrooms_quick_overhead(benchmark, tmp_path):
    spec = load_spec(find_spec("fourrooms-quick"))
    outcome = benchmark.pedantic(_run, args=(spec, tmp_path / "out", 1), rounds=1, iterations=1)
    _record(benchmark, *outcome)


def test_bookkeeping_per_cell(benchmark, tmp_path, monkeypatch):
    """Instant fake cells: what the runner costs per cell (in-process, no worker start-up)."""
    monkeypatch.syspath_prepend(str(PLUGIN))
    registry._entry_points.cache_clear()
    registry.load.cache_clear()
    text = {
        "name": "bench-runner",
        "family": {"name": "chain", "params": {"num_states": 5}},
        "tasks": {"count": 5, "train": 2, "test": 3},
        "methods": [
            {"name": f"m{i}", "method": "fake_options", "params": {"num_options": 2}}
            for i in range(5)
        ],
        "evaluation": {"learner": "fake_learner", "episodes": 10, "max_steps": 20, "seeds": 20},
        "report": {"baseline": "m0"},
    }
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(text))
    spec = load_spec(path)
    runs = iter(range(10**6))

    def once():
        return _run(spec, tmp_path / f"out{next(runs)}", 0)

    cells, compute_s, run_s = benchmark.pedantic(once, rounds=3, iterations=1)
    benchmark.extra_info["ms_per_cell"] = 1000 * (run_s - compute_s) / cells
    print(f"\n{cells} cells: {1000 * (run_s - compute_s) / cells:.2f} ms of bookkeeping per cell")
    registry._entry_points.cache_clear()
    registry.load.cache_clear()
