"""The contracts every task family's tests inherit (in the spirit of dm_env's EnvironmentTestMixin).

Two classes, one per kind of family. Subclass one in your tests and provide the family (and, if
the default ``Variation()`` does not suit, a variation); every ``test_contract_*`` then runs::

    from opt_suite.testing import TabularFamilyContract

    class TestCorridorContract(TabularFamilyContract):
        def family(self):
            return Corridor(Corridor.Params(length=5))

:class:`EnvContract` (any family): registered under its name, its env under a versioned gymnasium
id in its own namespace; ``check_env`` passes with warnings as errors, headless, in every render
mode the env's metadata declares (and no other); the env's spaces are the family's; seeded
determinism; an episode ends (terminated or truncated) within ``episode_step_limit`` random steps;
``make_tasks`` is deterministic in its seed with readable ids, listed tasks first, sampled tasks
pass ``check_task``; and Params, Variation and TaskParams survive the YAML -> dataclass -> YAML
round trip.

:class:`TabularFamilyContract` (families with :class:`~opt_suite.families.base.TabularModelMixin`)
adds: the env samples exactly the ``tabular_model``'s transitions and rewards (chi-square on the
outcome frequencies, and the model's own arrays when the env exposes ``unwrapped.model``); the
greedy policy of value iteration on the model reaches a terminal state; the model is well-formed
and read-only; seeds matter exactly when the family is stochastic.

The checks need no pytest: :func:`check_family` runs them from a script and returns the problems
it finds (the ``*Contract`` classes add one pytest test per check).

Length (over the 400 lines the tree aims for): the family checks and their thin pytest wrappers
are one contract, kept in one file so that a plugin author reads what is checked where it is run.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
import warnings
from collections import Counter
from typing import Any, ClassVar

import gymnasium
import numpy as np
import yaml
from gymnasium.utils.env_checker import check_env
from scipy import stats

from opt_suite import registry
from opt_suite.families.base import TabularModel, TabularModelMixin, Task, TaskFamily
from opt_suite.spec import Spec, canonical_yaml, parse_spec, to_plain
from opt_suite.testing.checks import Checks

__all__ = [
    "EnvChecks",
    "EnvContract",
    "TabularFamilyChecks",
    "TabularFamilyContract",
    "FamilyContract",
    "check_family",
    "greedy_policy",
    "spec_round_trip",
]


def greedy_policy(model: TabularModel, gamma: float = 0.99, tol: float = 1e-9) -> np.ndarray:
    """Greedy policy [S] of value iteration on the exact model (terminal rows are absorbing)."""
    values = np.zeros(model.num_states)
    for _ in range(100_000):
        q = (model.prob * (model.reward + gamma * values[model.next_state])).sum(axis=-1)
        q[model.terminal] = 0.0
        new_values = q.max(axis=1)
        if np.abs(new_values - values).max() < tol:
            break
        values = new_values
    return q.argmax(axis=1)


def _fitting_learner(family: TaskFamily) -> str:
    """A registered learner whose requirements the family meets (the spec must validate)."""
    from opt_suite import registry
    from opt_suite.families.capabilities import unfit

    reasons = []
    for name in registry.names(registry.LEARNERS):
        try:
            learner = registry.load(registry.LEARNERS, name)
        except registry.RegistryError as exc:
            reasons.append(f"{name}: {exc}")
            continue
        problem = unfit(learner, learner.Params(), family)  # at its defaults
        if problem is None:
            return name
        reasons.append(problem)
    raise AssertionError(
        f"no registered learner fits family {family.name!r}: " + " | ".join(reasons or ["none"])
    )


def spec_round_trip(family: TaskFamily, variation: Any, listed: list[Any]) -> tuple[Spec, str]:
    """The family's params, variation and tasks written into a spec's YAML and read back.

    Goes through the real spec pipeline (``to_plain`` -> YAML -> ``parse_spec``), so the family's
    annotations must be ones the spec converter reads. Returns the spec and its canonical YAML.
    """
    plain = {
        "name": "family-round-trip",
        "family": {"name": type(family).name, "params": to_plain(family.params)},
        "tasks": {
            "count": len(listed),
            "train": 1,
            "test": len(listed) - 1,
            "vary": to_plain(variation),
            "list": to_plain(list(listed)),
        },
        "methods": [{"name": "primitives", "method": "primitives"}],
        "evaluation": {"learner": _fitting_learner(family)},
    }
    spec = parse_spec(yaml.safe_dump(plain, sort_keys=False), source="family_contract")
    return spec, canonical_yaml(spec)


def _key(value: Any) -> Any:
    """A comparable form of an observation (arrays compare by their bytes)."""
    if isinstance(value, np.ndarray):
        return (value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, tuple):
        return tuple(_key(v) for v in value)
    return value


class EnvChecks(Checks):
    """The checks of any family: implement :meth:`family` (and :meth:`variation` if needed).

    :class:`EnvContract` runs each as a pytest test; :func:`check_family` returns the problems.
    """

    #: Random-action steps within which an episode must end (terminated or truncated).
    episode_step_limit: ClassVar[int] = 10_000

    def family(self) -> TaskFamily:
        """The family instance under test (small settings keep the contract fast)."""
        raise NotImplementedError

    def variation(self) -> Any:
        """How tasks are sampled; the family's default Variation unless overridden."""
        return type(self.family()).Variation()

    def tasks(self, seed: int = 0) -> list[Task]:
        """Three train and three test tasks sampled with ``seed``."""
        train, test = self.family().make_tasks(self.variation(), (), 6, 3, 3, seed)
        return train + test

    # Registration ---------------------------------------------------------------------------

    def check_registered_under_its_name(self):
        family = self.family()
        cls = type(family)
        assert registry.load(registry.FAMILIES, cls.name) is cls
        assert re.fullmatch(r"[A-Za-z0-9_]+/[A-Za-z0-9_]+-v\d+", cls.env_id), cls.env_id
        assert cls.env_id in gymnasium.registry
        assert cls.description and "\n" not in cls.description
        # The run records it and the report names its frame axes and budgets by it: one line.
        unit = cls.frame_unit
        assert isinstance(unit, str) and unit.strip() == unit and unit and "\n" not in unit, unit
        for params_cls in (cls.Params, cls.Variation, cls.TaskParams):
            assert dataclasses.is_dataclass(params_cls)
            assert params_cls.__dataclass_params__.frozen, params_cls

    def check_module_does_not_import_tensorflow(self):
        module = type(self.family()).__module__
        code = f"import sys, {module}, opt_suite.families; print('tensorflow' in sys.modules)"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "False"

    # Gymnasium env --------------------------------------------------------------------------

    def check_check_env_in_every_declared_render_mode(self):
        family = self.family()
        declared = family.make_env(self.tasks()[0]).metadata.get("render_modes", [])
        for render_mode in [None, *declared]:
            env = family.make_env(self.tasks()[0], render_mode=render_mode)
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                check_env(env.unwrapped, skip_render_check=render_mode is None)
            env.reset(seed=0)
            picture = env.render() if render_mode is not None else None
            if render_mode == "rgb_array":
                assert picture.dtype == np.uint8 and picture.ndim == 3 and picture.shape[-1] == 3
            if render_mode == "ansi":
                assert isinstance(picture, str) and picture
            env.close()

    def check_env_spaces_are_the_family_spaces(self):
        family = self.family()
        for task in self.tasks()[:2]:
            env = family.make_env(task)
            assert env.observation_space == family.observation_space
            assert env.action_space == family.action_space
            env.close()

    def _rollout(self, task: Task, seed: int, steps: int = 200) -> list[Any]:
        env = self.family().make_env(task)
        actions = np.random.default_rng(12345)  # the same action sequence for every env seed
        env.action_space.seed(0)
        obs, _ = env.reset(seed=seed)
        trajectory = [_key(obs)]
        for _ in range(steps):
            obs, reward, terminated, truncated, _ = env.step(
                int(actions.integers(env.action_space.n))
            )
            trajectory.append((_key(obs), reward, terminated, truncated))
            if terminated or truncated:
                trajectory.append(_key(env.reset()[0]))  # no seed: continues the seeded stream
        env.close()
        return trajectory

    def check_seeded_determinism(self):
        task = self.tasks()[0]
        assert self._rollout(task, seed=7) == self._rollout(task, seed=7)

    def check_an_episode_ends(self):
        env = self.family().make_env(self.tasks()[0])
        env.reset(seed=0)
        actions = np.random.default_rng(0)
        for _ in range(self.episode_step_limit):
            *_, terminated, truncated, _ = env.step(int(actions.integers(env.action_space.n)))
            if terminated or truncated:
                break
        else:
            raise AssertionError(f"no episode end within {self.episode_step_limit} random steps")
        env.close()

    # Tasks ----------------------------------------------------------------------------------
    def check_make_tasks_is_deterministic_with_readable_ids(self):
        family = self.family()
        train, test = family.make_tasks(self.variation(), (), 6, 4, 2, seed=3)
        again_train, again_test = family.make_tasks(self.variation(), (), 6, 4, 2, seed=3)
        assert train + test == again_train + again_test
        assert [t.task_id for t in train] == [f"{family.instance_name}/train/{i}" for i in range(4)]
        assert [t.task_id for t in test] == [f"{family.instance_name}/test/{i}" for i in range(2)]
        other_train, other_test = family.make_tasks(self.variation(), (), 6, 4, 2, seed=4)
        assert [t.params for t in train + test] != [t.params for t in other_train + other_test]

    def check_listed_tasks_come_first(self):
        family = self.family()
        listed = self.tasks(seed=9)[-1].params
        train, _ = family.make_tasks(self.variation(), (listed,), 3, 2, 1, seed=0)
        assert train[0].params == listed

    def check_sampled_tasks_pass_check_task(self):
        family = self.family()
        for task in self.tasks():
            assert family.check_task(task.params) == []

    def check_spec_yaml_round_trip(self):
        family, variation = self.family(), self.variation()
        listed = [task.params for task in self.tasks()[:3]]
        spec, text = spec_round_trip(family, variation, listed)
        assert spec.family.params == family.params
        assert spec.tasks.vary == variation
        assert spec.tasks.list == tuple(listed)
        again = parse_spec(text)  # canonical YAML -> dataclasses -> YAML is stable
        assert to_plain(again.family) == to_plain(spec.family)
        assert to_plain(again.tasks) == to_plain(spec.tasks)


