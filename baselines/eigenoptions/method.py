"""Eigenoptions (Machado, Bellemare & Bowling 2017) as a baseline method.

Read top to bottom, as the paper's pipeline:

1. the state graph W of the train tasks — known (the family's model) or observed (the
   demonstrations' transitions) — and its normalised Laplacian L = D^-1/2 (D - W) D^-1/2;
2. L's eigenvectors in order of increasing eigenvalue (optionally skipping the first, the
   "constant" one: for the normalised Laplacian it is D^1/2 1, eigenvalue 0), each with both signs
   if asked (the authors' later code uses +e and -e);
3. for each, the eigenpurpose r = e[s'] - e[s] and its eigenoption, solved on the family's model
   with a terminate action (gamma = 0.9, the authors' value); the option terminates where no action
   has positive value.

The first ``count`` options in that order form the option set.

Faithfulness: the authors' Q-learning agent (``mcmachado/options``, ``QLearning.py``) re-chooses
after every primitive step of an option and updates Q as if the option were one step long. That is
the *learner*, not the option discovery, and it is not reproduced: our options go to the suite's
shared test-time learner, which runs an option until its beta fires (the paper's intent).
The ``TabularOptionSet`` has no initiation sets; the paper's initiation set (states where the option
does not terminate at once) is approximated by the option acting greedily for one step when started
in its termination set.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, Literal

import numpy as np

from baselines.eigenoptions.graph import (
    laplacian_eigenvectors,
    model_adjacency,
    normalized_laplacian,
    transition_adjacency,
)
from opt_suite.component import ProblemSize
from opt_suite.families.capabilities import DISCRETE_ACTIONS, EXACT_MODEL, INDEX_OBSERVATIONS
from opt_suite.methods.base import Discovery, DiscoveryContext, Method
from opt_suite.methods.budget import DiscoveryBudget
from opt_suite.options import TabularOptionSet
from opt_suite.params import param

__all__ = ["Eigenoptions", "EigenoptionsParams"]


@dataclasses.dataclass(frozen=True)
class EigenoptionsParams:
    """How many eigenoptions, from which graph, solved how."""

    count: int = param(
        8, doc="k, the number of options, taken in order of increasing eigenvalue", ge=1, le=1024
    )
    adjacency: Literal["known", "observed"] = param(
        "known",
        doc="state graph from the family's exact model ('known') or from the transitions of the "
        "demonstrations ('observed')",
    )
    both_signs: bool = param(
        True, doc="an option for +e and for -e of each eigenvector (authors' later code: yes)"
    )
    skip_constant: bool = param(
        True,
        doc="skip the first eigenvector (eigenvalue 0, D^1/2 1: its eigenpurpose only pushes "
        "towards high-degree states)",
    )
    gamma: float = param(0.9, doc="discount of each eigenpurpose MDP (authors: 0.9)", gt=0, lt=1)
    termination_tol: float = param(
        1e-9,
        doc="terminate where max_a q(s, a) <= this (no positive value, up to value iteration's "
        "error); the authors' code terminates within 0.001 of terminate's value 0, which "
        "changes decisions on 40x40 (see purpose.py)",
        ge=0,
    )


class Eigenoptions(Method):
    """Options that climb the eigenvectors of the state graph's normalised Laplacian."""

    name: ClassVar[str] = "eigenoptions"
    description: ClassVar[str] = (
        "eigenoptions (Machado et al. 2017): optimal policies for Laplacian eigenpurposes"
    )
    Params: ClassVar[type] = EigenoptionsParams
    requires: ClassVar[frozenset[str]] = frozenset(
        {EXACT_MODEL, DISCRETE_ACTIONS, INDEX_OBSERVATIONS}
    )
    #: Shown by ``opt-suite describe``: why there is no model-free variant here.
    model_needed_because: ClassVar[str] = (
        "each eigenoption is the optimal policy of an eigenpurpose, computed by value iteration "
        "on the task's model (the Laplacian's states are the model's)"
    )

    @classmethod
    def discovery_budget(cls, params: Any) -> DiscoveryBudget:
        """The demonstrations' transitions for ``adjacency: observed``; none for ``known``."""
        return DiscoveryBudget(params.adjacency == "observed", 0)

    @classmethod
    def option_count(cls, params: Any) -> int:
        """``count`` options."""
        return int(params.count)

    @classmethod
    def memory_estimate(cls, params: Any, size: ProblemSize) -> tuple[int, str] | None:
        """The dense Laplacian and its eigenvectors: states x states float64, twice (tabular)."""
        if size.num_states is None:
            return None
        n = size.num_states
        return 2 * 8 * n * n, "the dense Laplacian: states x states, twice"

    def discover(self, context: DiscoveryContext) -> Discovery:
        """Eigenoptions of the train tasks' state graph (deterministic: uses no random draw)."""
        # Dynamic programming needs scipy, which `opt-suite list` should not pay for.
        from baselines.eigenoptions.purpose import eigenoption, layout_dynamics

        p = self.params
        models = context.tabular_models(self.name)
        num_states = models[0].num_states
        if p.adjacency == "known":
            adjacency = model_adjacency(models)
        else:
            adjacency = transition_adjacency(
                ((t.observations[:-1], t.observations[1:]) for t in context.demonstrations),
                num_states,
            )
        signs = (1.0, -1.0) if p.both_signs else (1.0,)
        skip = 1 if p.skip_constant else 0
        needed = skip + -(-p.count // len(signs))  # eigenvectors that give `count` options
        if needed > num_states:
            raise ValueError(
                f"eigenoptions: count={p.count} options asked for, but the {num_states}-state "
                f"graph gives only {(num_states - skip) * len(signs)}"
            )
        laplacian = normalized_laplacian(adjacency)
        eigenvalues, eigenvectors = laplacian_eigenvectors(laplacian, needed)
        chosen = [(i, sign) for i in range(skip, needed) for sign in signs][: p.count]
        dynamics = layout_dynamics(models)
        options = [
            eigenoption(dynamics, sign * eigenvectors[:, i], p.gamma, p.termination_tol)
            for i, sign in chosen
        ]
        names = tuple(f"eigen-{i}{'+' if sign > 0 else '-'}" for i, sign in chosen)
        option_set = TabularOptionSet(
            np.stack([o.mu for o in options]), np.stack([o.beta for o in options]), names
        )
        return Discovery(
            option_set,
            curves={"eigenvalue": np.array([eigenvalues[i] for i, _ in chosen])},
            info={
                "graph_edges": int(adjacency.sum() // 2),
                "isolated_states": int((adjacency.sum(axis=1) == 0).sum()),
                "terminating_fraction": [float(o.beta.mean()) for o in options],
            },
        )
