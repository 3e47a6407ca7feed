"""The contracts of a spec's components, on the spec's own family: ``opt-suite validate --deep``.

Validation proves a spec is well-formed; it cannot show that a plugin it names behaves. This runs
the contract checks (:mod:`opt_suite.testing.checks`) of every component a spec names with the
spec's params, on a few tasks of the spec's family rather than the contracts' tiny four rooms:

- the family (:func:`~opt_suite.testing.family.check_family`, the spec's ``tasks.vary``);
- the demonstration source, when a method uses demonstrations, on two train tasks;
- each method entry on two train tasks and the source's demonstrations;
- the learner on two test tasks, with the options of the first method entry that returns some
  (else primitives only).

Budgets are the contracts' (a few episodes, 3,000 interaction steps), not the spec's, so a deep
check costs about what a few cells do. Every failed check is one line naming the component;
nothing a plugin raises escapes as a traceback, and a plugin's ``SystemExit(0)`` or
``KeyboardInterrupt`` (one no signal caused) is that plugin's failed check.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import gymnasium

from opt_suite.interrupts import CODE_EXITS, raised_by_code, signals_noted
from opt_suite.testing.family import check_family
from opt_suite.testing.learner_checks import LearnerChecks, LearnerSetting
from opt_suite.testing.method_checks import MethodChecks, Setting
from opt_suite.testing.source_checks import SourceChecks, SourceSetting

if TYPE_CHECKING:
    from opt_suite.families.base import TaskFamily
    from opt_suite.spec import Spec

__all__ = ["DeepReport", "check_spec_components"]

TASKS = 2  # train and test tasks the components are checked on
MAX_TRAJECTORIES = 2  # per train task, whatever the spec asks


class DeepReport:
    """What :func:`check_spec_components` found: ``problems`` (one line each) and ``checked``."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.checked: list[str] = []

    def add(self, label: str, run: Callable[[], list[str]]) -> None:
        """Run one component's checks, each problem prefixed by ``label``."""
        self.checked.append(label)
        with signals_noted() as arrived:
            try:
                found = run()
            except Exception as exc:  # noqa: BLE001 - building the setting failed: report, go on
                found = [f"could not be checked: {type(exc).__name__}: {exc}"]
            except CODE_EXITS as exc:  # sys.exit(0) in a plugin is its failure, not a pass
                if not raised_by_code(exc, arrived):
                    raise
                found = [f"could not be checked: raised {type(exc).__name__}({exc}), not a signal"]
        self.problems += [f"{label}: {problem}" for problem in found]


def _empty_options(family: TaskFamily) -> Any:
    """Primitives only, as an option set over ``family``'s observations."""
    from opt_suite.options import TabularOptionSet
    from opt_suite.options.network import NetworkOptionSet

    actions = int(family.action_space.n)  # type: ignore[attr-defined]
    space = family.observation_space
    if isinstance(space, gymnasium.spaces.Discrete):
        return TabularOptionSet.empty(int(space.n), actions)
    return NetworkOptionSet.empty(actions, tuple(space.shape or ()))


def check_spec_components(spec: Spec) -> DeepReport:
    """Run the contract checks of every component ``spec`` names (see the module docstring)."""
    from opt_suite.runner.planning import reads_demonstrations, resolve_components

    report = DeepReport()
    components = resolve_components(spec)
    family = components.family(spec.family.params)
    t = spec.tasks
    report.add(f"family {family.name!r}", lambda: check_family(family, t.vary))
    all_train, all_test = family.make_tasks(t.vary, t.list, t.count, t.train, t.test, t.seed)
    train, test = tuple(all_train[:TASKS]), tuple(all_test[:TASKS])
    d = spec.demonstrations
    source = SourceChecks(
        components.demonstrations,
        d.params,
        SourceSetting(family, train),
        min(d.trajectories_per_task, MAX_TRAJECTORIES),
        d.max_steps,
    )
    if reads_demonstrations(spec, components.methods):
        report.add(f"demonstrations.source {d.source!r}", source.problems)

    def setting() -> Setting:
        return Setting(family, train, tuple(source.demonstrations))

    options = None
    for i, (cls, entry) in enumerate(zip(components.methods, spec.methods, strict=True)):
        method = MethodChecks(cls, entry.params, setting)
        report.add(f"methods[{i}] {entry.name!r} ({entry.method})", method.problems)
        if options is None:
            with signals_noted() as arrived:
                try:
                    found = method.discovery.options
                except Exception:  # noqa: BLE001 - reported above; the learner gets others
                    continue
                except CODE_EXITS as exc:
                    if not raised_by_code(exc, arrived):
                        raise
                    continue
            options = found if len(found) else None
    ev = spec.evaluation

    def learner_setting() -> LearnerSetting:
        empty = _empty_options(family)
        return LearnerSetting(family, test, empty if options is None else options, empty)

    learner = LearnerChecks(components.learner, ev.params, learner_setting, 5, ev.max_steps)
    report.add(f"evaluation.learner {ev.learner!r}", learner.problems)
    return report
