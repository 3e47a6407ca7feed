"""``opt-suite describe NAME [--json]``: everything a spec author needs to know about one component.

NAME is any registered family, method, learner or demonstration source (plugins included). It
prints the component's description, its entry point, what it requires from a family (or, for a
family, what it offers) and every spec key its params dataclasses accept, with type, default,
bounds and doc — the rows ``opt-suite list --params`` shows, from the same code. An unknown name
exits 2 with one line naming the closest registered names. Nothing here imports TensorFlow.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import inspect
import json
import sys
from typing import Any

from opt_suite import registry
from opt_suite.cli.list_cmd import SPEC_SECTIONS, describe_entry
from opt_suite.spec.convert import field_types
from opt_suite.spec.reference import param_rows

__all__ = ["KINDS", "add_arguments", "describe", "render", "run", "unknown_message"]

# group -> what one of it is called, in the order names are looked up and shown.
KINDS = {
    registry.FAMILIES: "family",
    registry.METHODS: "method",
    registry.LEARNERS: "learner",
    registry.DEMONSTRATION_SOURCES: "demonstration source",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the command's arguments."""
    parser.add_argument("name", metavar="NAME", help="a family, method, learner or source name")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead")


def run(args: argparse.Namespace) -> int:
    """Describe every component registered as NAME; 2 when there is none."""
    found = [describe(group, args.name) for group in KINDS if args.name in registry.names(group)]
    if not found:
        print(f"opt-suite describe: {unknown_message(args.name)}", file=sys.stderr)
        return 2
    if args.json:
        json.dump(found if len(found) > 1 else found[0], sys.stdout, indent=2)
        print()
    else:
        print("\n".join(render(entry) for entry in found), end="")
    return 0


def unknown_message(name: str) -> str:
    """One line: the name is not registered, and the closest names that are."""
    every = sorted({n for group in KINDS for n in registry.names(group)})
    close = difflib.get_close_matches(name, every, n=3, cutoff=0.5)
    hint = f"; closest: {', '.join(close)}" if close else ""
    return f"no family, method, learner or demonstration source is named {name!r}{hint}"


def describe(group: str, name: str) -> dict[str, Any]:
    """Plain data about ``name`` in ``group`` (what ``--json`` prints)."""
    entry = {"kind": KINDS[group], **describe_entry(group, name, with_params=True)}
    entry["entry_point"] = _entry_point(group, name)
    if entry.get("error"):
        return entry
    cls = registry.load(group, name)
    entry["doc"] = inspect.cleandoc(cls.__doc__ or "")
    for section, attr in SPEC_SECTIONS[group].items():
        if isinstance(entry["params"].get(section), list):
            entry["params"][section] = nested_rows(getattr(cls, attr))
    if group == registry.FAMILIES:
        entry["offers"] = _offers(cls)
    else:
        entry["requires"] = sorted(getattr(cls, "requires", frozenset()))
        entry["requires_depend_on_params"] = _overrides(cls, "requirements")
        if entry["requires_depend_on_params"]:
            entry["requirements_doc"] = _doc_line(cls.requirements)
        entry["checks_params_against_family"] = _overrides(cls, "check_family")
        # Why a component needs an exact model (``model_needed_because``), when it does: what a
        # user of a gymnasium env (no model) reads before choosing it.
        if getattr(cls, "model_needed_because", ""):
            entry["model_needed_because"] = str(cls.model_needed_because)
    for attr in ("uses_checkpoints", "frame_budgets", "starts_policy", "clones_policy"):
        if hasattr(cls, attr):
            entry[attr] = bool(getattr(cls, attr))
    if group == registry.METHODS:
        entry["controls"] = getattr(cls, "controls", "")
        # uses_* are at the default params; what other params read is discovery_budget's say.
        if _overrides(cls, "discovery_budget") and _doc_line(cls.discovery_budget):
            entry["learns_from_doc"] = _doc_line(cls.discovery_budget)
        if entry["starts_policy"]:
            entry["learners_with_a_policy"] = _learners(clones=True)
            entry["learners_without_a_policy"] = _learners(clones=False)
    if group == registry.LEARNERS:
        entry["zero_shot"] = _overrides(cls, "zero_shot")
    return entry


def _learners(clones: bool) -> list[str]:
    """The registered learners that do (or do not) have a policy to initialise."""
    found = []
    for name in registry.names(registry.LEARNERS):
        try:
            cls = registry.load(registry.LEARNERS, name)
        except Exception:  # a broken plugin is listed by `list`, not here
            continue
        if bool(getattr(cls, "clones_policy", False)) == clones:
            found.append(name)
    return sorted(found)


def nested_rows(params_cls: type, prefix: str = "") -> list[dict[str, Any]]:
    """``param_rows`` of a params dataclass, each nested dataclass's fields after its own row.

    A nested key is dotted as a spec writes it below the section (``ppo.network.fc_units``).
    """
    rows = []
    types = field_types(params_cls)
    for row in param_rows(params_cls):
        rows.append({**row, "key": prefix + row["key"]})
        inner = types[row["key"]]
        if dataclasses.is_dataclass(inner) and isinstance(inner, type):
            rows.extend(nested_rows(inner, f"{prefix}{row['key']}."))
    return rows


