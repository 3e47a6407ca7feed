"""Any gymnasium env as a task family (spec name ``gymnasium``).

The paper's three kinds of task variation — random start actions (the initial-state
distribution), a reward scale (the reward function) and a frame skip (the transition function) —
apply to any env, not only Atari (:mod:`opt_suite.families.gymnasium.env` says how). A spec names
the env by its gymnasium id and may draw some of its keyword arguments per task::

    family:
      name: gymnasium
      params: {id: "MinAtar/Breakout-v1", kwargs: {}, max_episode_steps: 10000}
    tasks:
      count: 8
      train: 3
      test: 5
      vary: {start_actions: [1, 20], reward_scale: [0.0, 10.0], frame_skip: [1, 2, 3]}

A ``kwargs`` value written as a list is a set of choices: each task draws one (stored in its
``TaskParams.kwargs``); a list passed as the value itself is written as the only choice
(``goal_pos: [[6, 6]]``). Validation builds and resets the env with each draw, so a drawn value
of the wrong shape is a located error, not a failed run. The env's spaces decide what the family
offers (index, image or vector observations; see :mod:`opt_suite.families.capabilities`), and they
must be the same for every task. Everything about the env is checked when the spec is validated:
the id is registered (or its package is named), the env accepts the kwargs, a ``Dict``
observation has an array entry to show (``image`` by default), the spaces agree.

``tasks.vary.held_out_kwargs`` sends some choices of a drawn kwarg to the test tasks only
(:mod:`.held_out`), and an env with a ``reference_options()`` method of its own offers its
hand-designed options through the family (the sub-goal MiniGrid env's scripted options).

Length (over the 400 lines the tree aims for): the family's checks (id, kwargs, spaces of every
draw), its task draws (train, and held-out test) and the env it builds are one contract — what
``validate`` accepts is what a run draws and builds — and are tested as one.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from typing import Any, TypeAlias

import gymnasium
import numpy as np

from opt_suite.families.base import Task, TaskFamily
from opt_suite.families.gymnasium.env import adapted_space, make_inner
from opt_suite.families.gymnasium.held_out import held_out_problems, split_choices
from opt_suite.families.gymnasium.ids import UnknownEnvId, register_id
from opt_suite.families.paper_variations import draw, range_problems
from opt_suite.memory_limit import capped
from opt_suite.options import OptionSet
from opt_suite.params import FrozenDict, param

__all__ = ["Gymnasium", "Params", "Variation", "TaskParams", "probe"]

#: Draws whose spaces are compared when a spec is validated: every combination up to this many.
_MAX_PROBES = 16


@dataclasses.dataclass(frozen=True)
class Params:
    """Family-wide settings (spec key ``family.params``)."""

    id: str = param(
        "CartPole-v1",
        doc="gymnasium id, or 'module:Id' to import the module that registers it first",
    )
    kwargs: FrozenDict[str, object] = param(
        FrozenDict(), doc="the env's keyword arguments; a list is a set of choices drawn per task"
    )
    observation_key: str | None = param(
        None,
        doc="the entry of a Dict observation the agents see (default: image if it has one, "
        "else its only array entry)",
    )
    max_episode_steps: int = param(
        10_000, doc="episodes are truncated after this many env steps (frames)", ge=1
    )
    success_return: float | None = param(
        None,
        doc="an episode a step cap cut still succeeded if its return (in the env's own reward "
        "units) reached this, e.g. CartPole balanced to its cap; default: the env's registered "
        "reward_threshold (CartPole-v1: 475), and for an env without one a cut episode never "
        "succeeded",
        added_later=True,
    )

    def check(self) -> list[tuple[str, str]]:
        """The id is registered, the env accepts the kwargs, the spaces agree across draws."""
        try:
            register_id(self.id)
        except UnknownEnvId as exc:
            return [("id", str(exc))]
        for key, value in self.kwargs.items():
            if isinstance(value, tuple) and not value:
                return [("kwargs", f"kwargs.{key}: an empty list of choices")]
        first: tuple[str, Any] | None = None
        for drawn in _draws(self.kwargs):
            try:
                found = probe(self.id, drawn, self.observation_key)
            except _Rejected as exc:
                return [
                    (
                        exc.field,
                        str(exc) + (_list_hint(self.kwargs) if exc.field == "kwargs" else ""),
                    )
                ]
            if first is None:
                first = (_text(drawn), found)
            elif found != first[1]:
                return [
                    (
                        "kwargs",
                        f"the spaces differ between tasks (expected the same for every draw): "
                        f"{first[0]} gives {_spaces_text(first[1])}, {_text(drawn)} gives "
                        f"{_spaces_text(found)}",
                    )
                ]
        return []


@dataclasses.dataclass(frozen=True)
class Variation:
    """How tasks are sampled (spec key ``tasks.vary``); the defaults vary nothing."""

    start_actions: tuple[int, int] = param(
        (0, 0), doc="random actions at each episode start: per task uniform in [lo, hi]", ge=0
    )
    reward_scale: tuple[float, float] = param(
        (1.0, 1.0), doc="reward multiplier: drawn per task uniform in (lo, hi]", ge=0
    )
    frame_skip: tuple[int, ...] = param(
        (1,), doc="env steps per action: drawn per task uniformly from this set", ge=1
    )
    held_out_kwargs: FrozenDict[str, object] = param(
        FrozenDict(),
        doc="choices of family.params.kwargs' lists that only test tasks draw: per key, the test "
        "tasks draw from these and the train tasks from the other choices (e.g. sub-goal "
        "sequences held out of training); empty: one distribution for both",
        added_later=True,
    )

    def check(self) -> list[tuple[str, str]]:
        """Ordered ranges, a positive top reward scale, a non-empty frame-skip set."""
        return range_problems(self)


@dataclasses.dataclass(frozen=True)
class TaskParams:
    """One task: its random start actions, reward scale, frame skip and drawn kwargs."""

    start_actions: int = param(0, doc="uniformly random actions taken at every episode start", ge=0)
    reward_scale: float = param(1.0, doc="every reward is multiplied by this", gt=0)
    frame_skip: int = param(1, doc="env steps each action is repeated for", ge=1)
    kwargs: FrozenDict[str, object] = param(
        FrozenDict(), doc="the value drawn for each kwarg the family lists choices for"
    )


class _Rejected(ValueError):
    """The env cannot be built or observed as asked; ``field`` is the Params key to blame."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


