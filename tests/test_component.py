"""The one component base: hooks shared by methods, learners and sources; old plugins adapted.

Plugins written before the context objects (positional ``run``/``collect``, ``memory_hint`` /
``network_memory``) must keep working with a DeprecationWarning naming the migration.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from opt_suite.component import Component, ProblemSize
from opt_suite.demonstrations.base import DemonstrationSource, SourceContext
from opt_suite.learners.base import EpisodeLog, Learner, LearnerContext, LearnerRun
from opt_suite.methods.base import Method


@dataclasses.dataclass(frozen=True)
class NoParams:
    pass


def test_every_group_base_is_a_component_declaring_the_shared_hooks_once():
    for base in (Method, Learner, DemonstrationSource):
        assert issubclass(base, Component)
        for hook in ("requirements", "check_family", "memory_estimate", "__init__"):
            assert hook not in vars(base), f"{base.__name__} redeclares {hook}"
        assert not hasattr(base, "memory_hint") and not hasattr(base, "network_memory")


def test_params_default_to_the_params_class():
    class Bare(Method):
        name = "bare"
        Params = NoParams

        def discover(self, context):
            raise NotImplementedError

    assert Bare().params == NoParams()
    assert Bare(NoParams()).params == NoParams()


def test_an_old_positional_learner_warns_and_runs_through_a_context():
    seen = []
    with pytest.warns(DeprecationWarning, match=r"Old\.run: positional arguments"):

        class Old(Learner):
            name = "old"
            Params = NoParams

            def run(self, family, runs, options, episodes, max_steps):  # no frames: omitted
                seen.append((family, len(runs), options, episodes, max_steps))
                return [EpisodeLog(np.zeros(episodes), np.ones(episodes, np.int64)) for _ in runs]

    run = LearnerRun(None, np.random.SeedSequence(0))  # type: ignore[arg-type]
    logs = Old().run(LearnerContext("fam", [run], "opts", 3, 9))  # type: ignore[arg-type]
    assert seen == [("fam", 1, "opts", 3, 9)] and len(logs) == 1


def test_an_old_positional_learner_with_frames_is_given_them():
    with pytest.warns(DeprecationWarning):

        class Old(Learner):
            name = "old_frames"
            Params = NoParams
            frame_budgets = True

            def run(self, family, runs, options, episodes, max_steps, frames=None):
                return [frames]

    assert Old().run(LearnerContext(None, [], None, 1, 1, frames=77)) == [77]  # type: ignore[arg-type]


def test_an_old_source_is_given_checkpoint_dir_only_when_it_uses_checkpoints():
    seen = []
    with pytest.warns(DeprecationWarning, match=r"Old\.collect"):

        class Old(DemonstrationSource):
            name = "old_source"
            Params = NoParams
            uses_checkpoints = True

            def collect(self, family, train_tasks, per_task, max_steps, seed, **kw):
                seen.append((family, per_task, max_steps, kw))
                return []

    context = SourceContext("fam", [], 2, 50, np.random.SeedSequence(0), "/x")  # type: ignore[arg-type]
    assert Old().collect(context) == []
    assert seen == [("fam", 2, 50, {"checkpoint_dir": "/x"})]


def test_old_memory_hooks_answer_as_memory_estimate():
    with pytest.warns(DeprecationWarning, match="memory_hint is deprecated"):

        class OldMethod(Method):
            name = "old_method"
            Params = NoParams

            @classmethod
            def memory_hint(cls, params, num_states, num_actions):
                return num_states * num_actions, "table"

            def discover(self, context):
                raise NotImplementedError

    assert OldMethod.memory_estimate(NoParams(), ProblemSize(4, (), 10)) == (40, "table")
    assert OldMethod.memory_estimate(NoParams(), ProblemSize(4, (84, 84))) is None  # not tabular

    with pytest.warns(DeprecationWarning, match="network_memory is deprecated"):

        class OldLearner(Learner):
            name = "old_learner"
            Params = NoParams

            @classmethod
            def network_memory(cls, params, observation_shape, num_actions):
                return int(np.prod(observation_shape)) * num_actions, "net"

            def run(self, context):
                return []

    assert OldLearner.memory_estimate(NoParams(), ProblemSize(2, (3, 5))) == (30, "net")


def test_a_plugin_on_the_context_signatures_is_not_warned_about(recwarn):
    class New(Learner):
        name = "new"
        Params = NoParams

        def run(self, context):
            return []

    class NewSource(DemonstrationSource):
        name = "new_source"
        Params = NoParams

        def collect(self, context, extra=None):  # a keyword after context is not the old form
            return [extra]

    assert NewSource().collect(None) == [None]  # type: ignore[arg-type]

    assert not [w for w in recwarn if issubclass(w.category, DeprecationWarning)]


def test_no_component_package_imports_the_spec_package_at_import_time():
    """The spec rules import the component bases, so the reverse import is a cycle.

    ``spec/rules`` -> ``demonstrations`` -> ``demonstrations/tabular`` -> ``spec.schema`` once
    worked only by import order; shared bounds live in :mod:`opt_suite.limits` instead.
    """
    import ast
    from pathlib import Path

    import opt_suite

    root = Path(opt_suite.__file__).parent
    packages = ["agents", "demonstrations", "families", "learners", "methods", "options"]
    files = [root / "component.py", root / "limits.py"]
    files += [f for p in packages for f in sorted((root / p).rglob("*.py"))]
    offenders = []
    for path in files:
        for node in ast.parse(path.read_text()).body:  # module level only: lazy imports are fine
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            if any(n == "opt_suite.spec" or n.startswith("opt_suite.spec.") for n in names):
                offenders.append(f"{path.relative_to(root)}:{node.lineno}")
    assert offenders == []


def test_an_old_sources_own_code_keeps_calling_collect_positionally():
    # Issue 39: a source whose own code calls collect(family, tasks, n, steps, seed) failed.
    with pytest.warns(DeprecationWarning, match=r"Old\.collect"):

        class Old(DemonstrationSource):
            name = "old_own_calls"
            Params = NoParams

            def collect(self, family, train_tasks, per_task, max_steps, seed):
                return [(family, per_task, max_steps)]

            def twice(self, family):
                return self.collect(family, [], 1, 5, None) + self.collect(family, [], 2, 6, None)

    assert Old().twice("fam") == [("fam", 1, 5), ("fam", 2, 6)]
    context = SourceContext("fam", [], 3, 7, np.random.SeedSequence(0))  # type: ignore[arg-type]
    assert Old().collect(context) == [("fam", 3, 7)]  # the runner's call, through the context


def test_a_built_in_entry_point_called_the_old_way_warns_and_runs():
    from opt_suite.demonstrations.tabular import OptimalExpert
    from opt_suite.families.tabular.chain import Chain

    family = Chain()
    train, _ = family.make_tasks(family.Variation(), (), count=2, train=1, test=1, seed=0)
    seed = np.random.SeedSequence(0)
    new = OptimalExpert().collect(SourceContext(family, train, 2, 100, seed))
    with pytest.warns(DeprecationWarning, match=r"OptimalExpert\.collect with positional"):
        old = OptimalExpert().collect(family, train, 2, 100, seed)
    with pytest.warns(DeprecationWarning, match="pass one SourceContext"):
        named = OptimalExpert().collect(
            family=family, train_tasks=train, trajectories_per_task=2, max_steps=100, seed=seed
        )
    for a, b, c in zip(new, old, named, strict=True):
        np.testing.assert_array_equal(a.actions, b.actions)
        np.testing.assert_array_equal(a.actions, c.actions)
    assert len(new) == 2


def test_a_built_in_learner_run_called_the_old_way_warns_and_runs():
    from opt_suite.families.tabular.chain import Chain
    from opt_suite.learners.smdp_q import SMDPQLearning
    from opt_suite.options import TabularOptionSet

    family = Chain()
    _, test = family.make_tasks(family.Variation(), (), count=2, train=1, test=1, seed=0)
    runs = [LearnerRun(test[0], np.random.SeedSequence(1))]
    options = TabularOptionSet.empty(family.observation_space.n, family.action_space.n)
    new = SMDPQLearning().run(LearnerContext(family, runs, options, 5, 50))
    with pytest.warns(DeprecationWarning, match=r"SMDPQLearning\.run with positional"):
        old = SMDPQLearning().run(family, runs, options, 5, 50)
    np.testing.assert_array_equal(new[0].returns, old[0].returns)
