"""Contract tests shipped with the package: every family, method and learner inherits them.

Built-ins and plugins use them the same way (``from opt_suite.testing import ...``), nothing from
this repository's ``tests/``. Every contract is also callable without pytest — ``check_family``,
``check_method``, ``check_learner``, ``check_source`` return a list of problems (Gymnasium's
``check_env`` is the model; ``opt-suite validate --deep`` runs them) — and the pytest classes,
which need pytest (the ``test`` extra), are thin wrappers running one check per test:

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

from typing import Any

from opt_suite.testing.checks import Checks
from opt_suite.testing.family import (
    EnvChecks,
    EnvContract,
    FamilyContract,
    TabularFamilyChecks,
    TabularFamilyContract,
    check_family,
    greedy_policy,
    spec_round_trip,
)
from opt_suite.testing.image_family import (
    PixelGrid,
    PixelGridExpert,
    image_learner_setting,
    image_method_setting,
)
from opt_suite.testing.learner_checks import (
    LearnerChecks,
    LearnerSetting,
    check_learner,
    tiny_learner_setting,
)
from opt_suite.testing.method_checks import (
    MethodChecks,
    Setting,
    check_method,
    context_for,
    tiny_setting,
)
from opt_suite.testing.source_checks import (
    SourceChecks,
    SourceSetting,
    check_source,
    tiny_source_setting,
)

# The pytest classes import pytest: loaded when asked for, so the checks run without it.
_PYTEST_CLASSES = {
    "MethodContract": "opt_suite.testing.method",
    "LearnerContract": "opt_suite.testing.learner",
    "DemonstrationSourceContract": "opt_suite.testing.source",
}


def __getattr__(name: str) -> Any:
    if name in _PYTEST_CLASSES:
        import importlib

        return getattr(importlib.import_module(_PYTEST_CLASSES[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    # The lazily loaded pytest classes are not in globals() until first asked for: list them too,
    # so dir() and tab completion show every contract the module offers.
    return sorted(set(globals()) | set(_PYTEST_CLASSES))


__all__ = [
    "check_family",
    "check_method",
    "check_learner",
    "check_source",
    "Checks",
    "EnvChecks",
    "TabularFamilyChecks",
    "MethodChecks",
    "LearnerChecks",
    "SourceChecks",
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
