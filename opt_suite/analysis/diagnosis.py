"""Why an option set scores what it does on Ĵ: its terms under two policies, and who explains what.

This module computes (it fits π, a few seconds per option set); :mod:`opt_suite.report.diagnose`
lays its :class:`Diagnosis` out as Markdown and JSON.

For one option set and its seed's demonstrations, :func:`diagnose_option_set` computes

- Ĵ and its terms (λ2·likelihood, terminations per step, λ1·KL) under the method's *own* π (the
  policy over options it trained, when it has one — Algorithm 1 does) and under π *fitted as a
  table* with the options frozen (:func:`opt_suite.objective.fit_pi_table`): the first is what the
  method's optimiser reached, the second what its options allow;
- per demonstration, under the fitted π, which option explains which segment (the posterior
  Pr(O_t = o | h) from the forward–backward recursions) and where terminations fall
  (Pr(T_t = 1 | h) > 1/2).

``opt-suite diagnose`` writes them into a run directory (:mod:`opt_suite.report.diagnose`).
TensorFlow is imported lazily, by :func:`diagnose_option_set` alone.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = [
    "Segment",
    "DemoExplanation",
    "Diagnosis",
    "diagnose_option_set",
    "explain",
]

#: A step's termination is shown where its posterior probability exceeds this.
TERMINATION_SHOWN = 0.5


@dataclasses.dataclass(frozen=True)
class Segment:
    """Steps [start, end) of a demonstration that one option (or the primitives) explains.

    Attributes:
      start, end: the steps (actions a_start .. a_{end−1}).
      option: the option's name, or ``"primitives"`` for a run of primitive actions.
      probability: the mean posterior Pr(O_t = option | h) over the segment (for primitives: of
        the primitive that took each step).
    """

    start: int
    end: int
    option: str
    probability: float


@dataclasses.dataclass(frozen=True)
class DemoExplanation:
    """One demonstration under the fitted π.

    Attributes:
      index: its position among the seed's demonstrations.
      task_id: the train task it demonstrates.
      steps: |h|.
      segments: consecutive :class:`Segment` covering steps 0..|h|−1.
      terminations: the steps t (1..|h|) where Pr(T_t = 1 | h) > 1/2.
      expected_terminations: Σ_t Pr(T_t = 1 | h).
      option_share: the fraction of steps whose posterior mass is on the set's options (not on
        primitives), Σ_t Pr(O_t ∉ primitives | h) / |h|.
    """

    index: int
    task_id: str
    steps: int
    segments: tuple[Segment, ...]
    terminations: tuple[int, ...]
    expected_terminations: float
    option_share: float


@dataclasses.dataclass(frozen=True)
class Diagnosis:
    """Ĵ of one option set on its demonstrations, under the method's π and under a fitted table.

    Attributes:
      method, seed: which discovery cell.
      options: the option names (m of them).
      own: the score under the method's own π, None when it has none.
      fitted: the score under π fitted as a table (options frozen).
      fit_steps, fit_converged: the fit's Adam steps and whether Ĵ stopped improving.
      demos: per demonstration, under the fitted π.
    """

    method: str
    seed: int
    options: tuple[str, ...]
    own: Any
    fitted: Any
    fit_steps: int
    fit_converged: bool
    demos: tuple[DemoExplanation, ...]

    @property
    def option_share(self) -> float:
        """The fraction of all demonstrated steps explained by the set's options (fitted π)."""
        steps = sum(d.steps for d in self.demos)
        return sum(d.option_share * d.steps for d in self.demos) / max(steps, 1)


def explain(
    option_posterior: np.ndarray,
    termination_posterior: np.ndarray,
    lengths: np.ndarray,
    num_actions: int,
    names: Sequence[str],
    task_ids: Sequence[str],
) -> tuple[DemoExplanation, ...]:
    """Segments and terminations of each demonstration from the per-step posteriors.

    A segment is a maximal run of steps with the same most probable executing option and no
    termination shown inside it; consecutive primitive steps form one ``primitives`` segment.

    Args:
      option_posterior: [B, L, A + m] Pr(O_t = o | h) (primitives first).
      termination_posterior: [B, L] Pr(T_t = 1 | h).
      lengths: [B] |h|.
      num_actions: A.
      names: the m option names.
      task_ids: [B] the demonstrations' task ids.
    """
    labels = ["primitives"] * num_actions + list(names)
    out = []
    for b, length in enumerate(np.asarray(lengths)):
        length = int(length)
        posterior = option_posterior[b, :length]
        best = posterior.argmax(axis=-1) if length else np.zeros(0, int)
        ends = termination_posterior[b, : length + 1] > TERMINATION_SHOWN
        segments: list[Segment] = []
        start = 0
        for t in range(1, length + 1):
            boundary = t == length or labels[best[t]] != labels[best[t - 1]]
            if not boundary and best[t] >= num_actions and ends[t]:
                boundary = True  # the same option, terminated and picked again
            if boundary:
                mass = posterior[np.arange(start, t), best[start:t]].mean()
                segments.append(Segment(start, t, labels[best[start]], round(float(mass), 4)))
                start = t
        option_mass = posterior[:, num_actions:].sum() if length else 0.0
        out.append(
            DemoExplanation(
                index=b,
                task_id=str(task_ids[b]),
                steps=length,
                segments=tuple(segments),
                terminations=tuple(int(t) for t in np.flatnonzero(ends)),
                expected_terminations=round(float(termination_posterior[b].sum()), 4),
                option_share=round(float(option_mass) / max(length, 1), 4),
            )
        )
    return tuple(out)


def diagnose_option_set(
    method: str,
    seed: int,
    options: Any,
    demonstrations: Sequence[Any],
    config: Any,
    own_pi: np.ndarray | None = None,
) -> Diagnosis:
    """Ĵ's terms under ``own_pi`` ([S, A + m] or None) and under a fitted π table, and segments.

    Args:
      method: the method entry's name (a label).
      seed: the seed index (a label).
      options: a tabular option set (state-index observations).
      demonstrations: that seed's demonstrations.
      config: :class:`opt_suite.objective.JhatConfig`, one objective for every set compared.
      own_pi: the method's own π over every state, or None.
    """
    from opt_suite.objective.scoring import demo_tables, fit_pi_tables, posteriors, score_tables

    tables = demo_tables(options, demonstrations)
    own = None
    if own_pi is not None:
        own_pi = np.asarray(own_pi, np.float64)
        if own_pi.shape[1:] != (tables.num_options,) or own_pi.shape[0] <= tables.states.max():
            raise ValueError(
                f"{method}, seed {seed}: its stored pi has shape {own_pi.shape}; expected "
                f"[S, {tables.num_options}] for {len(options)} options and {options.num_actions} "
                "primitives"
            )
        own = score_tables(tables, own_pi[tables.states], config)
    fitted = fit_pi_tables(tables, config)
    post = posteriors(tables, fitted.pi)
    demos = explain(
        post.option,
        post.termination,
        tables.lengths,
        tables.num_actions,
        options.names,
        [getattr(h, "task_id", "") for h in demonstrations],
    )
    return Diagnosis(
        method, seed, tuple(options.names), own, fitted.score, fitted.steps, fitted.converged, demos
    )
