"""Ĵ of Garcia, Nota & Thomas (2020), eq. 2: exact, differentiable, time-parallel, in TensorFlow.

Importing this package imports TensorFlow; only training and validation code should import it.

- :func:`trajectory_terms` — per trajectory: log Pr(h) (Theorem 2), Σ_t Pr(T_t = 1 | h_t)
  (Theorem 1, filtering) and Σ_t Pr(T_t = 1 | h) (posterior, forward–backward);
- :func:`jhat` — Ĵ and its parts (likelihood, terminations, KL diversity) over a batch, and
  :func:`jhat_and_gradients` — Ĵ with its gradient with respect to the tables in one pass;
- :func:`brute_force_terms` — numpy enumeration of every option path (the tests' ground truth);
- :func:`score_option_set` — Ĵ and its terms for any option set on any demonstrations under a
  given π, :func:`fit_pi_table` — π fitted as a table with the options frozen (the most Ĵ the
  options allow), :func:`step_posteriors` — Pr(O_t = o | h) and Pr(T_t = 1 | h) step by step
  (``opt-suite diagnose`` uses all three; ``docs/diagnose.md``).

Layout of the tables (B trajectories padded to L states, n options including primitives): ``pi[b, t,
o] = π(s_t, o)``, ``mu[b, t, o] = μ_o(s_t, a_t)``, ``beta[b, t, o] = β_o(s_t)``, ``lengths[b] =
T_b`` actions (T_b + 1 <= L states). Values past a trajectory's end, ``mu`` at its last state and
``beta`` at t = 0 are ignored.

These are functions of tables (``jit_compile=True`` runs the recursion as XLA clusters). The one
compiled path from networks to Ĵ is the training of the method that maximises it
(``opt_suite.methods.offline_options.training``: a whole round of Adam steps is one
``tf.function`` with shape-free signatures, traced once per structure, never per batch shape); its
tests check it against these functions.
"""

from opt_suite._tf import tensorflow as _quiet_tensorflow

_quiet_tensorflow()  # first, so that TensorFlow's C++ start-up lines stay off the terminal

from opt_suite.objective.brute_force import BruteForceTerms, brute_force_terms, enumerate_terms
from opt_suite.objective.jhat import (
    LIKELIHOODS,
    JhatConfig,
    JhatParts,
    jhat,
    jhat_and_gradients,
    option_diversity,
    weighted_total,
)
from opt_suite.objective.posterior import StepPosteriors, step_posteriors
from opt_suite.objective.recursions import (
    DEFAULT_CHUNK,
    TrajectoryTerms,
    forward_terms,
    trajectory_terms,
)
from opt_suite.objective.scoring import (
    DemoTables,
    FittedPi,
    OptionSetScore,
    demo_tables,
    fit_pi_table,
    score_option_set,
)

__all__ = [
    "DEFAULT_CHUNK",
    "LIKELIHOODS",
    "BruteForceTerms",
    "DemoTables",
    "FittedPi",
    "OptionSetScore",
    "StepPosteriors",
    "JhatConfig",
    "JhatParts",
    "TrajectoryTerms",
    "brute_force_terms",
    "demo_tables",
    "fit_pi_table",
    "enumerate_terms",
    "forward_terms",
    "jhat",
    "jhat_and_gradients",
    "option_diversity",
    "score_option_set",
    "step_posteriors",
    "trajectory_terms",
    "weighted_total",
]
