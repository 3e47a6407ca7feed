"""Ĵ of any option set on any demonstrations: score your own options, fit π as a table.

Algorithm 1 scores options with Ĵ (eq. 2) under a policy over options π that it trains *together*
with them; how much Ĵ an option set allows then depends on that π as much as on the options. These
functions separate the two: :func:`score_option_set` evaluates Ĵ and its terms for a given π, and
:func:`fit_pi_table` maximises Ĵ over π alone — one free softmax row per demonstrated state, the
options frozen — which is the most Ĵ the option set allows on these demonstrations (up to the
optimiser: Ĵ is not concave in π; the better of two fixed starts, never below the primitives).

Example (any tabular option set, e.g. hand-made hallway options)::

    from opt_suite.objective import JhatConfig, fit_pi_table, score_option_set

    config = JhatConfig(lambda2=100.0, likelihood="log_prob_per_step")
    fitted = fit_pi_table(options, demonstrations, config)
    fitted.score.total, fitted.score.likelihood_term, fitted.score.termination_term
    score_option_set(options, demonstrations, pi_over_all_states, config)   # your own π

The option set acts over the A primitives plus its m options, primitives first (the layout of
Algorithm 1 and of every learner): π has A + m columns. The KL term g(h, O_O) is computed over the
set's m options (the primitives never count). Demonstrations are anything with integer state
indices ``observations`` [T+1] and ``actions`` [T] (e.g. ``opt_suite.methods.base.Trajectory``).

Length (over the 400 lines the tree aims for): scoring an option set and fitting π as a table
share DemoTables and the compiled ascent; the fit is what makes a score comparable, so they stay
together.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
import tensorflow as tf

from opt_suite.objective.adam import AdamState, adam_ascent
from opt_suite.objective.jhat import JhatConfig, JhatParts, jhat, jhat_body, weighted_total
from opt_suite.objective.posterior import StepPosteriors, step_posteriors

__all__ = [
    "DemoTables",
    "OptionSetScore",
    "FittedPi",
    "demo_tables",
    "score_option_set",
    "score_tables",
    "fit_pi_table",
    "fit_pi_tables",
    "posteriors",
]


@dataclasses.dataclass(frozen=True, eq=False)
class DemoTables:
    """An option set's numbers along B demonstrations, padded to L = max T + 1 states.

    Attributes:
      states: int [U], the distinct demonstrated states (sorted).
      positions: int [B, L], ``states[positions[b, t]]`` = s_t of demonstration b (padding: 0).
      actions: int [B, L], a_t (padding: 0).
      lengths: int [B], T_b.
      mu: float64 [B, L, n], μ_o(s_t, a_t) for the n = A + m options (primitives first).
      beta: float64 [B, L, n], β_o(s_t) (primitives: 1).
      option_probs: float64 [B, L, m, A], the m options' action distributions (the KL term's input).
      num_actions: A.
    """

    states: np.ndarray
    positions: np.ndarray
    actions: np.ndarray
    lengths: np.ndarray
    mu: np.ndarray
    beta: np.ndarray
    option_probs: np.ndarray
    num_actions: int

    @property
    def num_options(self) -> int:
        """The number of options n = A + m, primitives included."""
        return int(self.mu.shape[-1])

    def gather(self, table: np.ndarray) -> np.ndarray:
        """A per-demonstrated-state table [U, ...] laid out along the demonstrations [B, L, ...]."""
        return np.asarray(table)[self.positions]


@dataclasses.dataclass(frozen=True)
class OptionSetScore:
    """Ĵ and its terms, as Ĵ weighs them: ``total = likelihood_term - termination_term + kl_term``.

    Attributes:
      total: Ĵ.
      likelihood_term: λ2 · mean log Pr(h)/|h| (or λ2 · mean Pr(h) with ``likelihood="prob"``).
      termination_term: mean over demonstrations of Σ_t Pr(T_t = 1 | h_t) / |h| (Theorem 1).
      kl_term: λ1 · mean g(h, O_O).
      kl: mean g(h, O_O), unweighted.
      log_prob_per_step: [B] log Pr(h) / |h| of each demonstration.
      terminations_per_step: [B] Σ_t Pr(T_t = 1 | h_t) / |h|.
    """

    total: float
    likelihood_term: float
    termination_term: float
    kl_term: float
    kl: float
    log_prob_per_step: np.ndarray
    terminations_per_step: np.ndarray

    @classmethod
    def from_parts(cls, parts: JhatParts, lengths: np.ndarray, config: JhatConfig):
        """From the unweighted parts of :func:`opt_suite.objective.jhat`, weighted by ``config``."""
        steps = np.maximum(np.asarray(lengths), 1).astype(np.float64)
        prob, terminations, kl = (float(x) for x in parts[1:4])
        return cls(
            total=float(weighted_total(prob, terminations, kl, config.lambda1, config.lambda2)),
            likelihood_term=config.lambda2 * prob,
            termination_term=terminations,
            kl_term=config.lambda1 * kl,
            kl=kl,
            log_prob_per_step=np.asarray(parts.log_prob, np.float64) / steps,
            terminations_per_step=np.asarray(parts.expected_terminations, np.float64) / steps,
        )


@dataclasses.dataclass(frozen=True, eq=False)
class FittedPi:
    """π fitted as a table on the demonstrated states, the options frozen.

    Attributes:
      states: int [U], the demonstrated states (``DemoTables.states``).
      pi: float64 [U, A + m], π(s, ·) on them.
      score: Ĵ and its terms under this π.
      steps: Adam steps taken.
      converged: whether Ĵ stopped improving before ``max_steps``.
    """

    states: np.ndarray
    pi: np.ndarray
    score: OptionSetScore
    steps: int
    converged: bool


def _as_states(observations: Any, where: str) -> np.ndarray:
    obs = np.asarray(observations)
    if obs.ndim != 1 or not np.issubdtype(obs.dtype, np.integer):
        raise ValueError(
            f"{where}: expected integer state indices [T+1] (a tabular family), got {obs.dtype} "
            f"array of shape {obs.shape}"
        )
    return obs.astype(np.int64)


def demo_tables(options: Any, demonstrations: Sequence[Any]) -> DemoTables:
    """The option set's (μ, β) along the demonstrations, primitives first.

    Args:
      options: an :class:`opt_suite.options.OptionSet` over state-index observations (m >= 0).
      demonstrations: at least one trajectory with ``observations`` [T+1] and ``actions`` [T].

    Raises:
      ValueError: no demonstrations, non-integer observations, or actions out of range.
    """
    if not demonstrations:
        raise ValueError("demonstrations: expected at least one trajectory, got none")
    num_actions = int(options.num_actions)
    observations = [
        _as_states(h.observations, f"demonstration {i}") for i, h in enumerate(demonstrations)
    ]
    actions = [np.asarray(h.actions, np.int64) for h in demonstrations]
    for i, (obs, act) in enumerate(zip(observations, actions, strict=True)):
        if len(obs) != len(act) + 1 or (act.size and (act.min() < 0 or act.max() >= num_actions)):
            raise ValueError(
                f"demonstration {i}: expected T+1 = {len(act) + 1} states and actions in "
                f"[0, {num_actions}), got {len(obs)} states and actions {sorted(set(act.tolist()))}"
            )
    states = np.unique(np.concatenate(observations))
    lengths = np.array([len(a) for a in actions], np.int64)
    length = int(lengths.max()) + 1
    positions = np.zeros((len(actions), length), np.int64)
    padded_actions = np.zeros((len(actions), length), np.int64)
    for b, (obs, act) in enumerate(zip(observations, actions, strict=True)):
        positions[b, : len(obs)] = np.searchsorted(states, obs)
        padded_actions[b, : len(act)] = act
    option_mu, option_beta = options.probabilities(states)  # [U, m, A], [U, m]
    option_mu = np.asarray(option_mu, np.float64)
    option_beta = np.asarray(option_beta, np.float64)
    probs = option_mu[positions]  # [B, L, m, A]
    primitive_mu = np.eye(num_actions)[padded_actions]  # μ_a(s_t, a_t) = 1[a = a_t]
    learned_mu = np.take_along_axis(probs, padded_actions[:, :, None, None], axis=-1)[..., 0]
    beta = np.concatenate([np.ones_like(primitive_mu), option_beta[positions]], axis=-1)
    return DemoTables(
        states=states,
        positions=positions,
        actions=padded_actions,
        lengths=lengths,
        mu=np.concatenate([primitive_mu, learned_mu], axis=-1),
        beta=beta,
        option_probs=probs,
        num_actions=num_actions,
    )


def _check_pi(pi: np.ndarray, rows: int, tables: DemoTables, what: str) -> np.ndarray:
    pi = np.asarray(pi, np.float64)
    if pi.ndim != 2 or pi.shape[0] < rows or pi.shape[1] != tables.num_options:
        raise ValueError(
            f"{what}: expected [{rows}, {tables.num_options}] (states x A + m options), got "
            f"{pi.shape}"
        )
    if not np.all(np.isfinite(pi)) or np.any(pi < 0):
        raise ValueError(f"{what}: expected finite probabilities >= 0")
    return pi


def score_tables(tables: DemoTables, pi_demo: np.ndarray, config: JhatConfig) -> OptionSetScore:
    """Ĵ and its terms for π given on the demonstrated states ([U, A + m], rows of ``states``)."""
    pi_demo = _check_pi(pi_demo, len(tables.states), tables, "pi on the demonstrated states")
    parts = jhat(
        tables.gather(pi_demo),
        tables.mu,
        tables.beta,
        tables.lengths,
        option_action_probs=tables.option_probs,
        lambda1=config.lambda1,
        lambda2=config.lambda2,
        likelihood=config.likelihood,
        chunk=config.chunk,
        jit_compile=config.jit_compile,
    )
    parts = JhatParts(*(x.numpy() for x in parts))
    return OptionSetScore.from_parts(parts, tables.lengths, config)


def score_option_set(
    options: Any,
    demonstrations: Sequence[Any],
    pi: np.ndarray,
    config: JhatConfig | None = None,
) -> OptionSetScore:
    """Ĵ (eq. 2) of ``options`` on ``demonstrations`` under the policy over options ``pi``.

    Args:
      options: an option set over state indices.
      demonstrations: trajectories of state indices.
      pi: float [S, A + m], π(s, ·) over every state index (primitives first); rows need only be
        right on the demonstrated states.
      config: Ĵ's weights (default: λ2 = 100, λ1 = 0, ``log_prob_per_step``, as the paper spec).
    """
    config = config or default_config()
    tables = demo_tables(options, demonstrations)
    pi = _check_pi(pi, int(tables.states.max()) + 1, tables, "pi")
    return score_tables(tables, pi[tables.states], config)


def default_config() -> JhatConfig:
    """Ĵ as the paper spec's offline-options entry weighs it: λ2 = 100, λ1 = 0, log Pr(h)/|h|."""
    return JhatConfig(lambda1=0.0, lambda2=100.0, likelihood="log_prob_per_step")


