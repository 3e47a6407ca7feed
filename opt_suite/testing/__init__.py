"""Contract tests shipped with the package: every family, method and learner inherits them.

Built-ins and plugins use them the same way (``from opt_suite.testing import ...``); they need
pytest (the ``test`` extra) and nothing from this repository's ``tests/``:

- :class:`EnvContract`: any family (gymnasium's ``check_env``, seeded determinism, an episode end,
  spaces, tasks, spec round trip);
- :class:`TabularFamilyContract`: a family with an exact model (env vs model chi-square test,
  read-only well-formed model, the optimal policy reaches the goal);
- :class:`MethodContract`: an option-discovery method (option sets, determinism, budgets), with a
  ``setting()`` hook;
- :class:`LearnerContract`: a test-time learner (well-formed logs, determinism, results independent
  of batching), with a ``setting()`` hook;
- :class:`DemonstrationSourceContract`: a demonstration source (trajectories per task, shapes,
  determinism, each demonstration reaches a terminal state or the source says why), with a
  ``setting()`` hook.

:mod:`opt_suite.testing.image_family` adds a tiny image family (``PixelGrid``: a few-pixel room, no
model) with its own demonstration source, and settings for the method and learner contracts on it
(``image_method_setting``, ``image_learner_setting``), to test image methods and learners cheaply.
"""

from opt_suite.testing.family import (
    EnvContract,
    FamilyContract,
    TabularFamilyContract,
    greedy_policy,
    spec_round_trip,
)
from opt_suite.testing.image_family import (
    PixelGrid,
    PixelGridExpert,
    image_learner_setting,
    image_method_setting,
)
from opt_suite.testing.learner import LearnerContract, LearnerSetting, tiny_learner_setting
from opt_suite.testing.method import MethodContract, Setting, context_for, tiny_setting
from opt_suite.testing.source import (
    DemonstrationSourceContract,
    SourceSetting,
    tiny_source_setting,
)

__all__ = [
    "EnvContract",
    "TabularFamilyContract",
    "FamilyContract",
    "MethodContract",
    "LearnerContract",
    "DemonstrationSourceContract",
    "SourceSetting",
    "tiny_source_setting",
    "PixelGrid",
    "PixelGridExpert",
    "image_method_setting",
    "image_learner_setting",
    "Setting",
    "LearnerSetting",
    "tiny_setting",
    "tiny_learner_setting",
    "context_for",
    "greedy_policy",
    "spec_round_trip",
]
