"""Primitives: the empty option set, shaped for the family."""

from __future__ import annotations

import numpy as np
import pytest
from baseline_models import ModelFamily, corridor_models, tasks_of

from baselines.primitives import Primitives
from opt_suite.families.base import Task
from opt_suite.methods.base import DiscoveryContext
from opt_suite.testing import MethodContract


class TestPrimitivesContract(MethodContract):
    method_class = Primitives
    params = Primitives.Params()


def _context(tasks):
    return DiscoveryContext(ModelFamily(), tasks, (), 0, np.random.SeedSequence(0))


def test_no_options_for_the_family_shape():
    found = Primitives(Primitives.Params()).discover(_context(tasks_of(*corridor_models(5))))
    assert len(found.options) == 0
    assert found.options.mu.shape == (0, 5, 4) and found.options.beta.shape == (0, 5)


def test_family_without_a_model_is_a_clear_error():
    class NoModel(ModelFamily):
        def tabular_model(self, task):
            return None

    context = DiscoveryContext(
        NoModel(), [Task("x/train/0", "train", 0, None)], (), 0, np.random.SeedSequence(0)
    )
    with pytest.raises(ValueError, match="has no tabular model"):
        Primitives(Primitives.Params()).discover(context)


def test_no_train_tasks_is_a_clear_error():
    with pytest.raises(ValueError, match="at least one train task"):
        Primitives(Primitives.Params()).discover(_context([]))
