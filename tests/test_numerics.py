"""The same numbers on every x86-64 machine: opt_suite pins NumPy's and oneDNN's CPU-dependent
kernels to AVX2 (opt_suite/_numerics.py), so a machine with AVX-512 computes what one without does.

A machine without AVX-512 is simulated by capping both libraries at AVX2 by hand; without the pins,
on a machine with AVX-512, the quick spec's offline-options option set differs between the two.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from opt_suite import _numerics

REPO = Path(__file__).resolve().parents[1]

# The offline-options discovery cell of the quick spec, seed 0, computed in this process (after
# its demonstrations cell); prints the SHA-256 of the option-set file's bytes.
DISCOVERY = """
import hashlib, pathlib, sys
import opt_suite
from opt_suite.runner.cells import execute
from opt_suite.runner.protocol import _Inputs, plan_spec, resolve_components
from opt_suite.spec import load_spec

spec = load_spec("specs/fourrooms-quick.yaml")
components = resolve_components(spec)
_, _, _, plan = plan_spec(spec, [0], components)
inputs = _Inputs(spec, plan, components, pathlib.Path(sys.argv[1]), sys.stderr)
demos = next(c for c in plan.cells if c.kind == "demonstrations")
outcome = execute(inputs.job(demos))
assert outcome.error is None, outcome.error
inputs.remember(demos, outcome)
cell = next(c for c in plan.cells if c.kind == "discovery" and c.method == "offline-options")
outcome = execute(inputs.job(cell))
assert outcome.error is None, outcome.error
print(hashlib.sha256(outcome.record.options).hexdigest())
"""


def _run(code: str, tmp_path: Path, **env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k not in _numerics.PINNED}
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO,
        env={**clean, **env},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_importing_opt_suite_pins_numpy_before_it_loads(tmp_path):
    code = (
        "import os, opt_suite, numpy\n"
        "from opt_suite._numerics import unpinned\n"
        "from numpy._core._multiarray_umath import __cpu_features__ as f\n"
        "assert unpinned() is None and not f['AVX512F'], (unpinned(), f['AVX512F'])\n"
        "print(os.environ['ONEDNN_MAX_CPU_ISA'])\n"
    )
    assert _run(code, tmp_path) == "AVX2"
    # NumPy first: the pins come too late for it, and opt_suite can tell (where AVX-512 exists).
    late = "import numpy, opt_suite\nfrom opt_suite._numerics import unpinned\nprint(unpinned())\n"
    has_avx512 = "avx512f" in Path("/proc/cpuinfo").read_text()
    assert (_run(late, tmp_path) != "None") == has_avx512


@pytest.mark.slow
def test_offline_options_are_the_same_bytes_with_or_without_avx512_and_on_any_thread_count(
    tmp_path,
):
    # One process as opt_suite pins it, on this machine's threads; one capped at AVX2 by hand on
    # one thread (each discovery is a fresh TensorFlow: one process differing in both saves one).
    # Missing pins make the first differ (AVX-512 here); thread-dependent sums, either.
    here = _run(DISCOVERY, tmp_path / "here")
    without_avx512_on_one_thread = _run(
        DISCOVERY,
        tmp_path / "avx2",
        ONEDNN_MAX_CPU_ISA="AVX2",
        NPY_DISABLE_CPU_FEATURES=_numerics.PINNED["NPY_DISABLE_CPU_FEATURES"],
        TF_NUM_INTRAOP_THREADS="1",
    )
    assert here == without_avx512_on_one_thread