#: The most memory building one env may take when the spec is validated.
ENV_MEMORY = 1 << 30

#: (id, kwargs) -> bytes its construction allocated (Python and NumPy), for the work estimate.
_BUILT: dict[tuple[str, FrozenDict], int] = {}


@functools.cache
def probe(
    env_id: str, kwargs: FrozenDict, observation_key: str | None
) -> tuple[gymnasium.spaces.Space, gymnasium.spaces.Space]:
    """(observation space as the agents see it, action space) of the env built with ``kwargs``.

    Builds the env once (cached per arguments). Raises ``_Rejected`` naming the Params key at
    fault: ``kwargs`` the env refuses, or an ``observation_key`` that does not fit its space.
    """
    try:
        # The kwargs may size the env's memory beyond any machine (MiniGrid size: 20000 is
        # 3.2 GB): it is built with at most ENV_MEMORY more bytes, and what it took is kept.
        with capped(ENV_MEMORY) as allocated:
            env = make_inner(env_id, dict(kwargs), max_episode_steps=1)
            try:
                # Some envs only use a kwarg at reset (MiniGrid's goal_pos): a value of the
                # wrong shape must fail here, not in the run.
                env.reset(seed=0)
            except BaseException:
                env.close()
                raise
        _BUILT[(env_id, kwargs)] = allocated.peak
    except UnknownEnvId as exc:
        raise _Rejected("id", str(exc)) from None
    except MemoryError:
        raise _Rejected(
            "kwargs",
            f"{env_id} with kwargs {_text(kwargs)} needs more than {ENV_MEMORY >> 20} MiB to "
            "be built (MemoryError when validating it): lower the kwargs that size it",
        ) from None
    except Exception as exc:  # the env's own constructor: any error means "these kwargs"
        raise _Rejected(
            "kwargs", f"{env_id} rejects kwargs {_text(kwargs)}: {type(exc).__name__}: {exc}"
        ) from None
    try:
        return adapted_space(env.observation_space, observation_key), env.action_space
    except ValueError as exc:
        raise _Rejected("observation_key", str(exc)) from None
    finally:
        env.close()


