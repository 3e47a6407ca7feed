"""The task-family contract: how a family of related MDPs is described and built.

A *task family* (e.g. four rooms) is one module that turns typed parameters into gymnasium
environments. A *task* is one member of the family — one MDP variation (a start and goal, a
transition table, a reward scale, a frame skip, ...). Families never import the runner, specs or
leaderboard.

Three dataclasses per family, all frozen and validated by the spec loader (see
``opt_suite.params``):

- ``Params``: family-wide settings (layout, slip, rewards, episode cap, ...) — spec key
  ``family.params``;
- ``Variation``: how task variations are *sampled* — spec key ``tasks.vary``;
- ``TaskParams``: one task's concrete variation — produced by :meth:`TaskFamily.sample_tasks`, or
  listed explicitly under the spec key ``tasks.list``.

The base class needs only the family's spaces (:attr:`TaskFamily.observation_space`,
:attr:`TaskFamily.action_space`), :meth:`TaskFamily.sample_tasks` and :meth:`TaskFamily.make_env`:
any gymnasium env can enter. Tabular families also mix in :class:`TabularModelMixin` and expose
their exact model (:class:`TabularModel`) — the tabular experts (value iteration), eigenoptions (the
state graph) and the fast vectorised test-time learner need it. What a family offers
(:attr:`TaskFamily.capabilities`: an exact model, discrete actions, index or image observations) is
checked against what methods and learners require when a spec is validated (see
:mod:`opt_suite.families.capabilities`).
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

if TYPE_CHECKING:
    import gymnasium
    from gymnasium import spaces

    from opt_suite.families.env_batch import EnvBatch
    from opt_suite.options import OptionSet

__all__ = [
    "Task",
    "TabularModel",
    "TaskFamily",
    "TabularModelMixin",
    "exact_model",
    "split_tasks",
]


@dataclasses.dataclass(frozen=True)
class Task:
    """One MDP of a family, with a readable stable id such as ``fourrooms-40x40/train/3``.

    Attributes:
      task_id: stable, readable id: ``{family instance name}/{split}/{index within split}``.
      split: ``"train"`` or ``"test"``.
      index: position within its split.
      params: the family's ``TaskParams`` instance for this task.
    """

    task_id: str
    split: str
    index: int
    params: Any


@dataclasses.dataclass(frozen=True, eq=False)
class TabularModel:
    """The exact model of one tabular task, in a compact "K outcomes per (s, a)" form.

    Every (state, action) pair has K possible outcomes (padded with probability-0 entries): the
    agent moves to ``next_state[s, a, k]`` with probability ``prob[s, a, k]`` and receives
    ``reward[s, a, k]``. ``terminal[s]`` marks absorbing states where episodes end (the goal); their
    rows are never used. This form vectorises well (one gather per step for thousands of runs) and
    is small even for 40x40 grids (dense P would be S*A*S).

    Attributes:
      next_state: int32 [S, A, K].
      prob: float64 [S, A, K], rows sum to 1.
      reward: float64 [S, A, K].
      terminal: bool [S].
      start: int, the start state of this task (the initial state distribution is a point mass).
      cells: int32 [S, 2] (row, col) of each state for grid families, else None — for pictures and
        coordinate features.
      shape: (rows, cols) of the grid for grid families, else None.
      goals: int [G], the states the family declares as goals (pictures draw these), or None.
        Terminal states need not all be goals (e.g. holes that end an episode).
    """

    next_state: np.ndarray
    prob: np.ndarray
    reward: np.ndarray
    terminal: np.ndarray
    start: int
    cells: np.ndarray | None = None
    shape: tuple[int, int] | None = None
    goals: np.ndarray | None = None

    @property
    def num_states(self) -> int:
        """S, the number of states."""
        return int(self.next_state.shape[0])

    @property
    def num_actions(self) -> int:
        """A, the number of primitive actions."""
        return int(self.next_state.shape[1])

    def dense_transitions(self) -> np.ndarray:
        """P[s, a, s'] as a dense float64 array (for small models, tests and value iteration)."""
        S, A, K = self.next_state.shape
        P = np.zeros((S, A, S))
        s_idx, a_idx = np.meshgrid(np.arange(S), np.arange(A), indexing="ij")
        for k in range(K):
            np.add.at(P, (s_idx, a_idx, self.next_state[:, :, k]), self.prob[:, :, k])
        return P

    def expected_reward(self) -> np.ndarray:
        """R[s, a] = E[r | s, a]."""
        return (self.prob * self.reward).sum(axis=-1)


class TaskFamily(abc.ABC):
    """A family of related MDPs. Subclass, set the class attributes, implement the abstract members.

    The abstract members are the two spaces (shared by every task of the family instance),
    :meth:`sample_tasks` and :meth:`make_env`. Tabular families also mix in
    :class:`TabularModelMixin` (``class Mine(TabularModelMixin, TaskFamily)``).

    Registered through the ``opt_suite.families`` entry point group; the entry point's name is the
    family's spec name. Class attributes:

    Attributes:
      name: the spec name (``family.name``), e.g. ``"fourrooms"``.
      description: one line for ``opt-suite list`` (default "": the docstring's first line).
      env_id: the versioned gymnasium id the family registers, e.g. ``"opt_suite/FourRooms-v0"``.
      frame_unit: what its envs' ``info["frames"]`` count, as the report's frame axes and
        budgets name it: ``"env steps"`` (default: one frame per step, or the wrapped env's own
        steps) or, e.g., Atari's ``"emulator frames"`` (an action repeats for several). The
        runner records it with the run, so the report never loads the family to name its axis.
      Params, Variation, TaskParams: frozen dataclasses (see the module docstring).
    """

    name: ClassVar[str]
    description: ClassVar[str] = ""
    env_id: ClassVar[str]
    frame_unit: ClassVar[str] = "env steps"
    Params: ClassVar[type]
    Variation: ClassVar[type]
    TaskParams: ClassVar[type]

    def __init__(self, params: Any) -> None:
        self.params = params

    @property
    @abc.abstractmethod
    def observation_space(self) -> spaces.Space:
        """The observation space of every task's env (e.g. ``Discrete(S)``, a ``Box`` of frames)."""

    @property
    @abc.abstractmethod
    def action_space(self) -> spaces.Space:
        """The action space of every task's env (``Discrete(A)`` for option discovery)."""

    @property
    def capabilities(self) -> frozenset[str]:
        """What this family offers (see :mod:`opt_suite.families.capabilities`)."""
        from opt_suite.families.capabilities import offered

        return offered(self)

    def env_memory(self) -> tuple[int, str] | None:
        """(bytes, what) one env of this family takes, for the work estimate; None: negligible.

        Override where the family's params size the env (the ``gymnasium`` family measures it).
        """
        return None

    @property
    def instance_name(self) -> str:
        """Prefix of task ids, e.g. ``fourrooms-40x40``; override to include the defining params."""
        return self.name

    @abc.abstractmethod
    def sample_tasks(self, variation: Any, count: int, rng: np.random.Generator) -> list[Any]:
        """Draw ``count`` TaskParams according to ``variation``, using only ``rng``."""

    def sample_test_tasks(self, variation: Any, count: int, rng: np.random.Generator) -> list[Any]:
        """Draw ``count`` *test* TaskParams (``tasks.test_per_seed``'s draws), using only ``rng``.

        Default: :meth:`sample_tasks` (train and test tasks come from one distribution). A family
        whose variation can hold test tasks out of the train distribution (four rooms'
        ``held_out_room``) overrides it, and :meth:`holds_test_tasks_out` too.
        """
        return self.sample_tasks(variation, count, rng)

    def holds_test_tasks_out(self, variation: Any) -> bool:
        """Whether ``variation`` draws test tasks apart (:meth:`sample_test_tasks`). Default: no."""
        return False

    def check_variation(self, variation: Any) -> list[tuple[str, str]]:
        """Problems with ``tasks.vary`` that need the family's params, as ``(field, message)``.

        E.g. a fixed goal cell that is a wall of the chosen layout. The default defers to the
        variation's own ``check()`` hook, if any.
        """
        check = getattr(variation, "check", None)
        return list(check()) if callable(check) else []

    def default_task(self) -> Any:
        """The task ``gymnasium.make(env_id)`` builds when no task keyword is given (documented).

        Families whose ``TaskParams`` all have defaults need not override it.
        """
        return self.TaskParams()

    def check_task(self, task_params: Any) -> list[tuple[str, str]]:
        """Problems with an explicitly listed task, as ``(field, message)``: e.g. a wall cell."""
        return []

    @abc.abstractmethod
    def make_env(self, task: Task, **kwargs: Any) -> Any:
        """A fresh ``gymnasium.Env`` for ``task``; kwargs may include ``render_mode``."""

    def solved_when_cut(self, task: Task, episode_return: float) -> bool:
        """Whether an episode a step cap cut, having earned ``episode_return``, still succeeded.

        A cut episode is normally unfinished: on a goal task (four rooms, FrozenLake, MiniGrid)
        the cap means the goal was never reached, and a demonstration cut there is dropped. On
        a survival task the cap *is* the success: CartPole balanced until its own time limit.
        Demonstration sources ask this of every cut trajectory (``ppo_expert``, ``scripted``).
        Default: never (goal tasks); the ``gymnasium`` family answers by the env's success
        return (its ``success_return``, by default gymnasium's registered ``reward_threshold``).
        """
        return False

    def reference_options(self, task: Task) -> OptionSet | None:
        """Hand-designed options for ``task`` (an independent check of learned ones), or None.

        Default: none. A family that overrides this *offers* reference options (the capability
        :data:`~opt_suite.families.capabilities.REFERENCE_OPTIONS`, needed by the
        ``reference_options`` method), e.g. four rooms' hallway options (Sutton, Precup & Singh
        1999). They may carry initiation sets (:meth:`OptionSet.initiation`).
        """
        return None

    @property
    def offers_reference_options(self) -> bool:
        """Whether :meth:`reference_options` gives options (default: the family overrides it).

        A family that overrides it for some of its instances only (the ``gymnasium`` family: for
        envs that offer options of their own) answers per instance.
        """
        return type(self).reference_options is not TaskFamily.reference_options

    def make_env_batch(self, task: Task, num_envs: int, max_steps: int) -> EnvBatch:
        """``num_envs`` copies of ``task``'s env, each cut at ``max_steps``, stepped as a batch.

        Called (through :func:`opt_suite.families.env_batch.make_env_batch`, which checks the
        counts) by the option-augmented env of the ``tf_agents`` learner. Default: a
        :class:`~opt_suite.families.env_batch.SequentialBatch` of ``make_env(task)`` in a
        ``TimeLimit``; a family with a faster batch overrides it (Atari: emulators on C++
        threads). The batch must give the same episodes as the default, step for step.
        """
        from opt_suite.families.env_batch import sequential_batch

        return sequential_batch(self, task, num_envs, max_steps)

    def make_vector_env(self, task: Task, num_envs: int) -> gymnasium.vector.VectorEnv:
        """``num_envs`` copies of ``task``'s env as a gymnasium vector env (next-step autoreset).

        Called by the PPO experts (:mod:`opt_suite.agents.expert`) to act in lockstep. Seeded
        with ``reset(seed=s)``, sub-env i gets seed ``s + i``. Default: a ``SyncVectorEnv`` of
        ``make_env(task)``.
        """
        import functools

        import gymnasium

        return gymnasium.vector.SyncVectorEnv(
            [functools.partial(self.make_env, task) for _ in range(num_envs)],
            autoreset_mode=gymnasium.vector.AutoresetMode.NEXT_STEP,
        )

    def make_tasks(
        self, variation: Any, listed: Sequence[Any], count: int, train: int, test: int, seed: int
    ) -> tuple[list[Task], list[Task]]:
        """The train and test tasks of a spec: listed ones first, the rest sampled from ``seed``.

        The first ``train`` tasks (in listed-then-sampled order) are train tasks, the next ``test``
        are test tasks. Sampling uses its own ``SeedSequence(seed)`` stream so that task identity
        never depends on anything but the spec. A variation that holds test tasks out
        (:meth:`holds_test_tasks_out`) draws the sampled train tasks before the sampled test
        tasks (:meth:`sample_test_tasks`), from the same stream.
        """
        rng = np.random.default_rng(np.random.SeedSequence(seed))
        params = list(listed)[:count]
        if self.holds_test_tasks_out(variation):
            params += self.sample_tasks(variation, max(0, train - len(params)), rng)
            params += self.sample_test_tasks(variation, max(0, train + test - len(params)), rng)
        elif len(params) < count:
            params += self.sample_tasks(variation, count - len(params), rng)
        return split_tasks(self.instance_name, params, train, test)


def split_tasks(
    prefix: str, params: Sequence[Any], train: int, test: int
) -> tuple[list[Task], list[Task]]:
    """The first ``train`` TaskParams as train tasks, the next ``test`` as test tasks (ids too)."""
    train_tasks = [Task(f"{prefix}/train/{i}", "train", i, p) for i, p in enumerate(params[:train])]
    test_tasks = [
        Task(f"{prefix}/test/{i}", "test", i, p) for i, p in enumerate(params[train : train + test])
    ]
    return train_tasks, test_tasks


class TabularModelMixin(TaskFamily):
    """Mixed into families whose tasks have an exact tabular model (four rooms, chains).

    ``class FourRooms(TabularModelMixin, TaskFamily)``. Such a family's observations are state
    indices (``Discrete(S)``) and its actions ``Discrete(A)``; :meth:`tabular_model` is the model
    the env samples from. It derives from :class:`TaskFamily` (a tabular family *is* a task
    family), so that code holding one can use both interfaces. List it first, as the built-ins and
    the README do: ``class Mine(TaskFamily, TabularModelMixin)`` has no consistent method
    resolution order and fails when the class is defined.
    """

    @abc.abstractmethod
    def tabular_model(self, task: Task) -> TabularModel:
        """The exact model of ``task`` (the same S and A for every task of the family)."""


def exact_model(family: TaskFamily, task: Task) -> TabularModel | None:
    """``family.tabular_model(task)`` for tabular families, None for every other family."""
    return family.tabular_model(task) if isinstance(family, TabularModelMixin) else None
