"""The typed, frozen form of a benchmark spec (what ``opt_suite.spec.load_spec`` returns).

Sections, in YAML order:

.. code-block:: yaml

    name: fourrooms-quick                 # identifier used in result paths and leaderboards
    description: one paragraph
    extends: base.yaml                    # optional: shared defaults, resolved against this folder
    family:
      name: fourrooms                     # a registered task family
      params: {layout: sutton-13x13, slip: 0.1}    # the family's Params
    tasks:
      count: 30                           # task variations in all
      train: 6                            # the first `train` are train tasks ...
      test: 24                            # ... the next `test` are test tasks
      seed: 0                             # task sampling seed
      vary: {goal_region: anywhere}       # the family's Variation
      list: [{start: [1, 1], goal: [7, 9]}]   # explicit TaskParams, used before sampled ones
    demonstrations:
      source: optimal                     # the registered demonstration source
      trajectories_per_task: 1
    methods:
      - {name: primitives, method: primitives}
      - {name: ours, method: offline_options, params: {lambda2: 100}}
    evaluation:
      learner: smdp_q_learning
      params: {alpha: 0.1, gamma: 0.99, epsilon: 0.1}
      episodes: 100
      max_steps: 1000
      seeds: 5
      interaction_budget: 100000
    report:
      baseline: primitives
      threshold: null
      positive_controls: [hallway-options]   # the validity check: controls that must beat ...
      clone: bc-option-never                 # ... the cloned option, or the family cannot tell

Omitted keys take the defaults below (``params`` omitted: the class's defaults); ``opt-suite
validate SPEC --resolved`` prints a spec with every default written out.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

from opt_suite.limits import (  # re-exported: their old home (the bounds of opt_suite.limits)
    MAX_BOOTSTRAP,
    MAX_BUDGET,
    MAX_EPISODES,
    MAX_SEED,
    MAX_SEEDS,
    MAX_STEPS,
    MAX_TASKS,
    MAX_ZERO_SHOT,
)
from opt_suite.params import param

__all__ = [
    "MAX_BOOTSTRAP",
    "MAX_BUDGET",
    "MAX_EPISODES",
    "MAX_SEED",
    "MAX_SEEDS",
    "MAX_STEPS",
    "MAX_TASKS",
    "MAX_ZERO_SHOT",
    "ZERO_SHOT_EPISODES",
    "FamilySpec",
    "TasksSpec",
    "DemonstrationsSpec",
    "MethodSpec",
    "EvaluationSpec",
    "ReportSpec",
    "Spec",
]


#: Zero-shot episodes per (method, seed, test task) by default: a few, so that they cost a small
#: fraction of an evaluation (3 of fourrooms-quick's 60 episodes); the mean pools seeds and tasks.
ZERO_SHOT_EPISODES = 3


@dataclasses.dataclass(frozen=True)
class FamilySpec:
    """``family``: which registered task family, and its family-wide ``Params``."""

    name: str = param(doc="registered task family name")
    params: Any = param(None, doc="the family's Params")


@dataclasses.dataclass(frozen=True)
class TasksSpec:
    """``tasks``: how many task variations, the train/test split, and how they are drawn."""

    count: int = param(doc="number of task variations", ge=1, le=MAX_TASKS)
    train: int = param(doc="number of train tasks (the first ones)", ge=1, le=MAX_TASKS)
    test: int = param(doc="number of test tasks (the next ones)", ge=1, le=MAX_TASKS)
    seed: int = param(0, doc="seed of task sampling", ge=0, le=MAX_SEED)
    vary: Any = param(None, doc="the family's Variation: how tasks are sampled")
    list: tuple[Any, ...] = param((), doc="explicit TaskParams, used before any sampled task")
    test_per_seed: bool = param(
        False,
        doc="draw the test tasks anew for every seed (from the seed index), so that an interval "
        "over seeds also covers the choice of test tasks; the train tasks stay shared",
        added_later=True,
    )


@dataclasses.dataclass(frozen=True)
class DemonstrationsSpec:
    """``demonstrations``: trajectories on each train task from a registered source."""

    source: str = param(
        "optimal", doc="registered demonstration source (opt-suite list shows them)"
    )
    params: Any = param(None, doc="the source's Params")
    trajectories_per_task: int = param(
        1, doc="trajectories on each train task (the paper uses one)", ge=1, le=10_000
    )
    max_steps: int = param(2000, doc="cap on one demonstration's length", ge=1, le=MAX_STEPS)


@dataclasses.dataclass(frozen=True)
class MethodSpec:
    """One entry of ``methods``: a leaderboard row running a registered method."""

    name: str = param(doc="unique display name of this entry (leaderboard row)")
    method: str = param(doc="registered method")
    params: Any = param(None, doc="the method's Params")


@dataclasses.dataclass(frozen=True)
class EvaluationSpec:
    """``evaluation``: the test-time learner and protocol, identical for every method."""

    learner: str = param("smdp_q_learning", doc="registered test-time learner")
    params: Any = param(None, doc="the learner's Params")
    episodes: int = param(
        100,
        doc="episodes per test task and seed (the budget, unless frames is given)",
        ge=1,
        le=MAX_EPISODES,
    )
    frames: int | None = param(
        None,
        doc="or: emulator frames per test task and seed (the budget instead of episodes; tasks "
        "with different frame skips then get equal budgets); the learner must support it",
        ge=1,
        le=MAX_BUDGET,
        added_later=True,
        replaces="episodes",
    )
    max_steps: int = param(
        1000, doc="primitive steps per episode before it is cut", ge=1, le=MAX_STEPS
    )
    seeds: int = param(5, doc="number of independent seeds (0..seeds-1)", ge=1, le=MAX_SEEDS)
    interaction_budget: int = param(
        100000,
        doc="env steps for methods that learn by interacting (over all train tasks)",
        ge=1,
        le=MAX_BUDGET,
    )
    zero_shot_episodes: int = param(
        ZERO_SHOT_EPISODES,
        doc="episodes of the learner's untrained policy over each option set, before any "
        "update, per test task and seed (the leaderboard's zero-shot column; its own seed "
        "stream, so the learning curves do not change); 0: none",
        ge=0,
        le=MAX_ZERO_SHOT,
        added_later=True,
    )


@dataclasses.dataclass(frozen=True)
class ReportSpec:
    """``report``: how the leaderboard compares methods."""

    baseline: str | None = param("primitives", doc="method entry the others are compared to")
    threshold: float | None = param(None, doc="return threshold for episodes_to_threshold")
    final_fraction: float = param(0.1, doc="fraction of last episodes in final_return", gt=0, le=1)
    bootstrap: int = param(
        2000, doc="bootstrap resamples for confidence intervals", ge=100, le=MAX_BOOTSTRAP
    )
    references: Literal["auto", "measure", "none"] = param(
        "auto",
        doc="reference returns for normalised scores (uniform-random policy = 0, the demonstration"
        " source's expert = 1, per seed and test task): auto measures them on tabular families"
        " with a source that trains no checkpointed agent; measure always (ppo_expert: one expert"
        " per test task and seed); none never",
        added_later=True,
    )
    equivalence_normalised: float = param(
        0.1,  # opt_suite.verdict.DEFAULT_MARGIN_NORMALISED (tests/test_verdict.py ties them)
        doc="equivalence margin of every verdict on the normalised scale: X and Y are equivalent"
        " when the interval of IQM(X) - IQM(Y) lies within +-margin (docs/results-and-gate.md)",
        gt=0,
        le=1,
        added_later=True,
    )
    equivalence_p: float = param(
        0.1,  # opt_suite.verdict.DEFAULT_MARGIN_P
        doc="equivalence margin of every verdict on the paired P (runs without references):"
        " equivalent when P's interval lies within [0.5 - margin, 0.5 + margin]",
        gt=0,
        le=0.5,
        added_later=True,
    )
    positive_controls: tuple[str, ...] = param(
        (),
        doc="method entries known to help on this family's test tasks (e.g. hallway-options): the"
        " validity check judges each against report.clone and, when none is better, the"
        " leaderboard says loudly that the family cannot discriminate (docs/results-and-gate.md)",
        added_later=True,
    )
    clone: str | None = param(
        None,
        doc="the cloned-option entry the positive controls must beat (e.g. bc-option-never);"
        " needed with positive_controls",
        added_later=True,
    )


@dataclasses.dataclass(frozen=True)
class Spec:
    """A whole benchmark: one task family, its tasks, the methods compared and the protocol."""

    name: str = param(doc="spec name")
    family: FamilySpec = param(doc="task family")
    tasks: TasksSpec = param(doc="task variations and split")
    methods: tuple[MethodSpec, ...] = param(doc="methods to compare")
    description: str = param("", doc="what this benchmark measures")
    demonstrations: DemonstrationsSpec = param(DemonstrationsSpec(), doc="demonstrations")
    evaluation: EvaluationSpec = param(EvaluationSpec(), doc="test-time evaluation protocol")
    report: ReportSpec = param(ReportSpec(), doc="leaderboard settings")
