"""When a running option stops, and what its execution is worth: the test-time rules, in one place.

Garcia, Nota & Thomas (2020), appendix E: after the k-th primitive step an option o has run, it
terminates in the state s it reached with probability min(1, β_o(s) + bump·k); with the paper's
bump of 0.05 no option runs past 20 steps. The learners, the option env and the pictures all
decide termination with :func:`terminates`, so that they cannot drift apart. When an option ends,
every SMDP Q-learner (the compiled engine, :mod:`opt_suite.learners.smdp_kernel`, and the
env-stepping one, :mod:`opt_suite.learners.env_tabular`) updates it towards :func:`smdp_target`.
Both rules are plain expressions, so the compiled engine compiles these very functions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["smdp_target", "terminates"]


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


def smdp_target(option_return: Any, discount: Any, next_value: Any, done: Any) -> Any:
    """The SMDP Q-learning target of an option that ran k steps (Sutton, Precup & Singh 1999).

    R + γ^k max_o' Q(s', o') where it ended in a non-terminal s', and R alone where s' is
    terminal (no value beyond the goal), with R = r_1 + γ r_2 + ... + γ^(k−1) r_k.

    Args:
      option_return: R, the option's discounted reward (a float, or an array: one per run).
      discount: γ^k.
      next_value: max_o' Q(s', o') (ignored where ``done``).
      done: whether s' is terminal (a bool, or a bool array).

    Returns:
      A float for a bool ``done`` (the engines' scalars), else an array.
    """
    # ``isinstance(done, bool)``, not ``np.ndarray``: numba types this test (and prunes the branch
    # it does not take), so the compiled engine runs this function itself.
    if isinstance(done, bool):
        return option_return if done else option_return + discount * next_value
    return np.where(done, option_return, option_return + discount * next_value)
