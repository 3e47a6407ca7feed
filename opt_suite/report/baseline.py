"""The per-run data and CI baseline file: every run's metric values, to test a later run against.

Every report writes it as ``runs.json`` (the results pages publish it), and ``opt-suite report DIR
--export-baseline FILE`` writes the same document elsewhere; ``opt-suite compare --baseline`` reads
it. It keeps the per-run values (one per seed x test task), not just the means, because a
regression test needs the spread and the pairing, and the per-task ``episodes_to_threshold``
thresholds, so that a new run is measured against the same thresholds rather than ones re-derived
from its own results:

.. code-block:: json

    {"format": "opt-suite-baseline", "version": 1,
     "spec": {"name": "ci-gate", "hash": "…"},
     "settings": {"final_fraction": 0.1, "window": 10, "threshold_unit": "episodes"},
     "thresholds": {"0": -35.2, "1": -20.0},
     "methods": {"primitives": {"seeds": [0, 1], "tasks": [0, 1],
                                "metrics": {"auc": [[…per task…], …per seed…], …}}},
     "references": {"expert": "optimal expert", "seeds": [0, 1], "tasks": [0, 1],
                    "random": [[…]], "expert_returns": [[…]]}}

``settings.test_tasks`` is ``"per_seed"`` when each seed drew its own test tasks
(``tasks.test_per_seed``; then a task index names a different task on every seed, and the
``thresholds`` keys are ``"seed/task"``), else ``"shared"`` (the default when absent).
``task_draw`` maps each test split (``test``, or ``test/seed<i>``) to the SHA-256 of the tasks
drawn there (:mod:`opt_suite.report.task_draw`): ``compare`` and ``gate-rates`` refuse a run whose
draw differs, even with ``--allow-spec-change`` (absent in files written before it existed).
``measured_rates``, when there, is what ``opt-suite gate-rates --stamp`` measured on this very
content (:mod:`opt_suite.report.measured_rates`): ``compare`` refuses a baseline without it.
The file is read through the file guard (:func:`opt_suite.files_guard.read_json`): a key twice in
one object, or ``NaN``/``Infinity`` anywhere, is refused with its line.
``metrics`` holds every metric of :data:`opt_suite.report.metrics.METRICS` (``auc``,
``final_return``, ``episodes_to_threshold`` -- in frames when ``threshold_unit`` is ``frames`` --,
``jump_start``, ``improvement``), each a seeds x tasks matrix. ``references`` (the uniform-random
policy's and the expert's returns per seed and test task) is there when the run measured them.
Files written before ``threshold_unit``, ``jump_start``, ``improvement`` and ``references``
existed lack them and still load.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from opt_suite.files_guard import InputError, output_file, read_json
from opt_suite.report import measured_rates
from opt_suite.report.inputs import Analysis, ReportInputs
from opt_suite.report.metrics import METRICS, SMOOTHING_WINDOW

__all__ = [
    "Baseline",
    "BaselineError",
    "baseline_document",
    "baseline_from_document",
    "export_baseline",
    "load_baseline",
    "narrow_baseline",
    "stamp_baseline",
]

FORMAT = "opt-suite-baseline"
VERSION = 1
MAX_SEED = 2**31 - 1  # seed indices are stored as SQLite integers and spawn SeedSequences
MAX_WINDOW = 1_000_000  # the trailing window of episodes_to_threshold, in episodes
MAX_BYTES = 64 << 20  # a baseline of 5 methods x 10 seeds x 24 tasks is ~50 kB


class BaselineError(ValueError):
    """A baseline file is missing or malformed; the message names the file and the problem."""


@dataclasses.dataclass(frozen=True, eq=False)
class BaselineRuns:
    """One method entry's stored runs: ``metrics[name][s, t]`` for ``seeds[s]``, ``tasks[t]``."""

    seeds: tuple[int, ...]
    tasks: tuple[Any, ...]
    metrics: Mapping[str, np.ndarray]