def fit_pi_tables(
    tables: DemoTables,
    config: JhatConfig,
    max_steps: int = 5000,
    learning_rate: float = 0.1,
    tolerance: float = 1e-4,
) -> FittedPi:
    """Ascent on Ĵ over free logits of π on the demonstrated states, the options frozen.

    Ĵ is not concave in π: an ascent from the uniform π can settle where π uses an option that
    it cannot leave cheaply, below what the primitives alone give (measured on the paper spec:
    seed 2's option set, −5.67 against −2.93 for its primitives). So three ascents run, all from
    fixed starts (no seed): from the uniform π; with the options' columns held at π = 0 (the
    primitives alone); and from that optimum with the options let in at e^:data:`OPTIONS_OFF` of
    the best primitive's weight. The best is kept, never below the primitives alone. Adam on the
    logits, in blocks of :data:`FIT_BLOCK` steps that run as one XLA cluster; each ascent stops
    when Ĵ gains less than ``tolerance`` · (1 + |Ĵ|) over a block, or after ``max_steps``. The KL
    term does not depend on π, so it is left out of the ascent and added to the final score.
    ``steps`` and ``converged`` describe the ascent kept.
    """
    if max_steps < 0 or learning_rate <= 0:
        raise ValueError(
            f"fit_pi_tables: expected max_steps >= 0 and learning_rate > 0, got {max_steps} and "
            f"{learning_rate}"
        )
    padded = _Padded.of(tables)
    args = (tables, padded, config, max_steps, learning_rate, tolerance)
    best, _ = _ascend(padded.mask, *args)
    if tables.num_options > tables.num_actions:
        options = slice(tables.num_actions, tables.num_options)
        # The primitives alone (the options' columns fixed at π = 0), then from there with the
        # options let in at a small weight: an ascent that starts where the options are unused.
        start = padded.mask.copy()
        start[:, options] = _ABSENT
        alone, logits = _ascend(start, *args)
        start = logits.copy()
        start[:, options] = logits[:, : tables.num_actions].max(axis=1, keepdims=True) + OPTIONS_OFF
        fitted, _ = _ascend(start, *args)
        for candidate in (alone, fitted):
            if candidate.score.total > best.score.total:
                best = candidate
    return best