class TabularFamilyChecks(EnvChecks):
    """The :class:`EnvContract` plus the exact model's tests, for tabular families."""

    stochastic: ClassVar[bool] = True  # some transition has two outcomes of positive probability
    frequency_samples: ClassVar[int] = 3000  # env steps per (s, a) in the frequency test

    def check_env_is_the_model(self):
        family = self.family()
        for task in self.tasks()[:2]:
            env = family.make_env(task)
            model = family.tabular_model(task)
            assert env.observation_space == gymnasium.spaces.Discrete(model.num_states)
            assert env.action_space == gymnasium.spaces.Discrete(model.num_actions)
            assert env.reset(seed=0)[0] == model.start
            inner = getattr(env.unwrapped, "model", None)
            if inner is None:  # an env that samples its own way: the chi-square test checks it
                continue
            for name in ("next_state", "prob", "reward", "terminal"):
                np.testing.assert_array_equal(getattr(inner, name), getattr(model, name))
            remade = gymnasium.make(env.spec)  # the spec's kwargs rebuild the same task
            np.testing.assert_array_equal(remade.unwrapped.model.prob, model.prob)
            assert remade.unwrapped.model.start == model.start

    def check_seeds_matter_exactly_when_stochastic(self):
        task = self.tasks()[0]
        differ = self._rollout(task, seed=1) != self._rollout(task, seed=2)
        assert differ == self.stochastic

    def check_episode_end_is_reachable(self):
        family = self.family()
        for task in self.tasks()[:3]:
            policy = greedy_policy(family.tabular_model(task))
            env = family.make_env(task)
            obs, _ = env.reset(seed=0)
            terminated = truncated = False
            while not (terminated or truncated):
                obs, _, terminated, truncated, _ = env.step(int(policy[obs]))
            assert terminated, f"{task.task_id}: the optimal policy did not reach a terminal state"

    def check_env_frequencies_match_the_model(self):
        family = self.family()
        for task in self.tasks()[:2]:
            model = family.tabular_model(task)
            env = family.make_env(task)
            env.reset(seed=2024)
            s = model.start
            for a in range(model.num_actions):
                expected = Counter()
                for k in range(model.prob.shape[-1]):
                    expected[int(model.next_state[s, a, k])] += model.prob[s, a, k]
                seen = Counter()
                for _ in range(self.frequency_samples):
                    env.reset()
                    obs, reward, *_ = env.step(a)
                    seen[obs] += 1
                    outcomes = model.next_state[s, a] == obs
                    assert outcomes.any() and model.prob[s, a][outcomes].sum() > 0
                    assert reward in set(model.reward[s, a][outcomes])
                support = sorted(o for o, p in expected.items() if p > 0)
                assert set(seen) <= set(support), (s, a, seen, expected)
                if len(support) > 1:
                    f_obs = np.array([seen[o] for o in support])
                    f_exp = np.array([expected[o] for o in support]) * self.frequency_samples
                    p_value = stats.chisquare(f_obs, f_exp).pvalue
                    assert p_value > 1e-4, (task.task_id, s, a, f_obs, f_exp)

    # The exact model ------------------------------------------------------------------------

    def check_model_is_well_formed(self):
        family = self.family()
        for task in self.tasks():
            model = family.tabular_model(task)
            S, A, K = model.next_state.shape
            assert model.next_state.dtype == np.int32 and model.prob.dtype == np.float64
            assert model.prob.shape == model.reward.shape == (S, A, K)
            assert model.terminal.shape == (S,) and model.terminal.dtype == bool
            assert ((model.next_state >= 0) & (model.next_state < S)).all()
            assert (model.prob >= 0).all()
            np.testing.assert_allclose(model.prob.sum(axis=-1), 1.0, atol=1e-12)
            assert model.terminal.any() and not model.terminal[model.start]
            dense = model.dense_transitions()[model.terminal]  # terminal rows are absorbing
            goals = np.flatnonzero(model.terminal)
            np.testing.assert_array_equal(dense[np.arange(len(goals)), :, goals], 1.0)
            assert not model.prob.flags.writeable and not model.next_state.flags.writeable
            if model.cells is not None:
                assert model.cells.shape == (S, 2) and model.shape is not None
                assert len({tuple(c) for c in model.cells}) == S