@dataclasses.dataclass(frozen=True, eq=False)
class Baseline:
    """A loaded baseline file (see the module docstring for its JSON)."""

    path: Path
    spec_name: str
    spec_hash: str
    final_fraction: float
    window: int
    thresholds: Mapping[str, float]  # keyed by str(task)
    methods: Mapping[str, BaselineRuns]
    #: what episodes_to_threshold counts: "episodes", or "frames" for a frame budget
    threshold_unit: str = "episodes"
    #: each seed drew its own test tasks (``tasks.test_per_seed``)
    tasks_per_seed: bool = False
    #: test split -> digest of its drawn tasks (empty: written before draws were recorded)
    task_draw: Mapping[str, str] = dataclasses.field(default_factory=dict)
    #: the gate's test this baseline was exported for ("pair" or "seed"; None: not recorded)
    gate_unit: str | None = None
    #: SHA-256 of the file's content without its stamp (:func:`content_digest`)
    digest: str = ""
    #: what ``gate-rates --stamp`` measured on it (None: never measured)
    measured: measured_rates.MeasuredRates | None = None


#: The units of the gate's sign-flip test (``compare --unit``), as ``settings.gate_unit`` records.
GATE_UNITS = measured_rates.UNITS


def baseline_document(
    inputs: ReportInputs, analysis: Analysis, gate_unit: str | None = None
) -> dict[str, Any]:
    """The baseline's JSON content for an analysed run (``gate_unit``: recorded when given)."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "spec": {"name": inputs.spec_name, "hash": inputs.spec_hash},
        "settings": {
            "final_fraction": inputs.settings.final_fraction,
            "window": SMOOTHING_WINDOW,
            "threshold_unit": "episodes" if inputs.frame_budget is None else "frames",
            "test_tasks": "per_seed" if inputs.tasks_per_seed else "shared",
            **({"gate_unit": gate_unit} if gate_unit is not None else {}),
        },
        "thresholds": {str(t): float(v) for t, v in analysis.thresholds.items()},
        "methods": {
            name: {
                "seeds": list(m.seeds),
                "tasks": list(m.tasks),
                "metrics": {k: m.values[k].tolist() for k in METRICS},
            }
            for name, m in analysis.metrics.items()
        },
        **_references(inputs),
        **({"task_draw": dict(inputs.task_draw)} if inputs.task_draw else {}),
    }


def _references(inputs: ReportInputs) -> dict[str, Any]:
    refs = inputs.references
    if refs is None:
        return {}
    return {
        "references": {
            "expert": refs.expert_label,
            "seeds": list(refs.seeds),
            "tasks": list(refs.tasks),
            "random": refs.random.tolist(),
            "expert_returns": refs.expert.tolist(),
        }
    }


def export_baseline(
    inputs: ReportInputs, analysis: Analysis, path: str | Path, gate_unit: str | None = None
) -> Path:
    """Write the baseline of an analysed run to ``path`` (parent folders are created)."""
    path = output_file(path, "the baseline file (--export-baseline)")
    doc = baseline_document(inputs, analysis, gate_unit)
    path.write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n")
    return path


def _require(cond: object, path: Path, message: str) -> None:
    """Raise ``BaselineError(message)`` unless ``cond`` is truthy (a non-empty list counts)."""
    if not cond:
        raise BaselineError(f"{path}: {message}")


def load_baseline(path: str | Path) -> Baseline:
    """Read and check a baseline file.

    Raises:
        BaselineError: the file is missing, not JSON, or not shaped as :func:`baseline_document`
            writes it (the message names the key and what was expected).
    """
    return baseline_from_document(_document(path), path)


def stamp_baseline(path: str | Path, measured: measured_rates.MeasuredRates) -> None:
    """Write what ``gate-rates`` measured into the baseline file (:mod:`.measured_rates`).

    Raises BaselineError when the file is not a baseline or changed since it was measured.
    """
    path = Path(path)
    doc = _document(path)
    baseline_from_document(doc, path)
    try:
        measured_rates.stamp(output_file(path, "the baseline file"), measured, doc)
    except (ValueError, InputError) as exc:
        raise BaselineError(str(exc)) from None


def _document(path: str | Path) -> Any:
    """A baseline file's JSON, read through the file guard."""
    path = Path(path)
    if not path.exists():
        raise BaselineError(
            f"{path}: no such baseline file (write one with `opt-suite report DIR"
            f" --export-baseline {path}`)"
        )
    try:
        # Every key once (a second "auc" would silently win), no NaN or Infinity literal.
        return read_json(path, MAX_BYTES, "baseline file", finite=True)
    except InputError as exc:  # a directory, FIFO, /dev/zero link, > MAX_BYTES, not JSON
        raise BaselineError(str(exc)) from None


