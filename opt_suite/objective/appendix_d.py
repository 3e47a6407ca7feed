"""Appendix D of the paper: the exact objective's terms against Monte Carlo on small chain MDPs.

For every task of a family (``specs/chain-validation.yaml``: 10 chains of 7 states) we draw random
options and a policy over options, sample one trajectory h from them in the chain, and compare:

- ``prob`` — Pr(h | π, O) = d_0(s_0) Π P(s_t, a_t, s_{t+1}) · exp(log_prob) (Theorem 2), with
  ``mc_prob``, the fraction of N sampled paths that reproduce h;
- ``posterior_terminations`` — Σ_t Pr(T_t = 1 | H = h), with ``mc_terminations``, the mean number of
  terminations over the sampled paths that reproduce h: that mean estimates exactly this quantity;
- ``filtering_terminations`` — Σ_t Pr(T_t = 1 | H_t = h_t), Theorem 1 and the term Ĵ uses. It
  conditions each T_t only on the history up to s_t, not on the actions taken afterwards, so it is
  *not* what the Monte Carlo column measures: the gaps between the paper's two E[T] columns
  (e.g. 1.965 vs 2.178) are this difference, not sampling error.

Agreement is judged by z-scores (difference / MC standard error).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from opt_suite.families.base import Task, exact_model
from opt_suite.objective.monte_carlo import (
    monte_carlo,
    random_option_tables,
    sample_episodes,
    transition_probability,
)

__all__ = ["ValidationRow", "validation_rows", "NUM_OPTIONS"]

NUM_OPTIONS = 4  # "We randomly initialized four options and a policy over options"


@dataclasses.dataclass(frozen=True)
class ValidationRow:
    """One row of the Appendix D table (one chain, one sampled trajectory)."""

    task: str
    length: int
    trials: int
    matches: int
    mc_prob: float
    mc_prob_se: float
    prob: float
    mc_terminations: float
    mc_terminations_se: float
    posterior_terminations: float
    filtering_terminations: float

    @property
    def z_prob(self) -> float:
        """(mc_prob − prob) / SE, with the SE of the exact probability (valid even at 0 matches)."""
        se = math.sqrt(self.prob * (1.0 - self.prob) / self.trials)
        return (self.mc_prob - self.prob) / se if se > 0 else 0.0

    @property
    def z_terminations(self) -> float:
        """(mc_terminations − posterior_terminations) / SE; NaN with fewer than 2 matches."""
        if not self.mc_terminations_se > 0:
            return float("nan")
        return (self.mc_terminations - self.posterior_terminations) / self.mc_terminations_se

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-able fields (NaN as None) plus the z-scores."""
        out = dataclasses.asdict(self)
        out.update(z_prob=self.z_prob, z_terminations=self.z_terminations)
        return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in out.items()}


def validation_rows(
    family: Any,
    tasks: Sequence[Task],
    max_steps: int,
    seed: int = 0,
    trials: int = 10_000,
    candidates: int = 1000,
) -> list[ValidationRow]:
    """The Appendix D table for every task of ``family`` (the chains of ``chain-validation``).

    Which trajectory to check: the paper samples one per chain. An episode of random options in a
    7-state chain is usually long and improbable (Pr(h) ~ 1e-6), so no Monte Carlo path reproduces
    it and nothing is checked. We sample ``candidates`` episodes and check the likeliest; any fixed
    h is a valid test of the formulas, and this one is reproduced often enough to be informative.

    Args:
      family: a tabular family (``opt-suite validate-objective`` builds it from a spec).
      tasks: the tasks to check (the spec's train and test tasks together).
      max_steps: cap on a sampled episode's length.
      seed: seeds the options, the trajectories and the Monte Carlo (one stream per task).
      trials: Monte Carlo paths per trajectory (the paper: 10,000).
      candidates: episodes sampled per chain, of which the likeliest is checked (1: the paper's
        "one sampled trajectory").

    Raises:
      ValueError: the family has no tabular model, or a count is not positive.
    """
    if trials < 1 or candidates < 1:
        raise ValueError(f"trials and candidates must be >= 1, got {trials} and {candidates}")
    rows = []
    for task, stream in zip(tasks, np.random.SeedSequence(seed).spawn(len(tasks)), strict=True):
        model = exact_model(family, task)
        if model is None:
            raise ValueError(f"validate-objective: family {family.name!r} has no exact model")
        option_rng, episode_rng, mc_rng = (np.random.default_rng(s) for s in stream.spawn(3))
        options = random_option_tables(model.num_states, model.num_actions, NUM_OPTIONS, option_rng)
        episodes = sample_episodes(model, options, max_steps, candidates, episode_rng)
        probs, terms = _exact(model, options, episodes)
        best = int(np.argmax(probs))
        states, actions = episodes[best]
        estimate = monte_carlo(model, options, states, actions, trials, mc_rng)
        rows.append(
            ValidationRow(
                task=task.task_id,
                length=len(actions),
                trials=trials,
                matches=estimate.matches,
                mc_prob=estimate.prob,
                mc_prob_se=estimate.prob_se,
                prob=float(probs[best]),
                mc_terminations=estimate.terminations,
                mc_terminations_se=estimate.terminations_se,
                posterior_terminations=float(terms.posterior_terminations[best]),
                filtering_terminations=float(terms.expected_terminations[best]),
            )
        )
    return rows


def _exact(model, options, episodes):
    """Pr(h) (d_0 and P included) and the trajectory terms of every episode (float64)."""
    from opt_suite.objective.recursions import trajectory_terms  # TensorFlow, only when run

    length = max(len(actions) for _, actions in episodes) + 1
    tables = np.zeros((3, len(episodes), length, NUM_OPTIONS))
    for b, (states, actions) in enumerate(episodes):
        for i, table in enumerate(options.tables(states, actions)):
            tables[i, b, : len(states)] = table
    lengths = np.array([len(actions) for _, actions in episodes])
    terms = trajectory_terms(*tables, lengths)
    outside = np.array(
        [
            float(states[0] == model.start) * transition_probability(model, states, actions)
            for states, actions in episodes
        ]
    )  # d_0 is a point mass at the start state
    return outside * np.exp(terms.log_prob.numpy()), terms