#: The name this contract had before :class:`EnvContract` existed.


class EnvContract(EnvChecks):
    """Inherit and implement :meth:`family` (and :meth:`variation` if needed): any family.

    Each ``test_contract_*`` is one check of :class:`EnvChecks`.
    """

    def test_contract_registered_under_its_name(self) -> None:
        self.check_registered_under_its_name()

    def test_contract_module_does_not_import_tensorflow(self) -> None:
        self.check_module_does_not_import_tensorflow()

    def test_contract_check_env_in_every_declared_render_mode(self) -> None:
        self.check_check_env_in_every_declared_render_mode()

    def test_contract_env_spaces_are_the_family_spaces(self) -> None:
        self.check_env_spaces_are_the_family_spaces()

    def test_contract_seeded_determinism(self) -> None:
        self.check_seeded_determinism()

    def test_contract_an_episode_ends(self) -> None:
        self.check_an_episode_ends()

    def test_contract_make_tasks_is_deterministic_with_readable_ids(self) -> None:
        self.check_make_tasks_is_deterministic_with_readable_ids()

    def test_contract_listed_tasks_come_first(self) -> None:
        self.check_listed_tasks_come_first()

    def test_contract_sampled_tasks_pass_check_task(self) -> None:
        self.check_sampled_tasks_pass_check_task()

    def test_contract_spec_yaml_round_trip(self) -> None:
        self.check_spec_yaml_round_trip()


