"""Every number a user can type has an upper bound, checked before anything is built."""

from __future__ import annotations

import dataclasses
import re
import tracemalloc
import typing
from pathlib import Path

import pytest

from opt_suite import registry
from opt_suite.cli import main
from opt_suite.cli.run import max_workers
from opt_suite.params import MAX_INT, constraints
from opt_suite.spec import MAX_VARIANTS, SpecError, load_spec, load_sweep, schema

QUICK = Path(__file__).resolve().parents[1] / "specs" / "fourrooms-quick.yaml"

# Grid coordinates: checked against the family's layout (a cell outside it is an error), so they
# need no bound of their own.
CHECKED_ELSEWHERE = {"fourrooms.Variation.start", "fourrooms.Variation.goal"} | {
    "fourrooms.TaskParams.start",
    "fourrooms.TaskParams.goal",
}


def _integer_fields(cls: type, where: str, seen: set[type]) -> list[tuple[str, dict]]:
    if cls in seen:
        return []
    seen.add(cls)
    found = []
    hints = typing.get_type_hints(cls)
    for field in dataclasses.fields(cls):
        tp = hints[field.name]
        if dataclasses.is_dataclass(tp):
            found += _integer_fields(typing.cast(type, tp), f"{where}.{field.name}", seen)
        elif re.search(r"\bint\b", str(tp) if not isinstance(tp, type) else tp.__name__):
            found.append((f"{where}.{field.name}", constraints(field)))
    return found


def test_every_integer_parameter_has_an_upper_bound():
    seen: set[type] = set()
    fields = []
    groups = (
        registry.FAMILIES,
        registry.METHODS,
        registry.LEARNERS,
        registry.DEMONSTRATION_SOURCES,
    )
    for group in groups:
        for name in registry.names(group):
            cls = registry.load(group, name)
            for part in ("Params", "Variation", "TaskParams"):
                params = getattr(cls, part, None)
                if params is not None and dataclasses.is_dataclass(params):
                    fields += _integer_fields(params, f"{name}.{part}", seen)
    fields += _integer_fields(schema.Spec, "spec", seen)
    assert len(fields) > 30  # the walk reached the registered classes
    unbounded = [
        where
        for where, bounds in fields
        if bounds["le"] is None and bounds["lt"] is None and where not in CHECKED_ELSEWHERE
    ]
    assert not unbounded


def _quick_with(old: str, new: str, tmp_path: Path) -> Path:
    text = QUICK.read_text()
    assert old in text
    path = tmp_path / "spec.yaml"
    path.write_text(text.replace(old, new))
    return path


def test_an_integer_without_its_own_bound_is_capped(tmp_path):
    path = _quick_with("options: 4", "options: 4\n      max_steps: 100000000000", tmp_path)
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert any(
        re.search(rf"spec\.yaml:\d+:\d+: .*max_steps: out of range \(expected .*<= {MAX_INT}", p)
        for p in info.value.problems
    ), info.value.problems
    # Within the bound, the same key loads.
    fine = _quick_with("options: 4", "options: 4\n      max_steps: 1000", tmp_path)
    assert load_spec(fine).name == "fourrooms-quick"


def test_a_huge_grid_is_refused_from_its_axis_lengths(tmp_path):
    # 9 axes of 10 values: 10**9 variants from a 0.6 KB file.
    axes = [
        "evaluation.params.alpha",
        "evaluation.params.gamma",
        "evaluation.params.epsilon",
        "evaluation.episodes",
        "evaluation.max_steps",
        "family.params.slip",
        "family.params.step_reward",
        "family.params.goal_reward",
        "tasks.seed",
    ]
    values = {axis: [v / 100 if "params" in axis else v + 1 for v in range(10)] for axis in axes}
    grid = "".join(f"    {axis}: {values[axis]}\n" for axis in axes)
    path = tmp_path / "sweep.yaml"
    path.write_text(f"extends: {QUICK}\nsweep:\n  grid:\n{grid}")
    assert path.stat().st_size < 1000
    tracemalloc.start()
    try:
        with pytest.raises(SpecError) as info:
            load_sweep(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert any(
        f"expands into {10**9} variants, more than the maximum of {MAX_VARIANTS}" in p
        for p in info.value.problems
    ), info.value.problems
    assert peak < 50 * 2**20, f"refusing the grid took {peak / 2**20:.0f} MB"


def test_too_many_workers_are_refused_before_anything_starts(tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["run", str(QUICK), "--out", str(out), "--workers", "100000", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and f"more than {max_workers()}" in err, err
    assert not out.exists()
