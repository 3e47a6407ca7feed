"""The exact models of the train tasks, which every tabular baseline starts from."""

from __future__ import annotations

from opt_suite.families.base import TabularModel
from opt_suite.methods.base import DiscoveryContext

__all__ = ["train_models"]


def train_models(context: DiscoveryContext, method: str) -> list[TabularModel]:
    """``family.tabular_model`` of every train task, all of one state and action count.

    Raises:
      ValueError: no train tasks, a family without tabular models (e.g. Atari), or train tasks whose
        models differ in S or A (option tables are indexed by one state set).
    """
    if not context.train_tasks:
        raise ValueError(f"{method}: needs at least one train task, got none")
    models = [context.family.tabular_model(task) for task in context.train_tasks]
    if any(model is None for model in models):
        raise ValueError(
            f"{method}: family {context.family.name!r} has no tabular model; this baseline needs "
            "one (tabular families only)"
        )
    shapes = {(model.num_states, model.num_actions) for model in models}
    if len(shapes) != 1:
        raise ValueError(
            f"{method}: train tasks disagree on (states, actions): {sorted(shapes)}; expected one "
            "shared state and action set"
        )
    return models