def _draws(kwargs: FrozenDict) -> list[FrozenDict]:
    """The kwargs with each list replaced by one of its choices, as the spaces check builds them.

    Every combination, or if there are more than ``_MAX_PROBES``, each choice of each list with
    the other lists at their first choice.
    """
    choices = {k: v for k, v in kwargs.items() if isinstance(v, tuple)}
    fixed = {k: v for k, v in kwargs.items() if not isinstance(v, tuple)}
    if not choices:
        return [FrozenDict(fixed)]
    combos = list(itertools.islice(itertools.product(*choices.values()), _MAX_PROBES + 1))
    if len(combos) <= _MAX_PROBES:
        return [FrozenDict(fixed | dict(zip(choices, c, strict=True))) for c in combos]
    first = {k: v[0] for k, v in choices.items()}
    return [FrozenDict(fixed | first | {k: c}) for k, v in choices.items() for c in v]


def _list_hint(kwargs: FrozenDict) -> str:
    """How to pass a list itself, when a kwarg written as a list of scalars was drawn from."""
    for key, value in kwargs.items():
        if isinstance(value, tuple) and value and not any(isinstance(v, tuple) for v in value):
            literal = "[" + ", ".join(map(repr, value)) + "]"
            return (
                f" (kwargs.{key}: a list is a set of choices, one drawn per task; to pass the "
                f"list itself, write it as the only choice: {key}: [{literal}])"
            )
    return ""


def _text(kwargs: dict) -> str:
    return "{" + ", ".join(f"{k}: {v!r}" for k, v in kwargs.items()) + "}"


def _spaces_text(found: tuple[Any, Any]) -> str:
    return f"observations {found[0]} and actions {found[1]}"


