"""Small fake families, methods and learners, so spec tests do not depend on the real ones.

``fake_registry()`` swaps ``opt_suite.registry.load``/``names`` for a table of these classes; the
spec loader looks everything up through ``opt_suite.registry``, exactly as with real entry points.
Like every plugin they subclass the contracts (their hooks are the base classes' defaults); what
only running would need raises.
"""

from __future__ import annotations

import contextlib
import dataclasses
import textwrap
from typing import Literal

import pytest
from gymnasium import spaces

from opt_suite import registry
from opt_suite.demonstrations.base import DemonstrationSource
from opt_suite.families.base import TaskFamily
from opt_suite.learners.base import Learner
from opt_suite.methods.base import Method
from opt_suite.methods.budget import DiscoveryBudget
from opt_suite.params import param


@dataclasses.dataclass(frozen=True)
class GridParams:
    layout: Literal["small", "large"] = param("small", doc="grid layout")
    size: int = param(8, doc="side length", ge=2, le=100)
    slip: float = param(0.1, doc="probability of a random move", ge=0, lt=1)
    step_reward: float = param(-1.0, doc="reward per step")
    walls: tuple[tuple[int, int], ...] = param((), doc="extra wall cells")
    max_steps: int | None = param(None, doc="episode cap", ge=1)
    diagonal: bool = param(False, doc="allow diagonal moves")

    def check(self) -> list[tuple[str, str]]:
        if self.layout == "large" and self.size < 10:
            return [("size", f"the large layout needs size >= 10 (got {self.size})")]
        return []


@dataclasses.dataclass(frozen=True)
class GridVariation:
    starts: Literal["random", "fixed"] = param("random", doc="how starts are drawn")
    goals: Literal["random", "fixed"] = param("random", doc="how goals are drawn")
    goal: tuple[int, int] | None = param(None, doc="the fixed goal", ge=0)

    def check(self) -> list[tuple[str, str]]:
        if (self.goals == "fixed") != (self.goal is not None):
            return [("goal", "give a goal exactly when goals is 'fixed'")]
        return []


@dataclasses.dataclass(frozen=True)
class GridTask:
    start: tuple[int, int] = param(doc="start cell (row, col)", ge=0)
    goal: tuple[int, int] = param(doc="goal cell (row, col)", ge=0)


class FakeGrid(TaskFamily):
    name = "grid"
    description = "A fake grid family for spec tests."
    env_id = "fake/Grid-v0"
    Params = GridParams
    Variation = GridVariation
    TaskParams = GridTask

    @property
    def observation_space(self) -> spaces.Space:
        return spaces.Discrete(self.params.size**2)

    @property
    def action_space(self) -> spaces.Space:
        return spaces.Discrete(4)

    def sample_tasks(self, variation, count, rng):
        raise NotImplementedError("a spec-test fake")

    def make_env(self, task, **kwargs):
        raise NotImplementedError("a spec-test fake")

    def check_variation(self, variation: GridVariation) -> list[tuple[str, str]]:
        problems = list(variation.check())  # as TaskFamily.check_variation does by default
        if variation.goal is not None and max(variation.goal) >= self.params.size:
            problems.append(("goal", f"cell {variation.goal} is outside the grid"))
        return problems

    def check_task(self, task: GridTask) -> list[tuple[str, str]]:
        size = self.params.size
        return [
            (field, f"cell {cell} is outside the {size}x{size} grid")
            for field, cell in (("start", task.start), ("goal", task.goal))
            if max(cell) >= size
        ]


@dataclasses.dataclass(frozen=True)
class NoParams:
    pass


@dataclasses.dataclass(frozen=True)
class OptionsParams:
    lambda1: float = param(0.0, doc="KL weight", ge=0)
    lambda2: float = param(100.0, doc="probability weight", gt=0)
    delta: float = param(0.1, doc="relative improvement threshold", gt=0, lt=1)
    epochs: int = param(50, doc="epochs per option", ge=1)
    hidden: tuple[int, ...] = param((32, 32), doc="hidden layer sizes", ge=1)
    optimizer: Literal["adam", "sgd"] = param("adam", doc="optimizer")


class _FakeMethod(Method):
    def discover(self, context):
        raise NotImplementedError("a spec-test fake")


class FakePrimitives(_FakeMethod):
    name = "primitives"
    description = "No options."
    Params = NoParams


class FakeOptions(_FakeMethod):
    name = "options"
    description = "Fake option learner."
    Params = OptionsParams

    @classmethod
    def discovery_budget(cls, params):
        return DiscoveryBudget(True, 0)


@dataclasses.dataclass(frozen=True)
class LearnerParams:
    alpha: float = param(0.1, doc="step size", gt=0, le=1)
    gamma: float = param(0.99, doc="discount", gt=0, le=1)
    epsilon: float = param(0.1, doc="exploration", ge=0, le=1)


class FakeLearner(Learner):
    name = "smdp_q_learning"
    description = "Fake learner."
    Params = LearnerParams

    def run(self, context):
        raise NotImplementedError("a spec-test fake")


