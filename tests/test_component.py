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
