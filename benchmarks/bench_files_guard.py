"""What the file guard costs on every file the suite reopens (issue 40: at most 1 ms per file).

Every JSON file a command reads back (``export.json``, ``diagnose.json``, ``leaderboard.json``,
a baseline, an export manifest) goes through :func:`opt_suite.files_guard.read_json`: a ``stat``,
a non-blocking ``open`` with an ``fstat``, a bounded read, and a parse that refuses a key given
twice. Each benchmark times it on a file of the size named, and the plain
``json.loads(path.read_text())`` it replaced in the same process; ``extra_info`` records both per
file and the guard's overhead (their difference), which the target bounds: at most 1 ms.

    pytest benchmarks/bench_files_guard.py -n 0 --benchmark-only
"""

from __future__ import annotations

import json
import timeit

import pytest

from opt_suite.files_guard import read_json

TARGET_OVERHEAD_MS = 1.0
LIMIT = 64 << 20

# A manifest of 240 event files (5 methods x 2 seeds x 24 test tasks), and a leaderboard-sized
# document of nested numbers: the two shapes of JSON the suite reopens.
SHAPES = {
    "export-manifest-240-files": {
        "format": "opt-suite tensorboard export 2",
        "files": {
            f"run-{i}/events.out.tfevents.0000000000.opt-suite": "ab" * 32 for i in range(240)
        },
        "runs": [f"run-{i}" for i in range(240)],
    },
    "leaderboard-5-methods": {
        "methods": {
            f"method-{m}": {
                k: [[0.1 * i + t for t in range(24)] for i in range(5)] for k in "abcde"
            }
            for m in range(5)
        },
        "warnings": ["x" * 80] * 10,
    },
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_bench_read_json_guard_overhead(benchmark, tmp_path, shape):
    """The guarded read of one reopened JSON file against the plain read (target: +1 ms at most)."""
    path = tmp_path / "file.json"
    path.write_text(json.dumps(SHAPES[shape], indent=1))
    doc = benchmark.pedantic(
        read_json, args=(path, LIMIT, "a file"), rounds=200, iterations=1, warmup_rounds=5
    )
    assert doc == json.loads(path.read_text())
    guarded = benchmark.stats.stats.median
    plain = min(timeit.repeat(lambda: json.loads(path.read_text()), number=1, repeat=200))
    overhead_ms = 1000 * (guarded - plain)
    benchmark.extra_info.update(
        bytes=path.stat().st_size,
        guarded_ms=round(1000 * guarded, 4),
        plain_ms=round(1000 * plain, 4),
        overhead_ms=round(overhead_ms, 4),
    )
    assert overhead_ms <= TARGET_OVERHEAD_MS, benchmark.extra_info
