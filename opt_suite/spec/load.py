"""Reading a spec file into a validated :class:`~opt_suite.spec.schema.Spec` — the one entry point.

Steps: read the YAML safely with marks (``yaml_loader``), merge ``extends`` parents (``extends``),
convert to the typed dataclasses resolving family/method/learner params through the registry
(``convert``, ``resolve``), then check the rules across sections (``rules``). Problems from every
step are collected and raised together as one :class:`SpecError`.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

from opt_suite.spec.convert import INVALID, Converter
from opt_suite.spec.errors import Problems
from opt_suite.spec.extends import parse_spec_tree, read_spec_tree
from opt_suite.spec.resolve import SpecTypes
from opt_suite.spec.rules import check_spec
from opt_suite.spec.schema import Spec
from opt_suite.spec.sweep import SWEEP_KEY, expand_sweep
from opt_suite.spec.tree import Mapping

__all__ = ["Sweep", "Variant", "load_spec", "load_sweep", "parse_spec", "parse_sweep"]


@dataclasses.dataclass(frozen=True, eq=False)
class Variant:
    """One variant of a sweep: its name (results folder, leaderboard rows), values and spec."""

    name: str
    values: dict[str, Any]
    spec: Spec


@dataclasses.dataclass(frozen=True, eq=False)
class Sweep:
    """A spec file read with its ``sweep:`` block (see :mod:`opt_suite.spec.sweep`).

    Attributes:
      base: the spec without the sweep (what every variant starts from).
      variants: the expanded variants in order; empty when the file has no ``sweep:``.
    """

    base: Spec
    variants: tuple[Variant, ...]

    @property
    def specs(self) -> list[tuple[str | None, Spec]]:
        """What a run runs: every (variant name, spec), or ``[(None, base)]`` without a sweep."""
        if not self.variants:
            return [(None, self.base)]
        return [(v.name, v.spec) for v in self.variants]


def load_spec(path: str | os.PathLike[str]) -> Spec:
    """The validated spec in the YAML file ``path``.

    Raises:
      SpecError: listing every problem, one line each: ``file:LINE:COL: key.path: message``.
    """
    problems = Problems(root=str(Path(path)))
    return _build(read_spec_tree(Path(path), problems), problems)


def load_sweep(path: str | os.PathLike[str]) -> Sweep:
    """The spec in ``path`` and, if it has a ``sweep:`` block, every variant, each validated.

    Raises:
      SpecError: as :func:`load_spec`, for the base spec, the sweep block and every variant.
    """
    problems = Problems(root=str(Path(path)))
    return _build_sweep(read_spec_tree(Path(path), problems), problems)


def parse_sweep(text: str, source: str = "<string>") -> Sweep:
    """:func:`load_sweep` for YAML ``text``."""
    problems = Problems(root=source)
    return _build_sweep(parse_spec_tree(text, source, problems), problems)


def parse_spec(text: str, source: str = "<string>") -> Spec:
    """The validated spec in YAML ``text``; problems name ``source``, ``extends`` is relative to it.

    Raises:
      SpecError: as :func:`load_spec`.
    """
    problems = Problems(root=source)
    return _build(parse_spec_tree(text, source, problems), problems)


def _build(tree: Mapping | None, problems: Problems) -> Spec:
    if tree is None:  # unreadable: the reason is already recorded
        problems.raise_if_any()
    assert tree is not None
    sweep = tree.entries.get(SWEEP_KEY)
    if sweep is not None:  # never run just the base of a sweep by accident
        problems.add(
            sweep.key_mark,
            (SWEEP_KEY,),
            "this spec is a sweep of variants: read it with load_sweep (opt-suite run and "
            "validate do)",
        )
        tree = Mapping(tree.mark, {k: e for k, e in tree.entries.items() if k != SWEEP_KEY})
    return _convert(tree, problems)


def _build_sweep(tree: Mapping | None, problems: Problems) -> Sweep:
    if tree is None:
        problems.raise_if_any()
    assert tree is not None
    base_tree, trees = expand_sweep(tree, problems)
    base = _convert(base_tree, problems, raise_now=False)
    variants = []
    for variant in trees:
        spec = _convert(variant.tree, problems, raise_now=False)
        variants.append(Variant(variant.name, variant.values, spec))
    problems.raise_if_any()
    return Sweep(base, tuple(variants))


def _convert(tree: Mapping, problems: Problems, raise_now: bool = True) -> Spec:
    types = SpecTypes(problems)
    converter = Converter(problems, types)
    types.mark_of = converter.mark_of
    spec = converter.convert(tree, Spec, ())
    check_spec(converter, types, problems)
    if not raise_now:
        return spec
    problems.raise_if_any()
    assert spec is not INVALID, "every INVALID value comes with a problem"
    return spec