def _entry_point(group: str, name: str) -> dict[str, str]:
    """Where the name is registered: ``module:Class`` and the distribution that declares it."""
    ep = registry._entry_points(group).get(name)
    if ep is None:  # registered some other way (a test's fake registry): say where the class is
        try:
            cls = registry.load(group, name)
            value = f"{cls.__module__}:{cls.__qualname__}"
        except Exception:
            value = "?"
        return {"group": group, "value": value, "distribution": ""}
    dist = getattr(ep, "dist", None)
    return {"group": group, "value": ep.value, "distribution": getattr(dist, "name", "") or ""}


def _offers(cls: Any) -> list[str] | str:
    """The capabilities a family instance with default params offers."""
    from opt_suite.families.capabilities import offered

    try:
        return sorted(offered(cls(cls.Params())))
    except Exception as exc:  # a family that needs params to be built
        return f"unknown without params ({type(exc).__name__}: {exc})"


def _overrides(cls: type, attr: str) -> bool:
    """Whether ``cls`` defines ``attr`` itself rather than inheriting its base's default."""
    bases = [base for base in cls.__mro__[1:] if attr in vars(base)]
    own = next((c for c in cls.__mro__ if attr in vars(c)), None)
    return own is not None and bool(bases) and own is not bases[-1]


def _doc_line(obj: Any) -> str:
    doc = inspect.getdoc(obj) or ""
    return doc.splitlines()[0] if doc else ""


def _section_lines(params: dict[str, Any]) -> list[str]:
    lines = []
    for section, rows in params.items():
        if isinstance(rows, str):
            lines.append(f"  {section}: {rows}")
            continue
        lines.append(f"  {section}:" + ("" if rows else " (no parameters)"))
        for row in rows:
            default = "required" if row["default"] is None else f"default {row['default']}"
            bounds = f", {row['range']}" if row["range"] else ""
            lines.append(f"    {row['key']}: {row['type']}, {default}{bounds}")
            if row["doc"]:
                lines.append(f"        {row['doc']}")
    return lines


def render(entry: dict[str, Any]) -> str:
    """The description as text."""
    ep = entry["entry_point"]
    where = f"{ep['group']}: {entry['name']} = {ep['value']}"
    if ep["distribution"]:
        where += f"  (from {ep['distribution']})"
    lines = [f"{entry['name']} ({entry['kind']})", f"  entry point  {where}"]
    if entry.get("error"):
        return "\n".join([*lines, f"  ERROR: {entry['error']}"]) + "\n"
    lines.append(f"  about        {entry['description']}")
    if "env_id" in entry:
        lines.append(f"  gymnasium    {entry['env_id']}")
    if "offers" in entry:
        offers = entry["offers"]
        lines.append(f"  offers       {', '.join(offers) if isinstance(offers, list) else offers}")
    if "requires" in entry:
        needs = ", ".join(entry["requires"]) or "nothing"
        lines.append(f"  requires     {needs}")
        if entry["requires_depend_on_params"]:
            lines.append(f"               (depends on params: {entry['requirements_doc']})")
        if entry["checks_params_against_family"]:
            lines.append("               (its params are also checked against the family)")
        if entry.get("model_needed_because"):
            lines.append(f"  no model?    cannot run: {entry['model_needed_because']}")
    learns = [w for w in ("demonstrations", "interaction") if entry.get(f"uses_{w}")]
    if "uses_demonstrations" in entry:
        learned = " + ".join(learns) or "nothing (fixed options)"
        if entry.get("learns_from_doc"):
            lines.append(f"  learns from  {learned}, at the default params")
            lines.append(f"               (discovery_budget: {entry['learns_from_doc']})")
        else:
            lines.append(f"  learns from  {learned}")
    if entry.get("controls"):
        lines.append(
            f"  control of   {entry['controls']}: the same demonstrations, used without its "
            "objective (rank them side by side)"
        )
    if entry.get("starts_policy"):
        lines.append(
            "  starts       the learner's policy by behaviour cloning (no options); learners "
            f"with a policy to initialise: {', '.join(entry['learners_with_a_policy']) or 'none'}"
        )
        if entry["learners_without_a_policy"]:
            lines.append(
                "               refused by validate with "
                f"{', '.join(entry['learners_without_a_policy'])}: they have no policy to "
                "initialise (a Q table learned from scratch)"
            )
    if "clones_policy" in entry and "starts_policy" not in entry:
        lines.append(
            "  policy start "
            + (
                "clones its policy on the demonstrations first for bc_ppo"
                if entry["clones_policy"]
                else "none: no policy to initialise (a Q table), so validate refuses bc_ppo"
            )
        )
    if "zero_shot" in entry:
        lines.append(
            "  zero-shot    "
            + (
                "its untrained policy's returns, evaluation.zero_shot_episodes per run "
                "(leaderboard column)"
                if entry["zero_shot"]
                else "not measured (Learner.zero_shot not implemented)"
            )
        )
    if entry.get("uses_checkpoints"):
        lines.append("  checkpoints  keeps them in RUN_DIR (a rerun reuses them)")
    if "frame_budgets" in entry:
        budget = "episodes or frames" if entry["frame_budgets"] else "episodes only"
        lines.append(f"  budget       evaluation.{budget}")
    lines.append("  params (spec key: type, default, bounds; doc)")
    lines.extend(_section_lines(entry["params"]))
    return "\n".join(lines) + "\n"