#: In the third start of :func:`fit_pi_tables`, the options' logit below the best primitive's.
OPTIONS_OFF = -8.0


def _ascend(start, tables, padded, config, max_steps, learning_rate, tolerance):
    """One Adam ascent of the logits from ``start``: (the fitted π, its final logits)."""
    run = _fit_block(config.likelihood, config.chunk)
    logits = tf.constant(start)
    moments = (tf.zeros_like(logits), tf.zeros_like(logits))
    weights = tf.constant([config.lambda2, learning_rate], tf.float64)
    steps, converged, previous = 0, False, -np.inf
    while steps < max_steps:
        block = min(FIT_BLOCK, max_steps - steps)
        logits, m, v, total = run(
            logits, *moments, tf.constant(steps, tf.int32), tf.constant(block, tf.int32),
            *padded.tensors, weights,
        )  # fmt: skip
        moments, steps, value = (m, v), steps + block, float(total)
        if not np.isfinite(value):
            raise FloatingPointError(f"fit_pi_tables: J-hat = {value} by Adam step {steps}")
        if value - previous <= tolerance * (1.0 + abs(value)):
            converged = True
            break
        previous = value
    pi_demo = tf.nn.softmax(logits, axis=-1).numpy()[: len(tables.states), : tables.num_options]
    score = score_tables(tables, pi_demo, config)
    return FittedPi(tables.states, pi_demo, score, steps, converged), logits.numpy()


