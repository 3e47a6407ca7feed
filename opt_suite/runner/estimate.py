"""How much work a spec is, before any of it is done: cells, env steps, the largest array.

``opt-suite validate`` prints the estimate of each valid spec; ``opt-suite run`` refuses, before
computing anything, a spec whose largest array (times the cells computed at once) cannot fit in
the memory available, instead of dying half-way with the machine swapping.

The largest arrays of the tabular protocol are, per cell:

* the test-time learner's Q table: test tasks x states x (actions + options) float64 (SMDP
  Q-learning runs all test tasks of a cell at once);
* an option set: options x states x actions float64 (mu; beta is smaller);
* the task model: states x actions x outcomes (int32 + 2 float64);
* whatever a method, the test-time learner or the demonstration source declares through
  :meth:`~opt_suite.component.Component.memory_estimate` (``(bytes, what)`` or None; on a
  tabular family eigenoptions' dense states x states Laplacian, on any family the PPO agents'
  weights with Adam's moments and one update's batch);
* the env itself where its family measures it (``TaskFamily.env_memory``: the ``gymnasium``
  family's env as built at validate, whose kwargs may size it).

Options are counted by each method's :meth:`Method.option_count` (None: 0).

The figures are upper bounds of the arrays named, not of the process: Python, TensorFlow and the
store add a few hundred megabytes per worker.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from opt_suite.component import ProblemSize
from opt_suite.spec import discovery_reads

if TYPE_CHECKING:
    from opt_suite.demonstrations.base import DemonstrationSource
    from opt_suite.learners.base import Learner
    from opt_suite.methods.base import Method
    from opt_suite.spec import Spec

__all__ = [
    "COSTLY_FACTOR",
    "WorkEstimate",
    "WorkTooLarge",
    "available_memory",
    "costly_discoveries",
    "discovery_steps",
    "estimate_work",
    "memory_problem",
    "reads_demonstrations",
    "stage_units",
]


class WorkTooLarge(ValueError):
    """A spec's work cannot fit in this machine's memory; the message says by how much."""


FLOAT = 8


@dataclasses.dataclass(frozen=True)
class WorkEstimate:
    """A spec's work: ``cells``, at most ``env_steps`` steps (experts included), largest array."""

    cells: int
    env_steps: int
    largest_bytes: int
    largest: str
    expert_steps: int = 0  # of env_steps: the experts' training (demonstrations.params)

    def describe(self) -> str:
        """One line for people."""
        experts = (
            f" ({self.expert_steps:.3g} of them training the experts)" if self.expert_steps else ""
        )
        return (
            f"{self.cells} cells, at most {self.env_steps:.3g} env steps{experts}, largest array"
            f" {_size(self.largest_bytes)} ({self.largest})"
        )


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError


