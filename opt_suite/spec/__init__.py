"""Benchmark specs: typed, frozen, validated once at the edge.

A spec is a YAML file (see :mod:`opt_suite.spec.schema` for its sections); :func:`load_spec` reads
it into a frozen :class:`Spec`, or raises a :class:`SpecError` that lists every problem at once, one
line each (``file:LINE:COL: key.path: message``). Everything after loading trusts the spec.
"""

from opt_suite.spec.bundled import bundled_specs, bundled_specs_dir, find_spec
from opt_suite.spec.canonical import canonical_yaml, content_hash, spec_hash, to_plain
from opt_suite.spec.errors import SpecError
from opt_suite.spec.load import Sweep, Variant, load_spec, load_sweep, parse_spec, parse_sweep
from opt_suite.spec.schema import (
    DemonstrationsSpec,
    EvaluationSpec,
    FamilySpec,
    MethodSpec,
    ReportSpec,
    Spec,
    TasksSpec,
)
from opt_suite.spec.sweep import MAX_VARIANTS

__all__ = [
    "load_spec",
    "parse_spec",
    "load_sweep",
    "parse_sweep",
    "Sweep",
    "Variant",
    "MAX_VARIANTS",
    "SpecError",
    "to_plain",
    "canonical_yaml",
    "spec_hash",
    "content_hash",
    "find_spec",
    "bundled_specs",
    "bundled_specs_dir",
    "Spec",
    "FamilySpec",
    "TasksSpec",
    "DemonstrationsSpec",
    "MethodSpec",
    "EvaluationSpec",
    "ReportSpec",
]