def baseline_from_document(doc: Any, path: str | Path) -> Baseline:
    """Check a baseline document already read (``path`` only names it in errors).

    Raises:
        BaselineError: as :func:`load_baseline`.
    """
    path = Path(path)
    _require(
        isinstance(doc, dict) and doc.get("format") == FORMAT, path, f"format is not {FORMAT!r}"
    )
    _require(
        _is_int(doc.get("version")) and doc.get("version") == VERSION,  # true == 1 in Python
        path,
        f"version {doc.get('version')!r}, expected {VERSION}",
    )
    spec, settings = doc.get("spec"), doc.get("settings")
    _require(
        isinstance(spec, dict)
        and isinstance(spec.get("name"), str)
        and isinstance(spec.get("hash"), str),
        path,
        "spec must be {name: str, hash: str}",
    )
    _require(isinstance(settings, dict), path, "settings must be a mapping")
    fraction, window = settings.get("final_fraction"), settings.get("window")
    _require(
        _is_number(fraction) and 0 < fraction <= 1,
        path,
        f"settings.final_fraction must be a number in (0, 1], got {fraction!r}",
    )
    _require(
        _is_int(window) and 1 <= window <= MAX_WINDOW,
        path,
        f"settings.window must be an integer in 1..{MAX_WINDOW}, got {window!r}",
    )
    unit = settings.get("threshold_unit", "episodes")
    _require(
        unit in ("episodes", "frames"),
        path,
        f"settings.threshold_unit must be 'episodes' or 'frames', got {unit!r}",
    )
    test_tasks = settings.get("test_tasks", "shared")
    _require(
        test_tasks in ("shared", "per_seed"),
        path,
        f"settings.test_tasks must be 'shared' or 'per_seed', got {test_tasks!r}",
    )
    gate_unit = settings.get("gate_unit")
    _require(
        gate_unit is None or gate_unit in GATE_UNITS,
        path,
        f"settings.gate_unit must be one of {', '.join(GATE_UNITS)}, got {gate_unit!r}",
    )
    thresholds = doc.get("thresholds")
    _require(
        isinstance(thresholds, dict) and all(_is_number(v) for v in thresholds.values()),
        path,
        "thresholds must map task -> finite number",
    )
    methods = doc.get("methods")
    _require(isinstance(methods, dict) and methods, path, "methods must be a non-empty mapping")
    draw = doc.get("task_draw", {})
    _require(
        isinstance(draw, dict)
        and all(re.fullmatch(r"test(/seed\d{1,10})?", k) for k in draw)
        and all(isinstance(v, str) and re.fullmatch(r"[0-9a-f]{64}", v) for v in draw.values()),
        path,
        "task_draw must map test splits ('test' or 'test/seed<i>') to SHA-256 hex digests",
    )
    try:
        measured = measured_rates.measured_from_document(doc.get(measured_rates.KEY), methods)
    except ValueError as exc:
        raise BaselineError(f"{path}: {exc}") from None
    return Baseline(
        path=path,
        spec_name=spec["name"],
        spec_hash=spec["hash"],
        final_fraction=float(fraction),
        window=int(window),
        thresholds={str(k): float(v) for k, v in thresholds.items()},
        methods={name: _runs(path, name, entry) for name, entry in methods.items()},
        threshold_unit=unit,
        tasks_per_seed=test_tasks == "per_seed",
        task_draw=dict(draw),
        gate_unit=gate_unit,
        digest=measured_rates.content_digest(doc),
        measured=measured,
    )


