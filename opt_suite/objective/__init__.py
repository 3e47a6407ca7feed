"""Ĵ of Garcia, Nota & Thomas (2020), eq. 2: exact, differentiable, time-parallel, in TensorFlow.

Importing this package imports TensorFlow; only training and validation code should import it.

- :func:`trajectory_terms` — per trajectory: log Pr(h) (Theorem 2), Σ_t Pr(T_t = 1 | h_t)
  (Theorem 1, filtering) and Σ_t Pr(T_t = 1 | h) (posterior, forward–backward);
- :func:`jhat` — Ĵ and its parts (likelihood, terminations, KL diversity) over a batch, and
  :func:`jhat_and_gradients` — Ĵ with its gradient with respect to the tables in one pass;
- :class:`CompiledObjective`, :func:`make_jhat_step`, :func:`pad_batch` — the single compiled
  boundary (traced once per dtype, never per batch shape) and batching of demonstrations;
- :func:`brute_force_terms` — numpy enumeration of every option path (the tests' ground truth).

Layout of the tables (B trajectories padded to L states, n options including primitives): ``pi[b, t,
o] = π(s_t, o)``, ``mu[b, t, o] = μ_o(s_t, a_t)``, ``beta[b, t, o] = β_o(s_t)``, ``lengths[b] =
T_b`` actions (T_b + 1 <= L states). Values past a trajectory's end, ``mu`` at its last state and
``beta`` at t = 0 are ignored.
"""

from opt_suite._tf import tensorflow as _quiet_tensorflow

_quiet_tensorflow()  # first, so that TensorFlow's C++ start-up lines stay off the terminal

from opt_suite.objective.brute_force import BruteForceTerms, brute_force_terms, enumerate_terms
from opt_suite.objective.compiled import (
    BUCKET,
    CompiledObjective,
    PaddedBatch,
    Tables,
    make_jhat_step,
    pad_batch,
    padded_length,
)
from opt_suite.objective.jhat import (
    LIKELIHOODS,
    JhatConfig,
    JhatParts,
    jhat,
    jhat_and_gradients,
    option_diversity,
)
from opt_suite.objective.recursions import (
    DEFAULT_CHUNK,
    TrajectoryTerms,
    forward_terms,
    trajectory_terms,
)

__all__ = [
    "BUCKET",
    "DEFAULT_CHUNK",
    "LIKELIHOODS",
    "BruteForceTerms",
    "CompiledObjective",
    "JhatConfig",
    "JhatParts",
    "PaddedBatch",
    "Tables",
    "TrajectoryTerms",
    "brute_force_terms",
    "enumerate_terms",
    "forward_terms",
    "jhat",
    "jhat_and_gradients",
    "make_jhat_step",
    "option_diversity",
    "pad_batch",
    "padded_length",
    "trajectory_terms",
]
