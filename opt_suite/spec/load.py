"""Reading a spec file into a validated :class:`~opt_suite.spec.schema.Spec` — the one entry point.

Steps: read the YAML safely with marks (``yaml_loader``), merge ``extends`` parents (``extends``),
convert to the typed dataclasses resolving family/method/learner params through the registry
(``convert``, ``resolve``), then check the rules across sections (``rules``). Problems from every
step are collected and raised together as one :class:`SpecError`.
"""

from __future__ import annotations

import os
from pathlib import Path

from opt_suite.spec.convert import INVALID, Converter
from opt_suite.spec.errors import Problems
from opt_suite.spec.extends import parse_spec_tree, read_spec_tree
from opt_suite.spec.resolve import SpecTypes
from opt_suite.spec.rules import check_spec
from opt_suite.spec.schema import Spec
from opt_suite.spec.tree import Mapping

__all__ = ["load_spec", "parse_spec"]


def load_spec(path: str | os.PathLike[str]) -> Spec:
    """The validated spec in the YAML file ``path``.

    Raises:
      SpecError: listing every problem, one line each: ``file:LINE:COL: key.path: message``.
    """
    problems = Problems()
    return _build(read_spec_tree(Path(path), problems), problems)


def parse_spec(text: str, source: str = "<string>") -> Spec:
    """The validated spec in YAML ``text``; problems name ``source``, ``extends`` is relative to it.

    Raises:
      SpecError: as :func:`load_spec`.
    """
    problems = Problems()
    return _build(parse_spec_tree(text, source, problems), problems)


def _build(tree: Mapping | None, problems: Problems) -> Spec:
    if tree is None:  # unreadable: the reason is already recorded
        problems.raise_if_any()
    types = SpecTypes(problems)
    converter = Converter(problems, types)
    types.mark_of = converter.mark_of
    spec = converter.convert(tree, Spec, ())
    check_spec(converter, types, problems)
    problems.raise_if_any()
    assert spec is not INVALID, "every INVALID value comes with a problem"
    return spec