class Gymnasium(TaskFamily):
    """Any gymnasium env with the paper's three task variations; see the module docstring."""

    name = "gymnasium"
    description = "any gymnasium env by id: random start actions, reward scale, frame skip per task"
    env_id = "opt_suite/Gymnasium-v0"
    Params: TypeAlias = Params
    Variation: TypeAlias = Variation
    TaskParams: TypeAlias = TaskParams

    def __init__(self, params: Params | None = None) -> None:
        super().__init__(Params() if params is None else params)

    @functools.cached_property
    def _spaces(self) -> tuple[gymnasium.spaces.Space, gymnasium.spaces.Space]:
        params = self.params
        try:
            return probe(params.id, _draws(params.kwargs)[0], params.observation_key)
        except _Rejected as exc:
            raise ValueError(f"family.params.{exc.field}: {exc}") from None

    def env_memory(self) -> tuple[int, str] | None:
        """(bytes, what) one env of this family allocated when built (measured at validate)."""
        params = self.params
        sizes = [_BUILT.get((params.id, drawn)) for drawn in _draws(params.kwargs)]
        known = [size for size in sizes if size is not None]
        if not known:
            return None
        return max(known), f"one {params.id} env as built (measured)"

    @property
    def observation_space(self) -> gymnasium.spaces.Space:
        """The env's observation space as the agents see it (see the module docstring)."""
        return self._spaces[0]

    @property
    def action_space(self) -> gymnasium.spaces.Space:
        """The env's action space."""
        return self._spaces[1]

    @property
    def instance_name(self) -> str:
        """``gymnasium-<id>``, lower case, ``/`` as ``-``: ``gymnasium-minatar-breakout-v1``."""
        bare = self.params.id.rpartition(":")[2]
        return f"{self.name}-{bare.replace('/', '-').lower()}"

    def check_variation(self, variation: Variation) -> list[tuple[str, str]]:
        """The variation's own rules, and start actions that fit in an episode and the actions."""
        problems = variation.check() + held_out_problems(self._choices, variation.held_out_kwargs)
        hi = variation.start_actions[1]
        if hi >= self.params.max_episode_steps:
            problems.append(
                (
                    "start_actions",
                    f"expected at most {self.params.max_episode_steps - 1} start actions "
                    f"(family.params.max_episode_steps is {self.params.max_episode_steps}), "
                    f"got {hi}",
                )
            )
        if hi > 0 and not isinstance(self.action_space, gymnasium.spaces.Discrete):
            problems.append(
                (
                    "start_actions",
                    f"random start actions need Discrete actions, not {self.action_space}",
                )
            )
        return problems

    @property
    def _choices(self) -> dict[str, tuple]:
        """Each kwarg drawn per task, with its choices, in sorted key order.

        Sorted, because the tasks are drawn in this order: the spec's hash ignores the order its
        YAML lists the keys in, and so must its draws (a run's stored spec has sorted keys, and
        replaying it must plan the run's own tasks).
        """
        kwargs = self.params.kwargs
        return {k: kwargs[k] for k in sorted(kwargs) if isinstance(kwargs[k], tuple)}

    def check_task(self, task_params: TaskParams) -> list[tuple[str, str]]:
        """A listed task draws exactly the kwargs the family lists choices for, from them."""
        choices = self._choices
        drawn = dict(task_params.kwargs)
        if set(drawn) != set(choices):
            return [
                (
                    "kwargs",
                    f"expected a value for each of {sorted(choices)} (the kwargs family.params "
                    f"lists choices for), got {sorted(drawn)}",
                )
            ]
        for key, value in drawn.items():
            if value not in choices[key]:
                return [
                    ("kwargs", f"kwargs.{key}: expected one of {list(choices[key])}, got {value!r}")
                ]
        if task_params.start_actions >= self.params.max_episode_steps:
            return [("start_actions", "expected fewer start actions than max_episode_steps")]
        return []

    @functools.cached_property
    def success_return(self) -> float | None:
        """The return (the env's own units) that a cut episode must reach to have succeeded.

        ``success_return`` when the spec sets it, else gymnasium's ``reward_threshold`` of the id
        ("the reward threshold before the task is considered solved"): CartPole-v1's 475, where
        episodes end only by falling or by the 500-step cap; FrozenLake's 0.7 and MountainCar's
        -110, which no cut episode reaches (the goal ends their episodes). None: none is set.
        """
        if self.params.success_return is not None:
            return float(self.params.success_return)
        threshold = gymnasium.spec(register_id(self.params.id)).reward_threshold
        return None if threshold is None else float(threshold)

    def solved_when_cut(self, task: Task, episode_return: float) -> bool:
        """The episode's return reached :attr:`success_return` times the task's reward scale."""
        threshold = self.success_return
        if threshold is None:
            return False
        return episode_return >= threshold * task.params.reward_scale

    def default_task(self) -> TaskParams:
        """No variation; each listed kwarg at its first choice."""
        choices = {k: v[0] for k, v in self.params.kwargs.items() if isinstance(v, tuple)}
        return TaskParams(kwargs=FrozenDict(choices))

    def sample_tasks(self, variation: Variation, count: int, rng: np.random.Generator) -> list[Any]:
        """Start actions ~ U{lo..hi}, reward scale ~ U(lo, hi], frame skip and kwargs ~ U(set)."""
        problems = variation.check()
        if problems:
            raise ValueError("; ".join(f"tasks.vary.{key}: {msg}" for key, msg in problems))
        return self._sample(variation, count, rng, test=False)

    def sample_test_tasks(
        self, variation: Variation, count: int, rng: np.random.Generator
    ) -> list[Any]:
        """As :meth:`sample_tasks`, the held-out kwargs drawn from ``held_out_kwargs``' choices."""
        problems = variation.check()
        if problems:
            raise ValueError("; ".join(f"tasks.vary.{key}: {msg}" for key, msg in problems))
        return self._sample(variation, count, rng, test=True)

    def holds_test_tasks_out(self, variation: Any) -> bool:
        """With held-out kwargs, test tasks are drawn apart (:meth:`TaskFamily.make_tasks`)."""
        return bool(getattr(variation, "held_out_kwargs", None))

    def _sample(
        self, variation: Variation, count: int, rng: np.random.Generator, test: bool
    ) -> list[Any]:
        """``count`` draws; a held-out kwarg's choices split between test and train tasks."""
        choices = split_choices(self._choices, variation.held_out_kwargs, test)
        tasks = []
        for _ in range(count):
            start_actions, reward_scale, frame_skip = draw(variation, rng)
            drawn = FrozenDict({k: v[int(rng.integers(len(v)))] for k, v in choices.items()})
            tasks.append(TaskParams(start_actions, reward_scale, frame_skip, drawn))
        return tasks

    def reference_options(self, task: Task | TaskParams) -> OptionSet | None:
        """The env's own hand-designed options (its ``reference_options()``), or None.

        An env offers them by a ``reference_options()`` method on its unwrapped class (the
        sub-goal MiniGrid env's scripted sub-goal options); they act on the observation the
        agents see. Most envs have none, and then neither does the family.
        """
        task_params = task.params if isinstance(task, Task) else task
        env = make_inner(
            self.params.id, dict(self.params.kwargs) | dict(task_params.kwargs), max_episode_steps=1
        )
        try:
            offer = getattr(env.unwrapped, "reference_options", None)
            return None if offer is None else offer()
        finally:
            env.close()

    @functools.cached_property
    def offers_reference_options(self) -> bool:  # type: ignore[override]
        """Whether the env offers options of its own (built once with the default task)."""
        try:
            return self.reference_options(self.default_task()) is not None
        except Exception:  # an env that cannot be built: Params.check names why, at its key
            return False

    def make_env(self, task: Task | TaskParams, **kwargs: Any) -> gymnasium.Env:
        """``gymnasium.make("opt_suite/Gymnasium-v0", env_id=id, kwargs=..., ...)``.

        ``id`` is passed as ``env_id`` and ``max_episode_steps`` as ``max_episode_frames``:
        ``gymnasium.make`` takes both names for itself.
        """
        task_params = task.params if isinstance(task, Task) else task
        params = self.params
        # Without gymnasium's passive checker (unless asked for): the family's contract runs
        # gymnasium's check_env on this env in every render mode (opt_suite.testing), and the
        # checker's layer, a pass-through after the first step, costs every step (~0.1 us of a
        # model-free learner's ~3 us on FrozenLake).
        kwargs.setdefault("disable_env_checker", True)
        # Without gymnasium's OrderEnforcing around it: the wrapped env's own (make_inner)
        # already refuses a step or a render before a reset, with the same error, and the layer
        # cost ~0.2 us a step. The id's registration keeps it for gymnasium.make callers.
        spec = dataclasses.replace(gymnasium.spec(self.env_id), order_enforce=False)
        return gymnasium.make(
            spec,
            env_id=params.id,
            kwargs=dict(params.kwargs) | dict(task_params.kwargs),
            observation_key=params.observation_key,
            max_episode_frames=params.max_episode_steps,
            start_actions=task_params.start_actions,
            reward_scale=task_params.reward_scale,
            frame_skip=task_params.frame_skip,
            **kwargs,
        )