def estimate_work(
    spec: Spec,
    seeds: Sequence[int],
    method_classes: Sequence[type[Method]],
    num_states: int | None,
    num_actions: int | None,
    outcomes: int = 1,
    networks: Sequence[tuple[str, type[Learner] | type[DemonstrationSource], Any]] = (),
    observation: tuple[tuple[int, ...], int] | None = None,
    env: tuple[int, str] | None = None,
    expert_steps: int = 0,
    references: bool | None = None,
) -> WorkEstimate:
    """The work of running ``spec`` for ``seeds``.

    Args:
      spec: the loaded ``Spec``.
      seeds: seed indices to run.
      method_classes: the registered class of each method entry.
      num_states: states of the tabular model (None: the family is not tabular).
      num_actions: its primitive actions (None: not tabular).
      outcomes: its outcomes per (state, action).
      networks: (spec key, class, params) of the learner and the source, whose
        ``memory_estimate`` is counted on ``observation`` (methods' on the tabular model).
      observation: (one observation's shape, primitive actions) of the family.
      env: (bytes, what) of one env of the family (``TaskFamily.env_memory``), if it counts.
      expert_steps: env steps the demonstration source trains its expert for, per train task
        (:meth:`DemonstrationSource.training_steps`); counted when demonstrations are used.
      references: whether the run plans reference cells (``references_wanted``); None: whenever
        ``report.references`` is not ``none``.
    """
    tasks = spec.tasks
    methods = len(spec.methods)
    n_seeds = len(seeds)
    uses_demos = reads_demonstrations(spec, method_classes)
    if references is None:
        references = spec.report.references != "none"
    # As runner.plan.build_plan: per seed, the demonstrations (when used), then per method entry
    # one discovery cell and one evaluation cell per test task, then one references cell per
    # test task (when measured).
    cells = n_seeds * (int(uses_demos) + methods * (1 + tasks.test) + references * tasks.test)
    units = stage_units(spec, method_classes, expert_steps)
    steps = n_seeds * methods * tasks.test * units["evaluation"]
    steps += n_seeds * sum(units["discovery"])
    experts = 0
    if uses_demos:
        steps += n_seeds * units["demonstrations"]
        experts = n_seeds * tasks.train * int(expert_steps)
    if references:
        steps += n_seeds * tasks.test * units["references"]
        experts += n_seeds * tasks.test * units["reference_expert"]  # every expert trained
    candidates = [(0, "none")]
    if num_states is not None and num_actions is not None:
        S, A = int(num_states), int(num_actions)
        options = max(
            (
                cls.option_count(entry.params) or 0
                for cls, entry in zip(method_classes, spec.methods, strict=True)
            ),
            default=0,
        )
        q_table = "the learner's Q table: test tasks x states x (actions + options)"
        model = "a task model: states x actions x outcomes"
        candidates += [
            (tasks.test * S * (A + options) * FLOAT, q_table),
            (options * S * A * FLOAT, "an option set: options x states x actions"),
            (S * A * max(1, outcomes) * (4 + 2 * FLOAT), model),
        ]
        tabular = ProblemSize(A, () if observation is None else tuple(observation[0]), S)
        for cls, entry in zip(method_classes, spec.methods, strict=True):
            hint = cls.memory_estimate(entry.params, tabular)
            if hint is not None:
                candidates.append((int(hint[0]), f"{entry.name}: {hint[1]}"))
    if observation is not None:
        shape, actions = observation
        problem = ProblemSize(int(actions), tuple(shape), num_states)
        for key, component, params in networks:
            found = component.memory_estimate(params, problem)
            if found is not None:
                candidates.append((int(found[0]), f"{key}: {found[1]}"))
    if env is not None:
        candidates.append((int(env[0]), env[1]))
    size, what = max(candidates, key=lambda c: c[0])
    return WorkEstimate(cells, int(steps), int(size), what, experts)


def stage_units(
    spec: Spec, method_classes: Sequence[type[Method]], expert_steps: int = 0
) -> dict[str, Any]:
    """The env steps one cell of each stage takes at most (the time model prices cells by them).

    ``evaluation``: one learner's run on a test task (its episodes or frames) and its zero-shot
    episodes; ``discovery``: each method entry's (:func:`discovery_steps`, in ``spec.methods``
    order); ``demonstrations``: a seed's experts (``expert_steps`` per train task) and their
    demonstrations; ``references``: one test task's expert demonstrations, and with ``measure``
    its own expert's training (``reference_expert``, counted apart too).
    """
    ev, d = spec.evaluation, spec.demonstrations
    per_run = ev.episodes * ev.max_steps if ev.frames is None else ev.frames
    per_run += ev.zero_shot_episodes * ev.max_steps  # the untrained policy's episodes
    demonstrated = d.trajectories_per_task * d.max_steps
    # The normalised scores' reference returns (runner/references.py): the source's expert
    # demonstrates every (seed, test task); with `measure`, a source that trains its experts
    # (ppo_expert: params.frames) trains one per test task and seed. `auto` measures only
    # tabular families, where the random policy is evaluated exactly (no env steps).
    reference_expert = 0
    if spec.report.references == "measure":
        reference_expert = int(getattr(d.params, "frames", 0) or 0)
    return {
        "evaluation": int(per_run),
        "discovery": [
            discovery_steps(cls, entry.params, spec)
            for cls, entry in zip(method_classes, spec.methods, strict=True)
        ],
        "demonstrations": spec.tasks.train * (int(expert_steps) + demonstrated),
        "references": demonstrated + reference_expert,
        "reference_expert": reference_expert,
    }


