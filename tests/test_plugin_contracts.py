"""Plugin contracts: every hook is declared on its base class; broken plugins are named clearly."""

from __future__ import annotations

import dataclasses
from importlib import metadata

import numpy as np
import pytest
from gymnasium import spaces

from opt_suite import registry
from opt_suite.cli import main
from opt_suite.component import ProblemSize
from opt_suite.demonstrations.base import DemonstrationSource
from opt_suite.families.base import TaskFamily
from opt_suite.learners.base import Learner, LearnerContext
from opt_suite.methods.base import Method
from opt_suite.methods.budget import DiscoveryBudget
from opt_suite.stages import Stage


@dataclasses.dataclass(frozen=True)
class NoParams:
    """No parameters."""


class HalfFamily(TaskFamily):
    """A family that forgot make_env and sample_tasks."""

    name = "half"
    env_id = "test/Half-v0"
    Params = Variation = TaskParams = NoParams

    @property
    def observation_space(self) -> spaces.Space:
        return spaces.Discrete(3)

    @property
    def action_space(self) -> spaces.Space:
        return spaces.Discrete(2)


class NotAMethod:
    """Has a method's attributes but does not subclass Method."""

    name = "duck"
    Params = NoParams


class ContinuousFamily(TaskFamily):
    """Box actions: no registered learner can act in it."""

    name = "continuous"
    env_id = "test/Continuous-v0"
    Params = Variation = TaskParams = NoParams

    @property
    def observation_space(self) -> spaces.Space:
        return spaces.Box(0.0, 1.0, (3,))

    @property
    def action_space(self) -> spaces.Space:
        return spaces.Box(-1.0, 1.0, (2,))

    def sample_tasks(self, variation, count, rng):
        return [NoParams()] * count

    def make_env(self, task, **kwargs):
        raise NotImplementedError


@pytest.fixture
def with_broken_plugins(monkeypatch):
    """The real registry plus a half-implemented family and a method that is no Method."""
    real = registry._entry_points
    extra = {
        registry.FAMILIES: {"half": f"{__name__}:HalfFamily"},
        registry.METHODS: {"duck": f"{__name__}:NotAMethod"},
    }

    def entry_points(group):
        eps = dict(real(group))
        for name, value in extra.get(group, {}).items():
            eps[name] = metadata.EntryPoint(name, value, group)
        return eps

    registry.load.cache_clear()
    monkeypatch.setattr(registry, "_entry_points", entry_points)
    yield
    registry.load.cache_clear()


def test_an_abstract_family_names_its_entry_point_and_what_is_missing(with_broken_plugins):
    with pytest.raises(registry.RegistryError) as info:
        registry.load(registry.FAMILIES, "half")
    assert str(info.value) == (
        f"task family 'half' (entry point {__name__}:HalfFamily) does not implement: "
        "make_env, sample_tasks"
    )


def test_a_class_that_is_not_a_subclass_of_its_contract_is_refused(with_broken_plugins):
    with pytest.raises(registry.RegistryError, match=r"is not a subclass of opt_suite\.methods"):
        registry.load(registry.METHODS, "duck")


