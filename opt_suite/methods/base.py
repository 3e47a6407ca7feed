"""The method contract: every option-discovery method, ours and every baseline, implements it.

Given the train tasks, their demonstrations (and, for methods that learn by interacting, an
interaction budget) and a seed, a method returns an option set. The protocol (``opt_suite.runner``)
then runs the *same* test-time learner for every method on the same held-out test tasks with the
same seeds — the comparison is fair by construction.

Methods are registered through the ``opt_suite.methods`` entry point group (the entry point name is
the spec's ``methods[].method``). A method module must not import TensorFlow at import time
(``opt-suite list`` and ``validate`` load every registered class); import it inside
:meth:`Method.discover`.
"""

from __future__ import annotations

import abc
import dataclasses
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from opt_suite.component import Component, adapt_memory
from opt_suite.families.base import TabularModel, Task, TaskFamily, exact_model
from opt_suite.methods.budget import Budget, CountingEnv, DiscoveryBudget, DiscoverySteps
from opt_suite.moved import REMOVED_IN
from opt_suite.options import OptionSet, TabularOptionSet  # re-exported: its old home
from opt_suite.trajectory import Trajectory  # re-exported: its old home

__all__ = [
    "Trajectory",
    "OptionSet",
    "TabularOptionSet",
    "DiscoveryContext",
    "DISCOVERY_WARNINGS",
    "CLONING_FIT_KEYS",
    "Discovery",
    "Method",
    "OLD_FLAGS",
    "discrete_actions",
    "observation_shape",
]


@dataclasses.dataclass(frozen=True, eq=False)
class DiscoveryContext:
    """Everything a method may use to discover options.

    Attributes:
      family: the task family (its exact models are available through ``family.tabular_model``).
      train_tasks: the train tasks.
      demonstrations: demonstration trajectories sampled from experts on the train tasks.
      interaction_budget: env steps a method that learns by interacting may spend, summed over the
        train tasks.
      seed: the only source of randomness a method may use.
      budget: what the envs of :meth:`make_env` have counted (shared by all of them).
      matched_count: how many options the entry :meth:`Method.count_entry` names discovered
        on this seed (None: the method names none), e.g. K-matched untrained options.
    """

    family: TaskFamily
    train_tasks: Sequence[Task]
    demonstrations: Sequence[Trajectory]
    interaction_budget: int
    seed: np.random.SeedSequence
    budget: Budget = dataclasses.field(default=None)  # type: ignore[assignment]
    matched_count: int | None = None

    def __post_init__(self) -> None:
        if self.budget is None:
            object.__setattr__(self, "budget", Budget(self.interaction_budget))

    def make_env(self, task: Task, **kwargs: Any) -> Any:
        """``family.make_env(task)`` counting its steps (and frames) into :attr:`budget`.

        Methods that learn by interacting take their envs from here: the runner stops them at
        ``interaction_budget`` env steps (see :mod:`opt_suite.methods.budget`) and stores the count.
        """
        return CountingEnv(self.family.make_env(task, **kwargs), self.budget)

    def tabular_models(self, method: str) -> list[TabularModel]:
        """``family.tabular_model`` of every train task, all of one state and action count.

        Tabular methods tabulate their options over this one state set.

        Args:
          method: the calling method's name, for error messages.

        Raises:
          ValueError: no train tasks, a family without tabular models (e.g. Atari), or train tasks
            whose models differ in S or A.
        """
        if not self.train_tasks:
            raise ValueError(f"{method}: needs at least one train task, got none")
        models: list[TabularModel] = []
        for task in self.train_tasks:
            model = exact_model(self.family, task)
            if model is None:
                raise ValueError(
                    f"{method}: family {self.family.name!r} has no tabular model; this method "
                    "needs one (tabular families only)"
                )
            models.append(model)
        shapes = {(model.num_states, model.num_actions) for model in models}
        if len(shapes) != 1:
            raise ValueError(
                f"{method}: train tasks disagree on (states, actions): {sorted(shapes)}; expected "
                "one shared state and action set"
            )
        return models


def discrete_actions(family: TaskFamily, method: str) -> int:
    """A, the size of ``family``'s ``Discrete`` action space.

    Raises:
      ValueError: the action space is not ``Discrete`` (naming ``method``).
    """
    space = family.action_space
    n = getattr(space, "n", None)
    if n is None or getattr(space, "shape", None) != ():
        raise ValueError(
            f"{method}: needs a family with discrete actions; {family.name} has {space}"
        )
    return int(n)