def available_memory() -> int | None:
    """Bytes of memory available to new work (Linux ``MemAvailable``), or None if unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def memory_problem(estimate: WorkEstimate, workers: int, available: int | None) -> str | None:
    """Why the spec cannot fit in memory with ``workers`` cells at once, or None if it can."""
    if available is None:
        return None
    at_once = max(1, workers)
    if estimate.largest_bytes * at_once <= available:
        return None
    fewer = (
        f"; with --workers {available // estimate.largest_bytes} it would"
        if estimate.largest_bytes <= available
        else ""
    )
    return (
        f"the spec cannot fit in memory: its largest array is {_size(estimate.largest_bytes)}"
        f" ({estimate.largest}), {at_once} cell{'s' if at_once > 1 else ''} at once need"
        f" {_size(estimate.largest_bytes * at_once)}, and {_size(available)} is available"
        f"{fewer}; shrink the spec (states, test tasks, options)"
    )


#: ``validate`` warns about a method entry whose discovery takes more than this many times the
#: median steps of the spec's other methods that declare theirs.
COSTLY_FACTOR = 20


def costly_discoveries(
    spec: Spec, method_classes: Sequence[type[Method]], factor: float = COSTLY_FACTOR
) -> list[str]:
    """One warning per method entry whose discovery steps are > ``factor`` x the others' median.

    The steps are each method's :meth:`~opt_suite.methods.base.Method.discovery_steps` at the
    entry's params; the median is over the spec's other entries that declare theirs (none: no
    warning). Why a warning, not an error: a long discovery is a choice (the authors'
    settings), but usually an unlooked-at default sized for larger tasks (LOVE's 20,000 steps).
    """
    declared = []
    for entry, cls in zip(spec.methods, method_classes, strict=True):
        steps = cls.discovery_steps(entry.params)
        if steps is not None:
            declared.append((entry, cls, steps))
    warnings = []
    for i, (entry, cls, steps) in enumerate(declared):
        others = [s.steps for j, (_, _, s) in enumerate(declared) if j != i]
        median = float(np.median(others)) if others else 0.0
        if median > 0 and steps.steps > factor * median:
            field = type(entry.params).__dataclass_fields__.get(steps.key)
            value = getattr(entry.params, steps.key, None)
            default = " (its default)" if field is not None and value == field.default else ""
            warnings.append(
                f"method {entry.name!r} ({cls.name}): discovery takes up to {steps.steps} "
                f"gradient steps, {steps.steps / median:.0f}x the median of the spec's other "
                f"{len(others)} methods that declare theirs ({median:g}); "
                f"{steps.key} = {value}{default}: lower params.{steps.key} for a quicker run"
            )
    return warnings


def reads_demonstrations(spec: Spec, method_classes: Sequence[type[Method]]) -> bool:
    """Whether any entry's discovery reads the demonstrations (``discovery_budget`` of its params).

    Only then does the plan have demonstrations cells (:func:`.plan.build_plan`), and only then
    are the demonstration source's experts trained, priced and checked (``validate`` applies the
    same rule, :mod:`opt_suite.spec.discovery_reads`).
    """
    entries = zip(method_classes, [entry.params for entry in spec.methods], strict=True)
    return discovery_reads.reads_demonstrations(entries)


def discovery_steps(method: type[Method], params: Any, spec: Any) -> int:
    """The env steps the runner lets one discovery take (its counting envs stop there).

    A method's declared budget (``Method.discovery_budget``) when it declares one, never above
    ``evaluation.interaction_budget`` (``validate`` refuses more); the interaction budget for an
    interacting method that declares none; 0 for the rest.
    """
    declared = method.discovery_budget(params).env_steps
    if declared == 0:
        return 0
    budget = int(spec.evaluation.interaction_budget)
    return budget if declared is None else min(int(declared), budget)