#: Adam steps per call of the compiled ascent (one XLA launch).
FIT_BLOCK = 250

# The logit of a padding column: exp underflows to exactly 0 in float64, so π never picks it.
_ABSENT = -1e4


def _bucket(size: int, step: int) -> int:
    return max(step, -(-size // step) * step)


@dataclasses.dataclass(frozen=True)
class _Padded:
    """The tables padded to a few bucketed shapes, so the compiled ascent compiles a few times."""

    mask: np.ndarray  # [U', n'] initial logits: 0, or _ABSENT in padding columns
    tensors: tuple[tf.Tensor, ...]  # positions, mu, beta, lengths

    @classmethod
    def of(cls, tables: DemoTables) -> _Padded:
        batch, length, n = tables.mu.shape
        shape = (_bucket(batch, 8), _bucket(length, 16), _bucket(n, 8))
        states = _bucket(len(tables.states), 64)
        pad = [(0, shape[0] - batch), (0, shape[1] - length)]
        mu = np.pad(tables.mu, [*pad, (0, shape[2] - n)])
        beta = np.pad(tables.beta, [*pad, (0, shape[2] - n)], constant_values=1.0)
        mask = np.zeros((states, shape[2]))
        mask[:, n:] = _ABSENT
        # Padding demonstrations have length 0: they add 0 to every sum, and Adam is invariant
        # to the constant factor batch / padded batch that they put on the means.
        return cls(
            mask,
            (
                tf.constant(np.pad(tables.positions, pad), tf.int32),
                tf.constant(mu),
                tf.constant(beta),
                tf.constant(np.pad(tables.lengths, pad[:1]), tf.int32),
            ),
        )


@functools.cache
def _fit_block(likelihood: str, chunk: int):
    """``block`` Adam steps up Ĵ(π) from ``logits`` as one XLA cluster (traced once per form)."""

    def run(logits, m, v, done, block, positions, mu, beta, lengths, weights):
        lambda2, learning_rate = weights[0], weights[1]
        empty = tf.zeros(tf.concat([tf.shape(mu)[:2], [0, 1]], axis=0), mu.dtype)

        def objective(x):
            pi = tf.gather(tf.nn.softmax(x, axis=-1), positions)
            parts = jhat_body(pi, mu, beta, lengths, empty, lambda1=0.0, lambda2=1.0,
                          likelihood=likelihood, chunk=chunk)  # fmt: skip
            # The KL term does not depend on π: weighted at 0 here, added to the final score.
            return weighted_total(parts.prob_term, parts.termination_term, 0.0, 0.0, lambda2)

        def body(i, x, m, v, _):
            with tf.GradientTape() as tape:
                tape.watch(x)
                total = objective(x)
            g = tape.gradient(total, x)
            x, state = adam_ascent(x, g, AdamState(m, v), done + i + 1, learning_rate)
            return i + 1, x, state.m, state.v, total

        zero = tf.constant(0.0, logits.dtype)
        _, logits, m, v, _ = tf.while_loop(
            lambda i, *_: i < block, body, (tf.constant(0), logits, m, v, zero)
        )
        return logits, m, v, objective(logits)

    return tf.function(run, jit_compile=True, reduce_retracing=True, autograph=False)


def fit_pi_table(
    options: Any,
    demonstrations: Sequence[Any],
    config: JhatConfig | None = None,
    max_steps: int = 5000,
    learning_rate: float = 0.1,
) -> FittedPi:
    """The most Ĵ ``options`` allow on ``demonstrations``: π fitted as a table, options frozen.

    Args:
      options: an option set over state indices.
      demonstrations: trajectories of state indices.
      config: Ĵ's weights (default: :func:`default_config`).
      max_steps: cap on Adam steps.
      learning_rate: Adam's step size on the logits.

    Returns:
      :class:`FittedPi`: π on the demonstrated states and Ĵ's terms under it.
    """
    config = config or default_config()
    return fit_pi_tables(demo_tables(options, demonstrations), config, max_steps, learning_rate)


def posteriors(tables: DemoTables, pi_demo: np.ndarray) -> StepPosteriors:
    """Pr(O_t = o | h) and Pr(T_t = 1 | h) along the demonstrations under π on their states."""
    pi_demo = _check_pi(pi_demo, len(tables.states), tables, "pi on the demonstrated states")
    out = step_posteriors(tables.gather(pi_demo), tables.mu, tables.beta, tables.lengths)
    return StepPosteriors(out.option.numpy(), out.termination.numpy())