@dataclasses.dataclass(frozen=True)
class SourceParams:
    gamma: float = param(0.99, doc="discount", gt=0, le=1)


class FakeSource(DemonstrationSource):
    name = "optimal"
    description = "Fake demonstration source."
    Params = SourceParams

    def collect(self, context):
        raise NotImplementedError("a spec-test fake")


TABLE = {
    registry.FAMILIES: {"grid": FakeGrid},
    registry.METHODS: {"primitives": FakePrimitives, "options": FakeOptions},
    registry.LEARNERS: {"smdp_q_learning": FakeLearner},
    registry.DEMONSTRATION_SOURCES: {"optimal": FakeSource},
}


KINDS = {
    registry.FAMILIES: "task family",
    registry.METHODS: "method",
    registry.LEARNERS: "learner",
    registry.DEMONSTRATION_SOURCES: "demonstration source",
}


def _fake_load(group: str, name: str) -> type:
    known = TABLE[group]
    if name not in known:
        raise registry.RegistryError(
            f"unknown {KINDS[group]} {name!r}{registry.suggest(name, list(known))} "
            f"(known: {', '.join(sorted(known))})"
        )
    return known[name]


@contextlib.contextmanager
def fake_registry():
    """Make the registry know only the fakes above (usable outside function-scoped fixtures)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(registry, "load", _fake_load)
        mp.setattr(registry, "names", lambda group: sorted(TABLE[group]))
        yield


VALID = textwrap.dedent(
    """\
    name: grid-test
    description: |
      A small spec for tests.
      Second line.
    family:
      name: grid
      params:
        size: 12
        slip: 0.2
    tasks:
      count: 6
      train: 2
      test: 3
      seed: 7
      vary:
        starts: random
      list:
        - {start: [0, 0], goal: [5, 5]}
    methods:
      - name: primitives
        method: primitives
      - name: ours
        method: options
        params:
          lambda2: 100
          hidden: [16, 16]
    evaluation:
      episodes: 20
      seeds: 2
      params: {alpha: 0.2}
    report:
      baseline: primitives
    """
)


def problems_of(text: str, source: str = "spec.yaml") -> list[str]:
    """The problem lines of YAML ``text`` (which must be invalid)."""
    from opt_suite.spec import SpecError, parse_spec

    with pytest.raises(SpecError) as info:
        parse_spec(text, source)
    return info.value.problems


def where(text: str, fragment: str, token: str | None = None) -> str:
    """``LINE:COL`` (1-based) of ``token`` on the first line of ``text`` containing ``fragment``."""
    for number, line in enumerate(text.splitlines(), start=1):
        if fragment in line:
            return f"{number}:{line.index(token or fragment) + 1}"
    raise AssertionError(f"{fragment!r} not in the text")


def edited(*pairs: tuple[str, str], text: str = VALID) -> str:
    """``text`` with each ``(old, new)`` replaced; each ``old`` must occur exactly once."""
    for old, new in pairs:
        assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times"
        text = text.replace(old, new)
    return text


# One spec with ten different mistakes, and the ten lines they must give (as "file:LINE:COL: …").
TEN_MISTAKES = edited(
    ("name: grid-test", "name: grid test!"),
    ("    size: 12\n", "    size: 8\n    layout: large\n    lyout: small\n"),
    ("  test: 3", "  test: 5"),
    ("    starts: random", "    starts: randm"),
    ("goal: [5, 5]", "goal: [50, 5]"),
    ("lambda2: 100", "lambda2: -1"),
    ("hidden: [16, 16]", "hidden: [16, x]"),
    ("episodes: 20", "episodes: many"),
    ("baseline: primitives", "baseline: primitive"),
)
TEN_LINES = [
    "{f}:1:7: name: not usable as a file name (expected 1-64 letters, digits, '.', '_' or '-', "
    "starting with a letter or digit, got 'grid test!')",
    "{f}:8:11: family.params.size: the large layout needs size >= 10 (got 8)",
    "{f}:10:5: family.params.lyout: unknown key; did you mean 'layout'? (expected one of: layout, "
    "size, slip, step_reward, walls, max_steps, diagonal)",
    "{f}:15:9: tasks.test: more tasks used than sampled (expected train + test <= count, got "
    "2 + 5 > 6)",
    "{f}:18:13: tasks.vary.starts: wrong type (expected one of 'random', 'fixed', got str "
    "'randm'); did you mean 'random'?",
    "{f}:20:29: tasks.list[0].goal: cell (50, 5) is outside the 8x8 grid",
    "{f}:27:16: methods[1].params.lambda2: out of range (expected > 0, got -1.0)",
    "{f}:28:20: methods[1].params.hidden[1]: wrong type (expected int, got str 'x')",
    "{f}:30:13: evaluation.episodes: wrong type (expected int, got str 'many')",
    "{f}:34:13: report.baseline: no method entry is named 'primitive'; did you mean "
    "'primitives'? (expected one of: primitives, ours, or null)",
]