def _is_int(value: Any) -> bool:
    """A JSON integer (not a bool, which Python counts as an int)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    """A finite JSON number that fits a float (NaN, Infinity and 1e400-sized integers do not)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def _runs(path: Path, name: str, entry: Any) -> BaselineRuns:
    where = f"methods.{name}"
    _require(isinstance(entry, dict), path, f"{where} must be a mapping")
    seeds, tasks, metrics = entry.get("seeds"), entry.get("tasks"), entry.get("metrics")
    _require(
        isinstance(seeds, list)
        and seeds
        and all(_is_int(s) and 0 <= s <= MAX_SEED for s in seeds)
        and len(set(seeds)) == len(seeds),
        path,
        f"{where}.seeds must be a non-empty list of distinct seed indices in 0..{MAX_SEED}",
    )
    _require(
        isinstance(tasks, list)
        and tasks
        and all(_is_int(t) or isinstance(t, str) for t in tasks)
        and len({str(t) for t in tasks}) == len(tasks),
        path,
        f"{where}.tasks must be a non-empty list of distinct task indices",
    )
    _require(isinstance(metrics, dict), path, f"{where}.metrics must be a mapping")
    values = {}
    for k, v in metrics.items():
        numbers = isinstance(v, list) and all(
            isinstance(row, list) and all(_is_number(x) for x in row) for row in v
        )
        arr = np.asarray(v, dtype=np.float64) if numbers else np.empty(0)
        _require(
            arr.shape == (len(seeds), len(tasks)) and bool(np.all(np.isfinite(arr))),
            path,
            f"{where}.metrics.{k} must be a {len(seeds)} x {len(tasks)} (seeds x tasks) matrix"
            f" of finite numbers",
        )
        values[k] = arr
    return BaselineRuns(tuple(int(s) for s in seeds), tuple(tasks), values)


def narrow_baseline(
    baseline: Baseline,
    *,
    seeds: Sequence[int] | None = None,
    methods: Sequence[str] | None = None,
) -> Baseline:
    """The part of ``baseline`` on these seeds and method entries (None: all of them).

    What ``compare --only-seeds/--only-methods`` tests against: the user says out loud which part
    of the evidence is left out, instead of the gate quietly dropping what a run lacks.

    Raises:
        BaselineError: a seed or method entry the baseline does not hold (naming what it holds).
    """
    chosen = list(baseline.methods) if methods is None else list(dict.fromkeys(methods))
    unknown = [m for m in chosen if m not in baseline.methods]
    if unknown:
        raise BaselineError(
            f"{baseline.path}: --only-methods {unknown}: the baseline has method entries"
            f" {list(baseline.methods)}"
        )
    if seeds is not None:
        held = {s for runs in baseline.methods.values() for s in runs.seeds}
        absent = sorted(set(seeds) - held)
        if absent:
            raise BaselineError(
                f"{baseline.path}: --only-seeds: the baseline has no seed {absent} (it has"
                f" {sorted(held)})"
            )
    narrowed = {}
    for name in chosen:
        runs = baseline.methods[name]
        keep = list(runs.seeds) if seeds is None else [s for s in runs.seeds if s in set(seeds)]
        if not keep:
            raise BaselineError(
                f"{baseline.path}: --only-seeds {list(seeds or [])}: method entry {name!r} of the"
                f" baseline has seeds {list(runs.seeds)}"
            )
        rows = [runs.seeds.index(s) for s in keep]
        narrowed[name] = BaselineRuns(
            tuple(keep), runs.tasks, {k: v[rows] for k, v in runs.metrics.items()}
        )
    return dataclasses.replace(baseline, methods=narrowed)