def observation_shape(family: TaskFamily, method: str) -> tuple[int, ...]:
    """The shape of ``family``'s observations (``()`` for state indices).

    Raises:
      ValueError: the observation space has no fixed shape (e.g. ``Graph``), naming ``method``.
    """
    space = family.observation_space
    if space.shape is None:
        raise ValueError(
            f"{method}: needs observations of a fixed shape; {family.name} has {space}"
        )
    return space.shape


#: ``Discovery.info`` key of a list of one-line warnings about the discovery (e.g. demonstrations a
#: method had to leave out): the report names each beside the leaderboard, so a method that ran on
#: less than it was given says so instead of passing silently.
DISCOVERY_WARNINGS = "warnings"

#: ``Discovery.info`` keys of a cloning control's fit to the demonstrations (``bc_option``, issue
#: 35): accuracy and mean log-likelihood on those it was cloned on, and a second clone's on those
#: it did not see; the report tables them (``DiscoveryRecord.cloning_fit``).
FIT_ACCURACY, FIT_LOG_LIKELIHOOD = "fit_accuracy", "fit_log_likelihood"
HELD_OUT_ACCURACY, HELD_OUT_LOG_LIKELIHOOD = "held_out_accuracy", "held_out_log_likelihood"
CLONING_FIT_KEYS = (FIT_ACCURACY, FIT_LOG_LIKELIHOOD, HELD_OUT_ACCURACY, HELD_OUT_LOG_LIKELIHOOD)


@dataclasses.dataclass(frozen=True, eq=False)
class Discovery:
    """What a method returns.

    Attributes:
      options: the discovered option set (any :class:`~opt_suite.options.OptionSet`).
      curves: named per-step/epoch training curves to store with the run (e.g. ``jhat``,
        ``log_prob``, ``terminations`` per epoch for offline_options; steps per episode for
        option-critic). Arrays of any 1-D length.
      info: small JSON-serialisable facts (e.g. number of options kept, wall time); a list of
        one-line warnings under :data:`DISCOVERY_WARNINGS` reaches the report.
      files: extra files (name -> bytes) stored in the discovery cell's folder beside the option
        set, digest-checked like it (``ResultsStore.recorded_file``); e.g. offline_options'
        ``policy.npz``, the policy over options it trained. They never reach the learner.
    """

    options: OptionSet
    curves: Mapping[str, np.ndarray] = dataclasses.field(default_factory=dict)
    info: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    files: Mapping[str, bytes] = dataclasses.field(default_factory=dict)


