"""The spec a run stored, read back typed: the suite's own sections, plugin params kept raw.

A report reads a finished run without loading its plugins (``report`` and ``compare`` never
import a family), so it cannot :func:`~opt_suite.spec.parse_spec` the stored YAML: resolving a
method's or a family's params would import them. It still must not restate the spec's types and
bounds by hand. :func:`stored_sections` reads each of the suite's own sections that the stored YAML
holds through the one converter that ``validate`` uses (:class:`~opt_suite.spec.convert.Converter`,
every bound and ``added_later`` rule included), with a resolver that leaves every plugin's
``params`` as the plain values written: a stored ``report.bootstrap: 50`` is refused here exactly
as ``validate`` refuses it, with the stored file's line.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from opt_suite.spec.convert import INVALID, Converter
from opt_suite.spec.errors import Problems
from opt_suite.spec.schema import DemonstrationsSpec, EvaluationSpec, ReportSpec, TasksSpec
from opt_suite.spec.tree import Mapping
from opt_suite.spec.yaml_loader import parse_document

__all__ = ["StoredSpec", "stored_sections"]


@dataclasses.dataclass(frozen=True)
class StoredSpec:
    """The sections of a stored spec that the report reads; None: the stored YAML lacks it.

    ``demonstrations``, ``tasks`` and ``evaluation`` hold their plugins' params as plain values.
    """

    name: str | None
    family_name: str | None
    report: ReportSpec
    tasks: TasksSpec | None
    demonstrations: DemonstrationsSpec | None
    evaluation: EvaluationSpec | None


_SECTIONS = {
    "report": ReportSpec,
    "tasks": TasksSpec,
    "demonstrations": DemonstrationsSpec,
    "evaluation": EvaluationSpec,
}


def _raw(path: Any, siblings: dict[str, Any], mark: Any) -> type:
    """The resolver of ``Any`` fields that loads nothing: a plugin's params stay plain values."""
    return object


@functools.lru_cache(maxsize=8)
def stored_sections(text: str, source: str = "the stored spec") -> StoredSpec:
    """The suite's own sections of ``text`` (a resolved spec's YAML), typed and checked.

    Raises:
        SpecError: the YAML does not parse or a section breaks its type or bounds (one located
            line per problem, naming ``source``).
    """
    problems = Problems(root=source)
    root = parse_document(text, source, problems)
    if root is not None and not isinstance(root, Mapping):
        problems.add(root.mark, (), "expected a mapping of spec sections")
    problems.raise_if_any()
    assert isinstance(root, Mapping)
    converter = Converter(problems, _raw)
    values: dict[str, Any] = {}
    for key, tp in _SECTIONS.items():
        entry = root.entries.get(key)
        if entry is not None:
            values[key] = converter.convert(entry.node, tp, (key,))
    problems.raise_if_any()
    assert all(v is not INVALID for v in values.values()), "every INVALID comes with a problem"
    return StoredSpec(
        name=_text(root, "name"),
        family_name=_family_name(root),
        report=values.get("report", ReportSpec()),
        tasks=values.get("tasks"),
        demonstrations=values.get("demonstrations"),
        evaluation=values.get("evaluation"),
    )


def _text(root: Mapping, key: str) -> str | None:
    entry = root.entries.get(key)
    value = getattr(entry.node, "value", None) if entry is not None else None
    return value if isinstance(value, str) else None


def _family_name(root: Mapping) -> str | None:
    entry = root.entries.get("family")
    if entry is None or not isinstance(entry.node, Mapping):
        return None
    return _text(entry.node, "name")
