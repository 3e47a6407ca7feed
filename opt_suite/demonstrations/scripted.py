"""Demonstration source ``scripted``: a planner of your own, named ``module:function``.

Where an env ships a planner, or one is cheap to write, its demonstrations need no trained expert
(MiniGrid's shortest paths: :mod:`opt_suite.demonstrations.minigrid_planner`)::

    demonstrations:
      source: scripted
      params: {function: "opt_suite.demonstrations.minigrid_planner:shortest_path"}
      trajectories_per_task: 4

**The contract.** ``function(env)`` is called once per demonstration, right after the task's env
was reset (seeded from the spec, random start actions done). ``env`` is the env the family's id
names, unwrapped (MiniGrid's ``MiniGridEnv``, with its ``grid``, ``agent_pos``, ``agent_dir``), so
the planner can read its state; it must not step it. It returns the demonstration's actions, any
iterable of ints: a list (a plan made once), or a generator, which is advanced after every step
and so can read the state each action leads to (a closed-loop policy). The source steps the
*task's* env with them (frame skip, reward scale and step counting as for any agent) until the
episode ends, the actions run out or ``demonstrations.max_steps`` is reached.

**Complete demonstrations.** A demonstration whose episode did not end (its actions ran out, or a
cap cut it: ``demonstrations.max_steps`` or the family's own episode cap) is not a demonstration
of the task, unless a cap cut it after it succeeded (a survival task such as CartPole: the
family's ``solved_when_cut``, the gymnasium family's ``success_return``). It is dropped with a
warning line naming the task, the steps reached and the caps, while at least ``min_per_task``
complete ones remain on that task; fewer is an error.

**What naming a function does.** Its module is imported (its code runs), so only a module of an
installed distribution is: one whose files an installed package put in site-packages (or a
``PYTHONPATH`` folder), never the standard library, a ``__main__`` module or a ``.py`` beside the
spec, checked before anything is imported (:mod:`opt_suite.installed`). The function must be a
Python function defined in that module: not a builtin (``builtins:input``, ``os:system``), not a
class, not a function the module imported from elsewhere; of opt_suite's own functions only
:data:`BUILT_IN_PLANNERS`.

**Bad input.** A module that is refused or cannot be imported, a missing function or one that is
not such a function: located errors at ``demonstrations.params.function`` when the spec is
validated. A function that raises,
or returns something that is not an iterable of valid actions: one error line naming the task,
with the function's own exception text and the line of the function where it was raised.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
import traceback
from collections.abc import Callable, Iterable
from typing import Any, ClassVar

import numpy as np

from opt_suite.demonstrations.base import (
    DemonstrationError,
    DemonstrationSource,
    SourceContext,
    base_env,
    child_seed,
    episode_caps,
)
from opt_suite.families.base import Task, TaskFamily
from opt_suite.families.capabilities import DISCRETE_ACTIONS, instance_label
from opt_suite.installed import OWN_PACKAGES, NotInstalled, import_installed
from opt_suite.params import param
from opt_suite.trajectory import Trajectory

__all__ = ["BUILT_IN_PLANNERS", "ScriptedParams", "ScriptedExpert", "resolve"]


@dataclasses.dataclass(frozen=True)
class ScriptedParams:
    """Which function plans the demonstrations, and how many must be complete."""

    function: str = param(
        "opt_suite.demonstrations.minigrid_planner:shortest_path",
        doc="'module:function' returning a demonstration's actions for a reset env: a Python "
        "function of an installed package, checked before its module is imported (see "
        "opt_suite/demonstrations/scripted.py for the contract, docs/plugins.md for what may be "
        "named)",
    )
    min_per_task: int = param(
        1,
        doc="complete demonstrations each train task must keep; cut ones are dropped with a "
        "warning while at least this many remain (demonstrations.trajectories_per_task at most)",
        ge=1,
        le=100_000,
    )

    def check(self) -> list[tuple[str, str]]:
        """The function resolves: its module imports and it is a callable."""
        try:
            resolve(self.function)
        except ValueError as exc:
            return [("function", str(exc))]
        return []


#: The suite's own functions that are components: a spec may name these and no other function of
#: opt_suite (its other functions were not written to be called with an env).
BUILT_IN_PLANNERS = frozenset({"opt_suite.demonstrations.minigrid_planner:shortest_path"})


def resolve(name: str) -> Callable[[Any], Iterable[int]]:
    """The planner ``name`` ('module:function') names: a function of an installed plugin.

    The module is imported only when :func:`opt_suite.installed.refusal` allows it (an installed
    distribution's, never the standard library, a ``__main__`` module or a file beside the spec);
    the attribute must then be a Python function defined in that module (never a builtin such as
    ``builtins:input``, a class, or a standard-library function it imported), and a function of
    opt_suite itself must be one of :data:`BUILT_IN_PLANNERS`.

    Raises:
      ValueError: not 'module:function', a module that is refused or cannot be imported (with its
        error), a module without that attribute, or an attribute that is not such a function.
    """
    module_name, colon, attribute = name.partition(":")
    if not colon or not module_name or not attribute:
        raise ValueError(f"expected 'module:function', got {name!r}")
    if not attribute.isidentifier():
        raise ValueError(f"expected 'module:function' with a function name, got {name!r}")
    try:
        module = import_installed(module_name)
    except NotInstalled as exc:
        raise ValueError(f"cannot import module {module_name!r}: {exc}") from None
    except Exception as exc:  # the user's module: any error while importing it is theirs
        raise ValueError(
            f"cannot import module {module_name!r}: {type(exc).__name__}: {exc}"
        ) from None
    if not hasattr(module, attribute):
        raise ValueError(f"module {module_name!r} has no attribute {attribute!r}")
    found = getattr(module, attribute)
    if not inspect.isfunction(found):
        raise ValueError(
            f"{name!r} is a {type(found).__name__}, not a function (expected a Python function "
            "defined in that module)"
        )
    if found.__module__ != module_name:
        raise ValueError(
            f"{name!r} is a function of {found.__module__!r}, not one defined in {module_name!r}"
        )
    if module_name.partition(".")[0] in OWN_PACKAGES and name not in BUILT_IN_PLANNERS:
        raise ValueError(
            f"{name!r} is not a planner of opt_suite's (its planners: "
            f"{', '.join(sorted(BUILT_IN_PLANNERS))}); a planner of your own lives in a "
            "package you install"
        )
    return found


def _user_error(function: str, task_id: str, exc: BaseException) -> DemonstrationError:
    """One line: the user's exception and where in their code it was raised."""
    frames = traceback.extract_tb(exc.__traceback__)
    own = [f for f in frames if f.filename != __file__]  # the user's frames, not this module's
    where = f" (at {own[-1].filename}:{own[-1].lineno})" if own else ""
    return DemonstrationError(
        f"demonstrations.params.function {function!r} raised on {task_id}: "
        f"{type(exc).__name__}: {exc}{where}"
    )


class ScriptedExpert(DemonstrationSource):
    """Demonstrations planned by a user's ``module:function``; see the module docstring."""

    name: ClassVar[str] = "scripted"
    description: ClassVar[str] = (
        "a planner of your own ('module:function' returning actions), e.g. MiniGrid shortest paths"
    )
    Params: ClassVar[type] = ScriptedParams
    requires: ClassVar[frozenset[str]] = frozenset({DISCRETE_ACTIONS})

    @classmethod
    def check_family(cls, params: Any, family: Any) -> list[tuple[str, str]]:
        """The default function plans MiniGrid only: on another env, say so at validate.

        A function of the user's own is theirs to fit (its errors are one line at run time).
        """
        if params.function != ScriptedParams().function:
            return []
        from opt_suite.demonstrations.minigrid_planner import unplannable

        env = family.make_env(family.default_task())
        try:
            env.reset(seed=0)
            problem = unplannable(base_env(env))
        finally:
            env.close()
        if problem is None:
            return []
        return [
            (
                "function",
                f"the default {params.function} {problem.removeprefix('shortest_path ')} "
                f"from {instance_label(family)}; name a planner of your own for it",
            )
        ]

    def collect(self, context: SourceContext) -> list[Trajectory]:
        """Train task i resets its envs from child (i, 1) of ``seed``; see the module docstring.

        Raises:
          DemonstrationError: the function raised or returned no valid actions, or fewer than
            ``min_per_task`` demonstrations of a task were complete.
        """
        family, train_tasks = context.family, context.train_tasks
        trajectories_per_task = context.trajectories_per_task
        max_steps, seed = context.max_steps, context.seed
        params: ScriptedParams = self.params
        if params.min_per_task > trajectories_per_task:
            raise DemonstrationError(
                f"demonstrations.params.min_per_task = {params.min_per_task} is more than "
                f"demonstrations.trajectories_per_task = {trajectories_per_task}"
            )
        try:
            plan = resolve(params.function)
        except ValueError as exc:
            raise DemonstrationError(f"demonstrations.params.function: {exc}") from None
        demos: list[Trajectory] = []
        for i, task in enumerate(train_tasks):
            rng = np.random.default_rng(child_seed(seed, i, 1))
            kept: list[tuple[Trajectory, str]] = []
            cut: list[tuple[Trajectory, str]] = []
            for _ in range(trajectories_per_task):
                trajectory, ended, caps = self._one(family, task, plan, rng, max_steps)
                (kept if ended else cut).append((trajectory, caps))
            for trajectory, caps in cut:
                print(
                    f"warning: demonstrations: a scripted demonstration on {task.task_id} was "
                    f"dropped: its episode had not ended after {len(trajectory)} steps ({caps})",
                    file=sys.stderr,
                )
            if len(kept) < params.min_per_task:
                raise DemonstrationError(
                    f"{len(kept)} of {trajectories_per_task} scripted demonstrations on "
                    f"{task.task_id} reached their episode's end, fewer than "
                    f"demonstrations.params.min_per_task = {params.min_per_task}; the first was "
                    f"cut after {len(cut[0][0])} steps ({cut[0][1]})"
                )
            demos += [t for t, _ in kept]
        return demos

    def _one(
        self,
        family: TaskFamily,
        task: Task,
        plan: Callable[[Any], Iterable[int]],
        rng: np.random.Generator,
        max_steps: int,
    ) -> tuple[Trajectory, bool, str]:
        """(the trajectory, whether its episode ended, the caps that apply, as words)."""
        function = self.params.function
        env = family.make_env(task)
        try:
            reset_seed = int(rng.integers(2**31 - 1))
            obs, _ = env.reset(seed=reset_seed)
            num_actions = int(env.action_space.n)
            observations: list[Any] = [obs]
            actions: list[int] = []
            rewards: list[float] = []
            ended, truncated = False, False
            try:
                steps = iter(plan(base_env(env)))
            except TypeError as exc:
                raise DemonstrationError(
                    f"demonstrations.params.function {function!r} on {task.task_id}: expected "
                    f"an iterable of actions, got {exc}"
                ) from None
            except Exception as exc:
                raise _user_error(function, task.task_id, exc) from None
            while len(actions) < max_steps and not (ended or truncated):
                try:
                    action = next(steps)
                except StopIteration:
                    break
                except Exception as exc:
                    raise _user_error(function, task.task_id, exc) from None
                if isinstance(action, bool) or not isinstance(action, int | np.integer):
                    raise DemonstrationError(
                        f"demonstrations.params.function {function!r} on {task.task_id}: "
                        f"expected int actions, got {type(action).__name__} {action!r}"
                    )
                if not 0 <= int(action) < num_actions:
                    raise DemonstrationError(
                        f"demonstrations.params.function {function!r} on {task.task_id}: action "
                        f"{int(action)} out of range [0, {num_actions})"
                    )
                obs, reward, ended, truncated, _ = env.step(int(action))
                observations.append(obs)
                actions.append(int(action))
                rewards.append(float(reward))
            caps = _caps(env, family, max_steps, len(actions), truncated)
            capped = truncated or len(actions) >= max_steps
            if not ended and capped and family.solved_when_cut(task, float(sum(rewards))):
                ended = True  # a survival task's cap is its success (CartPole at its limit)
        finally:
            env.close()
        if not actions:
            raise DemonstrationError(
                f"demonstrations.params.function {function!r} returned no actions on {task.task_id}"
            )
        trajectory = Trajectory(
            task.task_id,
            np.asarray(np.stack([np.asarray(o) for o in observations])),
            np.asarray(actions, dtype=np.int64),
            np.asarray(rewards, dtype=np.float64),
            reset_seed=reset_seed,
        )
        return trajectory, bool(ended), caps


def _caps(env: Any, family: TaskFamily, max_steps: int, steps: int, truncated: bool) -> str:
    """Which cap cut a demonstration (or that its actions ran out), and every cap that applies."""
    if steps >= max_steps:
        why = "cut by demonstrations.max_steps"
    elif truncated:
        why = "truncated by the env or the family"
    else:
        why = "the function's actions ran out"
    return f"{why}; caps: {episode_caps(env, family, max_steps)}"