class Method(Component):
    """An option-discovery method. Subclass, set the class attributes, implement :meth:`discover`.

    ``name``, ``description``, ``Params``, ``requires``, :meth:`requirements`,
    :meth:`check_family` and :meth:`memory_estimate` are declared by
    :class:`~opt_suite.component.Component`; a method adds:

    What a discovery reads (the demonstrations, env steps) is :meth:`discovery_budget` of its
    params, nowhere else: the plan keys its cell by it. The class flags ``uses_demonstrations`` /
    ``uses_interaction`` of 0.2.0 are gone; a plugin that still sets them keeps working, with a
    ``DeprecationWarning`` (:data:`OLD_FLAGS`).

    Attributes:
      controls: the method this one is a demonstration-fair control of (e.g. ``bc_option``:
        ``offline_options``), "" for none; validate names a control at its own key when the
        demonstrations source gives the family no demonstrations.
      starts_policy: its option set is a start for the learner's policy
        (:class:`~opt_suite.options.policy_start.PolicyStart`, e.g. ``bc_ppo``) rather than
        options; validate refuses it with a learner that has no policy to initialise.
    """

    controls: ClassVar[str] = ""
    starts_policy: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        adapt_memory(cls, "memory_hint")
        _adapt_flags(cls)

    @classmethod
    def discovery_budget(cls, params: Any) -> DiscoveryBudget:
        """What discovery with these params reads and spends: demonstrations, env steps.

        The plan makes the discovery depend on the demonstrations cell only when
        ``demonstrations`` is true (the context's ``demonstrations`` are empty otherwise), and
        hands it an interaction budget only when it ``interacts``: env steps up to
        ``evaluation.interaction_budget`` (``env_steps`` None), or the number its params fix (a
        random walk of ``walk_frames``: the runner stops it there, and ``validate`` refuses more
        than the interaction budget). Default: neither (options built from the model alone).
        """
        return DiscoveryBudget(False, 0)

    @classmethod
    def discovery_steps(cls, params: Any) -> DiscoverySteps | None:
        """The gradient steps discovery takes at most with these params, or None (not declared).

        ``validate`` warns about an entry whose steps are far above the spec's other methods'
        (:func:`opt_suite.runner.estimate.costly_discoveries`). Default: None.
        """
        return None

    @classmethod
    def count_entry(cls, params: Any) -> tuple[str, str] | None:
        """(param key, entry name): discovery waits for that entry's and gets its option count.

        The runner makes that entry's discovery cell (same seed) a dependency and passes the
        number of options it found as ``DiscoveryContext.matched_count`` (``random_options``'
        ``count_of``: untrained options K-matched to the learned ones). ``validate`` checks the
        entry exists and comes earlier in ``methods``. Default: None.
        """
        return None

    @classmethod
    def seed_entry(cls, params: Any) -> tuple[str, str] | None:
        """(param key, entry name): discovery takes that method entry's seed instead of its own.

        A control that stands in for a method's first option (``bc_option``'s
        ``initial_weights_of``) then starts from the very weights the method draws first.
        ``validate`` checks the entry exists and is of the method this one ``controls``, and
        :meth:`seed_entry_problems` whatever else must agree. Default: None (its own seed).
        """
        return None

    @classmethod
    def seed_entry_problems(cls, params: Any, entry_params: Any) -> list[tuple[str, str]]:
        """(key, message) for each setting that must equal the seed entry's and does not."""
        return []

    @classmethod
    def option_count(cls, params: Any) -> int | None:
        """The most options :meth:`discover` returns with these params, or None if unknown.

        The work estimate (:mod:`opt_suite.runner.estimate`) sizes the learner's Q table and the
        option set with it; None (the default) counts as 0.
        """
        return None

    @abc.abstractmethod
    def discover(self, context: DiscoveryContext) -> Discovery:
        """Return an option set for ``context.family`` learned from ``context`` alone."""


#: The class flags a method declared what it reads with in 0.2.0 (``discovery_budget`` says it
#: now, per params); the release that stops reading them is :data:`opt_suite.moved.REMOVED_IN`.
OLD_FLAGS = ("uses_demonstrations", "uses_interaction")
_FROM_FLAGS = "_opt_suite_from_old_flags"


def _adapt_flags(cls: type[Method]) -> None:
    """Give a subclass that sets an old flag the ``discovery_budget`` the flags meant, and warn.

    A method written against 0.2.0 sets ``uses_demonstrations = True`` and leaves
    ``discovery_budget`` to the base class, which read the flags: it still gets the
    demonstrations (and, for ``uses_interaction``, env steps up to the interaction budget). One
    that also defines ``discovery_budget`` is planned by that alone; its flags are ignored.
    """
    flags = [name for name in OLD_FLAGS if name in cls.__dict__]
    if not flags:
        return
    # Who defines discovery_budget: the base class (or flags adapted here), or the plugin itself.
    owner = next(c for c in cls.__mro__ if "discovery_budget" in vars(c))
    derived = owner is Method or hasattr(vars(owner)["discovery_budget"], _FROM_FLAGS)
    what = " and ".join(flags) + (" is" if len(flags) == 1 else " are")
    then = (
        "define discovery_budget(cls, params) -> DiscoveryBudget instead"
        if derived
        else "ignored: its discovery_budget(params) says what it reads"
    )
    warnings.warn(
        f"{cls.__module__}.{cls.__qualname__}: {what} deprecated (read until opt-suite "
        f"{REMOVED_IN}); {then} (see docs/plugins-contracts.md)",
        DeprecationWarning,
        stacklevel=3,
    )
    if not derived:
        return
    reads = bool(getattr(cls, "uses_demonstrations", False))
    interacts = bool(getattr(cls, "uses_interaction", False))

    def discovery_budget(_cls: type, params: Any) -> DiscoveryBudget:
        return DiscoveryBudget(reads, None if interacts else 0)

    adapted: Any = classmethod(discovery_budget)
    setattr(adapted, _FROM_FLAGS, True)  # a subclass that sets a flag again adapts it again
    cls.discovery_budget = adapted  # type: ignore[method-assign,assignment]