def test_list_flags_plugins_that_cannot_be_instantiated(with_broken_plugins, capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    half = next(line for line in out.splitlines() if line.lstrip().startswith("half "))
    assert f"ERROR: task family 'half' (entry point {__name__}:HalfFamily)" in half
    assert half.endswith("does not implement: make_env, sample_tasks")
    duck = next(line for line in out.splitlines() if line.lstrip().startswith("duck "))
    assert "ERROR: method 'duck'" in duck and "is not a subclass" in duck
    assert "fourrooms" in out and "offline_options" in out  # the working ones are listed


def test_validate_names_the_missing_members_and_other_specs_still_work(
    with_broken_plugins, tmp_path, capsys
):
    assert main(["validate", "fourrooms-quick"]) == 0  # uses neither broken plugin
    capsys.readouterr()
    spec = tmp_path / "half.yaml"
    spec.write_text(
        "name: half\nfamily: {name: half}\ntasks: {count: 2, train: 1, test: 1}\n"
        "methods: [{name: primitives, method: primitives}]\n"
    )
    assert main(["validate", str(spec)]) == 2
    err = capsys.readouterr().err
    assert "does not implement: make_env, sample_tasks" in err
    assert "Can't instantiate" not in err and "rejects these params" not in err
    assert "Traceback" not in err


def test_no_fitting_learner_says_why_for_each_learner(monkeypatch):
    from opt_suite.families.capabilities import EXACT_MODEL
    from opt_suite.testing.family import _fitting_learner

    class Tabular(Learner):
        name = "tabular"
        Params = NoParams
        requires = frozenset({EXACT_MODEL})

        def run(self, context):
            return []

    class Picky(Tabular):
        name = "picky"
        requires = frozenset()

        @classmethod
        def check_family(cls, params, family):
            return [("network", "needs image observations")]

    learners = {"tabular": Tabular, "picky": Picky}
    monkeypatch.setattr(registry, "names", lambda group: sorted(learners))
    monkeypatch.setattr(registry, "load", lambda group, name: learners[name])
    with pytest.raises(AssertionError) as info:
        _fitting_learner(ContinuousFamily(NoParams()))
    assert str(info.value) == (
        "no registered learner fits family 'continuous': "
        "picky: params.network: needs image observations | "
        "tabular needs a family with an exact model; continuous has no exact model"
    )


def test_base_class_hooks_have_documented_defaults():
    class Bare(Method):
        name = "bare"
        Params = NoParams

        def discover(self, context):
            raise NotImplementedError

    assert Bare.option_count(NoParams()) is None
    assert Bare.memory_estimate(NoParams(), ProblemSize(4, (), 10)) is None
    assert Bare.requirements(NoParams()) == frozenset()
    assert Bare.check_family(NoParams(), None) == []
    assert Bare.discovery_budget(NoParams()) == DiscoveryBudget(False, 0)  # reads nothing

    class Plain(Learner):
        name = "plain"
        Params = NoParams

        def run(self, context):
            return []

    assert not Plain.counts_usage and not Plain.frame_budgets
    assert Plain.requirements(NoParams()) == frozenset()
    with pytest.raises(NotImplementedError, match="learner 'plain' does not count option usage"):
        context = LearnerContext(None, [], None, 1, 1)  # type: ignore[arg-type]
        Plain(NoParams()).run_with_usage(context)

    class Source(DemonstrationSource):
        name = "source"
        Params = NoParams

        def collect(self, context):
            return []

    assert not Source.uses_checkpoints and Source.requirements(NoParams()) == frozenset()


def test_builtin_methods_declare_their_option_count():
    from baselines.eigenoptions import Eigenoptions
    from baselines.option_critic import OptionCritic
    from baselines.primitives import Primitives
    from baselines.random_options import RandomOptions
    from baselines.reference_options import ReferenceOptions
    from opt_suite.methods.offline_options import OfflineOptions

    counts = {
        Primitives: 0,
        RandomOptions: RandomOptions.Params().count,
        OfflineOptions: OfflineOptions.Params().max_options,
        Eigenoptions: Eigenoptions.Params().count,
        OptionCritic: OptionCritic.Params().options,
    }
    for cls, expected in counts.items():
        assert cls.option_count(cls.Params()) == expected, cls.name
    assert RandomOptions.option_count(dataclasses.replace(RandomOptions.Params(), count=9)) == 9
    assert ReferenceOptions.option_count(ReferenceOptions.Params()) is None  # the family decides


def test_the_work_estimate_asks_each_method_for_its_options():
    from opt_suite.runner.estimate import estimate_work
    from opt_suite.spec import find_spec, load_spec

    spec = load_spec(find_spec("fourrooms-quick"))

    class Seven(Method):
        name = "seven"
        Params = NoParams

        @classmethod
        def option_count(cls, params):
            return 7

        def discover(self, context):
            raise NotImplementedError

    size = estimate_work(spec, [0], [Seven] * len(spec.methods), 100, 4).largest_bytes
    # The Q table: test tasks x states x (actions + options) float64 = test x 100 x 11 x 8.
    assert size == max(spec.tasks.test * 100 * (4 + 7) * 8, 7 * 100 * 4 * 8, 100 * 4 * 20)


def test_the_default_vector_env_batches_make_env():
    from opt_suite.families.tabular.fourrooms import FourRooms

    family = FourRooms(FourRooms.Params())
    train, _ = family.make_tasks(FourRooms.Variation(), (), 2, 1, 1, seed=0)
    env = family.make_vector_env(train[0], 3)
    try:
        obs, _ = env.reset(seed=1)
        assert np.asarray(obs).shape == (3,)
    finally:
        env.close()


def test_stages_run_in_order_and_equal_the_store_strings():
    assert [s.order for s in Stage] == [0, 1, 2, 3]
    assert Stage.REFERENCES == "references"
    assert Stage.EVALUATION == "evaluation" and Stage("discovery") is Stage.DISCOVERY


def test_the_work_estimate_counts_the_experts_training_frames():
    """ppo_expert trains on each train task for ``frames``: the estimate includes them."""
    from opt_suite.demonstrations.ppo_expert import PPOExpert
    from opt_suite.demonstrations.tabular import OptimalExpert
    from opt_suite.runner.estimate import estimate_work
    from opt_suite.spec import find_spec, load_spec

    spec = load_spec(find_spec("fourrooms-quick"))

    class Demonstrated(Method):
        name = "demonstrated"
        Params = NoParams

        @classmethod
        def discovery_budget(cls, params):
            return DiscoveryBudget(True, 0)

        def discover(self, context):
            raise NotImplementedError

    methods = [Demonstrated] * len(spec.methods)
    plain = estimate_work(spec, [0, 1], methods, 100, 4)
    trained = estimate_work(spec, [0, 1], methods, 100, 4, expert_steps=40_000)
    assert trained.env_steps - plain.env_steps == 2 * spec.tasks.train * 40_000
    assert trained.expert_steps == 2 * spec.tasks.train * 40_000
    assert "training the experts" in trained.describe()
    assert "training the experts" not in plain.describe()
    assert PPOExpert.training_steps(PPOExpert.Params(), 500) == PPOExpert.Params().frames
    assert OptimalExpert.training_steps(OptimalExpert.Params(), 500) == 0  # plans, no steps
    # With references: measure, ppo_expert also trains one expert per test task and seed.
    cartpole = load_spec(find_spec("gymnasium-cartpole"))
    assert cartpole.report.references == "measure"
    frames = cartpole.demonstrations.params.frames
    demonstrated = [Demonstrated] * len(cartpole.methods)
    both = estimate_work(cartpole, [0, 1], demonstrated, None, 2, expert_steps=frames)
    assert both.expert_steps == 2 * (cartpole.tasks.train + cartpole.tasks.test) * frames
