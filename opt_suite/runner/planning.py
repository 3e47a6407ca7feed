"""From a spec to what the runner will do: its components, its cells, its cost.

Resolving the registered classes a spec names, drawing its tasks and planning its cells
(:mod:`.plan`), and pricing the plan (:mod:`.estimate`'s work, :mod:`.cost_model`'s time) before
anything runs. The runner
(:mod:`.protocol`), the reference returns (:mod:`.references`), ``validate``, ``validate --deep``
and :class:`~opt_suite.run_view.RunView` all plan here, so that every reader names the same cells.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import gymnasium

from opt_suite import registry
from opt_suite.families.base import Task, TaskFamily, exact_model
from opt_suite.runner.components import Components
from opt_suite.runner.cost_model import cell_units, cost_key
from opt_suite.runner.estimate import (
    WorkEstimate,
    discovery_steps,
    estimate_work,
    reads_demonstrations,
    stage_units,
)
from opt_suite.runner.plan import Plan, build_plan
from opt_suite.runner.references import references_wanted
from opt_suite.runner.task_draws import SpecTasks, draw_tasks
from opt_suite.spec import Spec

if TYPE_CHECKING:
    from opt_suite.demonstrations.base import DemonstrationSource
    from opt_suite.learners.base import Learner

__all__ = [
    "Components",
    "cell_prices",
    "code_modules",
    "cost_keys",
    "discovery_steps",
    "plan_spec",
    "reads_demonstrations",
    "resolve_components",
    "work_estimate",
]


def resolve_components(spec: Spec) -> Components:
    """The family, method and learner classes of ``spec``.

    Raises:
      opt_suite.registry.RegistryError: a name is not registered or its module fails to import.
    """
    return Components(
        family=registry.load(registry.FAMILIES, spec.family.name),
        methods=tuple(registry.load(registry.METHODS, m.method) for m in spec.methods),
        learner=registry.load(registry.LEARNERS, spec.evaluation.learner),
        demonstrations=registry.load(registry.DEMONSTRATION_SOURCES, spec.demonstrations.source),
    )


def code_modules(components: Components) -> list[str]:
    """The top-level packages whose code computes the cells (every Ray node must run them)."""
    classes = (
        components.family,
        *components.methods,
        components.learner,
        components.demonstrations,
    )
    return sorted({"opt_suite"} | {cls.__module__.split(".")[0] for cls in classes})


def plan_spec(
    spec: Spec, seeds: Sequence[int], components: Components
) -> tuple[TaskFamily, Sequence[Task], SpecTasks, Plan]:
    """The family, its train tasks, every seed's test tasks, and the cells planned for ``seeds``.

    Every reader that must name the same cells as the run (the run itself, ``option-usage``'s
    replay) builds them here, so that they cannot drift apart.
    """
    family = components.family(spec.family.params)
    tasks = draw_tasks(family, spec.tasks)
    train = list(tasks.train)
    first = tasks.test(seeds[0]) if seeds else ()
    plan = build_plan(
        spec,
        seeds,
        train,
        {seed: tasks.test(seed) for seed in seeds},
        components.methods,
        family_cls=components.family,
        learner_cls=components.learner,
        source_cls=components.demonstrations,
        references=bool(first) and references_wanted(spec, components, family, first[0]),
    )
    return family, train, tasks, plan


def work_estimate(
    spec: Spec,
    seeds: Sequence[int],
    components: Components,
    family: TaskFamily,
    train: Sequence[Task],
) -> WorkEstimate:
    """The estimate of :mod:`.estimate` for a spec whose family and train tasks are built."""
    model = exact_model(family, train[0]) if train else None
    shape = (None, None, 1) if model is None else model.next_state.shape
    index_space, action_space = family.observation_space, family.action_space
    if model is None and isinstance(index_space, gymnasium.spaces.Discrete):
        # No model but index observations: the tabular learners' Q and the options' tables are
        # over the n indices all the same (one outcome: no model array is built).
        if isinstance(action_space, gymnasium.spaces.Discrete):
            shape = (int(index_space.n), int(action_space.n), 1)
    networks: list[tuple[str, type[Learner] | type[DemonstrationSource], Any]] = [
        ("evaluation", components.learner, spec.evaluation.params)
    ]
    if reads_demonstrations(spec, components.methods):
        networks.append(("demonstrations", components.demonstrations, spec.demonstrations.params))
    actions = family.action_space
    observation = (
        tuple(family.observation_space.shape or ()),
        int(actions.n) if isinstance(actions, gymnasium.spaces.Discrete) else 1,
    )
    states, num_actions, outcomes = shape
    d = spec.demonstrations
    expert_steps = components.demonstrations.training_steps(d.params, d.max_steps)
    first = train[0] if train else None  # a model on a train task is one on the test tasks
    return estimate_work(
        spec,
        seeds,
        components.methods,
        states,
        num_actions,
        outcomes,
        networks,
        observation,
        env=family.env_memory(),
        expert_steps=expert_steps,
        references=first is not None and references_wanted(spec, components, family, first),
    )


def cost_keys(
    spec: Spec, components: Components, plan: Plan
) -> dict[str, tuple[tuple[str, str, str, str], float]]:
    """Each planned cell's (cost key, env steps): what :mod:`.cost_model` prices it by."""
    d = spec.demonstrations
    expert = components.demonstrations.training_steps(d.params, d.max_steps)
    per_stage = stage_units(spec, components.methods, expert)
    types = [entry.method for entry in spec.methods]
    return {c.cell_id: (cost_key(c, spec, types), cell_units(c, per_stage)) for c in plan.cells}


def cell_prices(spec: Spec, components: Components, plan: Plan) -> dict[str, float] | None:
    """Each cell's price under the committed calibration (the ETA's), or None when unknown."""
    from opt_suite.runner.cost_model import load_calibration

    calibration = load_calibration()
    if calibration is None:
        return None
    try:
        keyed = cost_keys(spec, components, plan)
    except Exception:  # a plugin's training_steps or discovery_budget failing: the ETA counts cells
        return None
    return {cell_id: calibration.price(*priced)[0] for cell_id, priced in keyed.items()}
