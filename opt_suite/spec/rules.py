"""Spec-level rules: what must hold across sections, checked after every value is read.

Rules read the converter's values by key path, so they still run when some other part of the spec is
broken — every problem is reported in one go. Rules about one dataclass's own fields belong in that
dataclass's ``check()`` instead (see ``opt_suite.params``).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from opt_suite import registry
from opt_suite.demonstrations.base import DemonstrationSource
from opt_suite.families.base import TaskFamily
from opt_suite.families.capabilities import able, instance_label, unmet
from opt_suite.learners.base import Learner
from opt_suite.methods.base import Method
from opt_suite.spec import discovery_reads, entry_links, report_rules
from opt_suite.spec.convert import INVALID, Converter
from opt_suite.spec.errors import KeyPath, Problems
from opt_suite.spec.resolve import SpecTypes

__all__ = ["NAME_PATTERN", "check_spec"]

# Spec and method entry names end up in result paths and leaderboard rows.
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")

#: What the capability rules ask of a method, the learner and the demonstration source alike.
_Component = type[Method] | type[Learner] | type[DemonstrationSource]


def check_spec(conv: Converter, types: SpecTypes, problems: Problems) -> None:
    """Add a problem for every broken cross-section rule."""
    _Rules(conv, types, problems).run()


class _Rules:
    def __init__(self, conv: Converter, types: SpecTypes, problems: Problems) -> None:
        self.conv, self.types, self.problems = conv, types, problems
        self._built: TaskFamily | None = None
        self._tried = False

    def get(self, *path: str | int) -> Any:
        return self.conv.values.get(tuple(path), INVALID)

    def report(self, path: KeyPath, message: str) -> None:
        self.problems.add(self.conv.mark_of(path), path, message)

    def run(self) -> None:
        self.name(("name",), self.get("name"))
        self.task_counts()
        self.listed_tasks()
        self.per_seed_tasks()
        self.family_checks()
        self.capabilities()
        self.policy_starts()
        names = self.method_names()
        self.report_entries(names)
        self.frame_budget()
        self.discovery_budgets()
        self.final_fraction()

    def name(self, path: KeyPath, value: Any) -> None:
        if isinstance(value, str) and not NAME_PATTERN.fullmatch(value):
            self.report(
                path,
                "not usable as a file name (expected 1-64 letters, digits, '.', '_' or '-', "
                f"starting with a letter or digit, got {value!r})",
            )

    def task_counts(self) -> None:
        count, train, test = (
            self.get("tasks", "count"),
            self.get("tasks", "train"),
            self.get("tasks", "test"),
        )
        if INVALID not in (count, train, test) and train + test > count:
            self.report(
                ("tasks", "test"),
                f"more tasks used than sampled (expected train + test <= count, got "
                f"{train} + {test} > {count})",
            )

    def listed_tasks(self) -> None:
        count, listed = self.get("tasks", "count"), self.get("tasks", "list")
        if listed is not INVALID and count is not INVALID and len(listed) > count:
            self.report(
                ("tasks", "list"),
                f"more tasks listed than used (expected at most count = {count}, "
                f"got {len(listed)})",
            )

    def per_seed_tasks(self) -> None:
        """Test tasks drawn per seed are sampled: no listed task may be one of them."""
        listed, train = self.get("tasks", "list"), self.get("tasks", "train")
        per_seed = self.get("tasks", "test_per_seed")
        if per_seed is True and INVALID not in (listed, train) and len(listed) > train:
            self.report(
                ("tasks", "test_per_seed"),
                f"test tasks drawn per seed are sampled, so tasks.list may hold train tasks only "
                f"(expected at most train = {train} listed tasks, got {len(listed)})",
            )

    def family_checks(self) -> None:
        """The family's own judgement of ``tasks.vary`` and of each listed task."""
        family = self._family()
        if family is None:
            return
        vary, listed = self.get("tasks", "vary"), self.get("tasks", "list")
        self._family_hook("check_variation", family.check_variation, vary, ("tasks", "vary"))
        for i, task in enumerate(() if listed is INVALID else listed):
            self._family_hook("check_task", family.check_task, task, ("tasks", "list", i))

    def _family(self) -> TaskFamily | None:
        if not self._tried:
            self._built, self._tried = self._build_family(), True
        return self._built

    def _build_family(self) -> TaskFamily | None:
        family_cls, params = self.types.classes.get(("family",)), self.get("family", "params")
        if family_cls is None or params is INVALID:
            return None
        try:
            return family_cls(params)
        except Exception as exc:  # a family that rejects its params beyond their own check()
            self.report(("family", "params"), f"the family rejects these params: {exc}")
            return None

    def capabilities(self) -> None:
        """Each method and the learner against what the family offers (exact model, spaces)."""
        family = self._family()
        if family is None:  # unknown family, or params already reported
            return
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # e.g. ale-py warning about an unknown ROM
                family.capabilities  # noqa: B018  (the spaces of a plugin may fail to build)
        except Exception as exc:
            # Bad family params are reported where they are written; only an otherwise valid
            # family whose spaces fail is a problem of its own.
            if not self.problems.any_under(("family",)):
                self.report(("family", "name"), f"the family's spaces cannot be built: {exc!r}")
            return
        # (the key naming the component, the key of its params, its class, its params)
        components: list[tuple[KeyPath, KeyPath, _Component | None, Any]] = [
            (
                ("methods", i, "method"),
                ("methods", i, "params"),
                self._class(("methods", i), Method),
                self.get("methods", i, "params"),
            )
            for i in range(_length(self.conv, ("methods",)))
        ]
        learner: type[Learner] | None = self._class(("evaluation",), Learner)
        components.append(
            (
                ("evaluation", "learner"),
                ("evaluation", "params"),
                learner,
                self.get("evaluation", "params"),
            )
        )
        methods: list[type[Method] | None] = [
            self._class(("methods", i), Method) for i in range(len(components) - 1)
        ]
        if discovery_reads.reads_demonstrations(components[:-1]):  # the method entries
            source: type[DemonstrationSource] | None = self._class(
                ("demonstrations",), DemonstrationSource
            )
            params = self.get("demonstrations", "params")
            components.append(
                (("demonstrations", "source"), ("demonstrations", "params"), source, params)
            )
        for path, params_path, cls, params in components:
            if cls is None:
                continue
            if self._params_fit_family(cls, params, params_path, family):
                if path == ("demonstrations", "source"):
                    self._no_demonstrations(methods, family, "its params do not fit the family")
                continue  # the params already say what does not fit, at their own keys
            needs = cls.requires if params is INVALID else cls.requirements(params)
            problem = unmet(cls.name, needs, family)
            if problem:
                shown = problem
                if path not in self.conv.marks:  # the spec leaves it to the default
                    shown = f"{cls.name} (the default){problem.removeprefix(cls.name)}"
                self.report(path, f"{shown}; {_those_that_can(path, family)}")
                if path == ("demonstrations", "source"):
                    self._no_demonstrations(methods, family, problem)

    def _no_demonstrations(
        self, methods: list[type[Method] | None], family: TaskFamily, why: str
    ) -> None:
        """Each demonstration-fair control (``Method.controls``), when the source gives none.

        A control such as ``bc_option`` is nothing but a use of the demonstrations: the error
        names it at its own key, besides the source's at ``demonstrations.source``.
        """
        source = self.get("demonstrations", "source")
        for i, cls in enumerate(methods):
            # A method already reported at its own key (e.g. needing a model) is not told twice.
            if cls is not None and cls.controls and not self.problems.any_under(("methods", i)):
                self.report(
                    ("methods", i, "method"),
                    f"{cls.name} learns from demonstrations, and family "
                    f"{instance_label(family)} gives none from demonstrations.source {source} "
                    f"({why}); expected a source that fits "
                    f"the family ({_those_that_can(('demonstrations', 'source'), family)})",
                )

    def policy_starts(self) -> None:
        """A method that starts the learner's policy (``bc_ppo``) needs a learner that has one."""
        learner: type[Learner] | None = self._class(("evaluation",), Learner)
        if learner is None or learner.clones_policy:
            return
        for i in range(_length(self.conv, ("methods",))):
            cls = self._class(("methods", i), Method)
            if cls is not None and cls.starts_policy:
                self.report(
                    ("methods", i, "method"),
                    f"{cls.name} starts the learner's policy from behaviour cloning, and learner "
                    f"{learner.name} has no policy to initialise (it learns a Q table from "
                    "scratch); expected a learner that clones one, e.g. tf_agents",
                )

    def _class(self, section: KeyPath, base: type) -> Any:
        """The class loaded for ``section`` if it subclasses ``base`` (the registry sees to it)."""
        cls = self.types.classes.get(section)
        return cls if isinstance(cls, type) and issubclass(cls, base) else None

    def _params_fit_family(
        self, cls: _Component, params: Any, params_path: KeyPath, family: TaskFamily
    ) -> bool:
        """Report what a component's ``check_family(params, family)`` finds; True if anything.

        The hook names keys below the component's params (``"features"``, ``"ppo.network"``), so
        that a value that cannot work with this family (conv options on index observations, a
        network whose convolutions do not fit the frames) is reported where it is written, not
        at run time.
        """
        if params is INVALID:
            return False
        try:
            found = [(str(key), str(message)) for key, message in cls.check_family(params, family)]
        except Exception as exc:  # a plugin's check must not turn into a traceback
            self.report(params_path, f"{cls.name}'s check_family failed: {exc!r}")
            return True
        for key, message in found:
            self.report(params_path + tuple(k for k in key.split(".") if k), message)
        return bool(found)

    def _family_hook(
        self,
        hook: str,
        check: Callable[[Any], Iterable[tuple[str, str]]],
        value: Any,
        path: KeyPath,
    ) -> None:
        if value is INVALID:
            return
        try:
            found = [(str(field), str(message)) for field, message in check(value)]
        except Exception as exc:  # a plugin's check must not turn into a traceback
            self.report(path, f"the family's {hook} failed: {exc!r}")
            return
        for field, message in found:
            self.report(path + (field,) if field else path, message)

    def method_names(self) -> list[str] | None:
        """The entry names, in order (None when one of them is unreadable)."""
        methods = self.get("methods")
        if methods is not INVALID and not methods:
            self.report(("methods",), "no methods (expected at least one method entry)")
        names: list[str] = []
        first_at: dict[str, int] = {}
        complete = True
        for i in range(_length(self.conv, ("methods",))):
            name = self.get("methods", i, "name")
            if isinstance(name, str):
                self._entry_name(i, name, first_at)
                names.append(name)
            else:
                complete = False
        return names if complete else None

    def _entry_name(self, i: int, name: str, first_at: dict[str, int]) -> None:
        path = ("methods", i, "name")
        self.name(path, name)
        if name in first_at:
            self.report(
                path,
                f"duplicate method entry name {name!r} (expected unique names; also "
                f"methods[{first_at[name]}].name)",
            )
        else:
            first_at[name] = i

    def report_entries(self, names: list[str] | None) -> None:
        """Entries named by ``report`` (report_rules.py) and by other entries (entry_links.py)."""
        baseline = self.get("report", "baseline")
        found = report_rules.baseline_problems(baseline, names) if isinstance(baseline, str) else []
        controls, clone = self.get("report", "positive_controls"), self.get("report", "clone")
        if INVALID not in (controls, clone):  # else reported where it is written
            found += report_rules.validity_problems(controls, clone, names)
        found += entry_links.entry_link_problems(self.conv.values, self.types.classes, names)
        for path, message in found:
            self.report(path, message)

    def frame_budget(self) -> None:
        """``evaluation``: the budget as episodes or as frames, not both; a learner that can."""
        frames = self.get("evaluation", "frames")
        if frames is INVALID or frames is None:
            return
        if ("evaluation", "episodes") in self.conv.marks:
            self.report(
                ("evaluation", "frames"),
                "give the evaluation budget as episodes or as frames, not both (expected exactly "
                f"one of evaluation.episodes and evaluation.frames, got episodes = "
                f"{self.get('evaluation', 'episodes')} and frames = {frames})",
            )
        learner: type[Learner] | None = self._class(("evaluation",), Learner)
        if learner is not None and not learner.frame_budgets:
            self.report(
                ("evaluation", "frames"),
                f"learner {learner.name} runs a number of episodes and cannot stop at a frame "
                "budget "
                "(expected evaluation.episodes, or a learner with frame budgets such as "
                "tf_agents)",
            )

    def discovery_budgets(self) -> None:
        """A method's declared discovery env steps fit ``evaluation.interaction_budget``."""
        from opt_suite.spec.schema import EvaluationSpec

        budget = self.get("evaluation", "interaction_budget")
        if budget is INVALID:
            if ("evaluation", "interaction_budget") in self.conv.marks:
                return  # a bad budget is reported where it is written
            budget = EvaluationSpec.__dataclass_fields__["interaction_budget"].default
        for i in range(_length(self.conv, ("methods",))):
            cls: type[Method] | None = self._class(("methods", i), Method)
            params = self.get("methods", i, "params")
            if cls is None or params is INVALID:
                continue
            declared = cls.discovery_budget(params)
            if declared.env_steps is not None and declared.env_steps > budget:
                key = ("methods", i, "params", *((declared.key,) if declared.key else ()))
                self.report(
                    key,
                    f"{cls.name} declares a discovery budget of {declared.env_steps} env steps, "
                    f"above evaluation.interaction_budget = {budget} (expected at most that; "
                    "lower one or raise the other)",
                )

    def final_fraction(self) -> None:
        fraction, episodes = (
            self.get("report", "final_fraction"),
            self.get("evaluation", "episodes"),
        )
        default = ""
        if fraction is INVALID and ("report",) not in self.conv.marks:
            # No report section: its default applies. The stored (canonical) spec spells it out,
            # so a spec that passed here must not fail when a later command reads it back.
            from opt_suite.spec.schema import ReportSpec

            fraction, default = ReportSpec().final_fraction, " (the default)"
        if self.get("evaluation", "frames") not in (None, INVALID):
            return  # a frame budget: the report's curves are points of the frame axis
        if INVALID not in (fraction, episodes) and fraction * episodes < 1:
            self.report(
                ("report", "final_fraction"),
                f"selects no episode (expected final_fraction * evaluation.episodes >= 1, got "
                f"{fraction}{default} * {episodes})",
            )


#: The registry group of the component each capability-checked key names.
_GROUPS = {
    "methods": (registry.METHODS, "methods"),
    "evaluation": (registry.LEARNERS, "learners"),
    "demonstrations": (registry.DEMONSTRATION_SOURCES, "sources"),
}


def _those_that_can(path: KeyPath, family: TaskFamily) -> str:
    """``sources that can: q_learning, scripted`` — what would fit where ``path`` does not."""
    group, plural = _GROUPS[str(path[0])]
    names = able(group, family)
    return f"{plural} that can: {', '.join(names)}" if names else f"no registered {plural} can"


def _length(conv: Converter, path: KeyPath) -> int:
    """How many items the list at ``path`` had in the YAML (read or not)."""
    count = 0
    while path + (count,) in conv.marks:
        count += 1
    return count
