"""When a running option stops: the test-time termination rule, in one place.

Garcia, Nota & Thomas (2020), appendix E: after the k-th primitive step an option o has run, it
terminates in the state s it reached with probability min(1, β_o(s) + bump·k); with the paper's
bump of 0.05 no option runs past 20 steps. The learners, the option env and the pictures all
decide termination with :func:`terminates`, so that they cannot drift apart.
"""

from __future__ import annotations

from typing import Any

__all__ = ["terminates"]


def terminates(draw: Any, beta: Any, bump: float, steps_run: Any) -> Any:
    """Whether an option that has run ``steps_run`` steps ends in its current state.

    Args:
      draw: a uniform draw in [0, 1) (a float, or an array of them: one per run).
      beta: β_o(s) of the state reached (broadcast against ``draw``).
      bump: the probability added per step run (``termination_bump``; 0 disables it).
      steps_run: k, the primitive steps the option has run, k ≥ 1.

    Returns:
      ``draw < min(1, beta + bump * steps_run)``: a bool, or a bool array. The ``min(1, ·)`` is
      not computed: a draw in [0, 1) is below 1 anyway, and skipping it keeps the comparison
      (and so every learner's numbers) exactly what it was written as.
    """
    return draw < beta + bump * steps_run