class TabularFamilyContract(TabularFamilyChecks, EnvContract):
    """:class:`EnvContract` and the exact-model checks of :class:`TabularFamilyChecks`."""

    def test_contract_env_is_the_model(self) -> None:
        self.check_env_is_the_model()

    def test_contract_seeds_matter_exactly_when_stochastic(self) -> None:
        self.check_seeds_matter_exactly_when_stochastic()

    def test_contract_episode_end_is_reachable(self) -> None:
        self.check_episode_end_is_reachable()

    def test_contract_env_frequencies_match_the_model(self) -> None:
        self.check_env_frequencies_match_the_model()

    def test_contract_model_is_well_formed(self) -> None:
        self.check_model_is_well_formed()


FamilyContract = TabularFamilyContract


def check_family(
    family: TaskFamily, variation: Any = None, stochastic: bool | None = None
) -> list[str]:
    """Every problem the family contract finds in ``family`` (empty: it passes).

    The exact-model checks run too when the family has a tabular model. ``variation`` (how tasks
    are sampled) defaults to the family's ``Variation()``; ``stochastic`` (whether seeds must
    change a rollout) to whether the first task's model has a transition with two outcomes.
    """
    base = TabularFamilyChecks if isinstance(family, TabularModelMixin) else EnvChecks

    class Given(base):  # type: ignore[valid-type, misc]
        def family(self) -> TaskFamily:
            return family

        def variation(self) -> Any:
            return type(family).Variation() if variation is None else variation

    checks = Given()
    if isinstance(checks, TabularFamilyChecks):
        if stochastic is None:
            try:
                model = family.tabular_model(checks.tasks()[0])  # type: ignore[attr-defined]
                stochastic = bool(((model.prob > 0).sum(axis=-1) > 1).any())
            except Exception:  # noqa: BLE001 - the model checks report what is wrong
                stochastic = True
        checks.stochastic = stochastic  # type: ignore[misc]
    return checks.problems()
