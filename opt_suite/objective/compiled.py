"""The one ``tf.function`` boundary around Ĵ, and padding trajectories into batches for it.

Shapes: every compiled function here has an input signature with unknown batch size, length and
number of options, so it is traced once per dtype (and once more for the KL variant) — never per
batch shape. XLA, however, compiles its clusters once per *concrete* shape (a few seconds each), so
:func:`pad_batch` rounds the length up to a multiple of ``bucket`` (default 32 actions): a training
run sees one shape, and mixed-length batches only a handful.

Two entry points:

- :class:`CompiledObjective` — Ĵ and the trajectory terms from ready tables (validation, analysis);
- :func:`make_jhat_step` — networks → tables → Ĵ → gradients in one graph (training), e.g.::

      step = make_jhat_step(tables_fn, variables, JhatConfig(lambda1=1e-3, lambda2=100.0))
      batch = pad_batch(trajectories)
      parts, grads = step(batch.observations, batch.actions, batch.lengths)
      optimizer.apply_gradients(zip([-g for g in grads], variables))  # ascend Ĵ
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
import tensorflow as tf

from opt_suite.objective.jhat import JhatConfig, JhatParts, jhat, jhat_and_gradients
from opt_suite.objective.recursions import TrajectoryTerms, trajectory_terms

__all__ = [
    "Tables",
    "PaddedBatch",
    "padded_length",
    "pad_batch",
    "CompiledObjective",
    "make_jhat_step",
]


#: Padded lengths are multiples of this many actions (plus one state), to bound XLA's compilations.
BUCKET = 32


class Tables(NamedTuple):
    """What networks produce for Ĵ, on a padded batch (see ``trajectory_terms`` for the layout).

    Attributes:
      pi: [B, L, n] policy over options (primitives included in the n options).
      mu: [B, L, n] probability that each option takes the demonstrated action.
      beta: [B, L, n] termination probabilities.
      option_action_probs: [B, L, m, A] full action distributions of the m learned options (for
        the KL term), or None.
    """

    pi: Any
    mu: Any
    beta: Any
    option_action_probs: Any = None


class PaddedBatch(NamedTuple):
    """Trajectories padded to a common number of states L (a multiple of the bucket, plus one).

    Attributes:
      observations: [B, L, ...] (past the end: the last observation repeated, lookups stay valid).
      actions: int32 [B, L] (past the end: 0, a valid action index whose value is ignored).
      lengths: int32 [B], the number of actions T_b.
    """

    observations: np.ndarray
    actions: np.ndarray
    lengths: np.ndarray


def padded_length(max_actions: int, bucket: int = BUCKET) -> int:
    """L for a batch whose longest trajectory has ``max_actions`` actions: bucket·⌈T/bucket⌉ + 1."""
    if bucket < 1:
        raise ValueError(f"bucket: expected an int >= 1, got {bucket!r}")
    return bucket * max(1, -(-int(max_actions) // bucket)) + 1


def pad_batch(trajectories: Sequence[Any], bucket: int = BUCKET) -> PaddedBatch:
    """Pads ``Trajectory`` objects (``observations`` [T+1, ...], ``actions`` [T]) into one batch.

    Args:
      trajectories: objects with ``observations`` [T+1, ...] and ``actions`` [T].
      bucket: the number of actions is rounded up to a multiple of this (XLA compiles per shape).
    """
    if not trajectories:
        raise ValueError("pad_batch: expected at least one trajectory, got none")
    lengths = np.array([len(tr.actions) for tr in trajectories], dtype=np.int32)
    length = padded_length(int(lengths.max()), bucket)
    first = np.asarray(trajectories[0].observations)
    observations = np.empty((len(trajectories), length) + first.shape[1:], dtype=first.dtype)
    actions = np.zeros((len(trajectories), length), dtype=np.int32)
    for b, tr in enumerate(trajectories):
        obs = np.asarray(tr.observations)
        if len(obs) != lengths[b] + 1:
            raise ValueError(
                f"pad_batch: trajectory {b} ({getattr(tr, 'task_id', '?')}) has "
                f"{len(obs)} observations and {lengths[b]} actions; expected T+1 observations"
            )
        observations[b, : len(obs)] = obs
        observations[b, len(obs) :] = obs[-1]
        actions[b, : lengths[b]] = tr.actions
    return PaddedBatch(observations, actions, lengths)


def _table_spec(dtype: tf.DType, rank: int = 3) -> tf.TensorSpec:
    return tf.TensorSpec([None] * rank, dtype)


_LENGTHS = tf.TensorSpec([None], tf.int32)


class CompiledObjective:
    """Ĵ and the trajectory terms, compiled once per dtype (tables → numbers).

    Args:
      config: Ĵ's hyper-parameters.
    """

    def __init__(self, config: JhatConfig | None = None) -> None:
        self.config = config or JhatConfig()
        # tf.function objects (TensorFlow ships no types: Any).
        self._functions: dict[tuple[str, tf.DType], Any] = {}

    def _function(self, kind: str, dtype: tf.DType) -> Any:
        if (kind, dtype) not in self._functions:
            specs = [_table_spec(dtype)] * 3 + [_LENGTHS]
            if kind == "jhat_kl":
                specs.append(_table_spec(dtype, rank=4))
            target = self._terms if kind == "terms" else self._jhat
            self._functions[kind, dtype] = tf.function(target, input_signature=specs)
        return self._functions[kind, dtype]

    def _terms(self, pi, mu, beta, lengths) -> TrajectoryTerms:
        cfg = self.config
        return trajectory_terms(pi, mu, beta, lengths, cfg.chunk, cfg.jit_compile)

    def _jhat(self, pi, mu, beta, lengths, probs=None) -> JhatParts:
        cfg = self.config
        return jhat(
            pi, mu, beta, lengths, probs, cfg.lambda1, cfg.lambda2, cfg.likelihood, cfg.chunk,
            cfg.jit_compile,
        )  # fmt: skip

    @property
    def traces(self) -> int:
        """How many times this object's functions were traced (one per dtype and variant)."""
        return sum(f.experimental_get_tracing_count() for f in self._functions.values())

    @staticmethod
    def _inputs(pi, mu, beta, lengths):
        pi = tf.convert_to_tensor(pi)
        if pi.dtype not in (tf.float32, tf.float64):
            raise ValueError(f"pi: expected float32 or float64, got {pi.dtype.name}")
        return (
            pi,
            tf.convert_to_tensor(mu, pi.dtype),
            tf.convert_to_tensor(beta, pi.dtype),
            tf.convert_to_tensor(np.asarray(lengths, dtype=np.int32)),
        )

    def trajectory_terms(self, pi, mu, beta, lengths) -> TrajectoryTerms:
        """Compiled :func:`opt_suite.objective.trajectory_terms`."""
        args = self._inputs(pi, mu, beta, lengths)
        return self._function("terms", args[0].dtype)(*args)

    def jhat(self, pi, mu, beta, lengths, option_action_probs=None) -> JhatParts:
        """Compiled :func:`opt_suite.objective.jhat` with this object's config."""
        args = self._inputs(pi, mu, beta, lengths)
        if option_action_probs is None:
            return self._function("jhat", args[0].dtype)(*args)
        probs = tf.convert_to_tensor(option_action_probs, args[0].dtype)
        return self._function("jhat_kl", args[0].dtype)(*args, probs)


def make_jhat_step(
    tables_fn: Callable[[tf.Tensor, tf.Tensor], Tables],
    variables: Sequence[tf.Variable],
    config: JhatConfig | None = None,
    observation_spec: tf.TensorSpec | None = None,
    apply_gradients: Callable[[list[tf.Tensor]], Any] | None = None,
    jit_compile_all: bool = False,
) -> Callable[[Any, Any, Any], tuple[JhatParts, list[tf.Tensor]]]:
    """Networks → tables → Ĵ → dĴ/dvariables as one compiled function (traced once).

    Args:
      tables_fn: maps (observations [B, L, ...], actions int32 [B, L]) to :class:`Tables`.
      variables: the variables to differentiate Ĵ with respect to.
      config: Ĵ's hyper-parameters (default: :class:`JhatConfig`'s defaults).
      observation_spec: signature of the observations, with unknown batch and length (default:
        int32 state indices [B, L]).
      apply_gradients: optional callback run inside the compiled function with the gradients of Ĵ
        (e.g. an optimizer step; note that optimizers *minimise*, so negate them to ascend Ĵ).
      jit_compile_all: compile the whole step (networks too) with XLA, not only Ĵ's recursion
        (``config.jit_compile``); XLA then compiles once per concrete batch shape.

    Returns:
      ``step(observations, actions, lengths) -> (JhatParts, gradients of Ĵ)``.
    """
    variables = list(variables)
    config = config or JhatConfig()
    observation_spec = observation_spec or tf.TensorSpec([None, None], tf.int32)

    @tf.function(
        input_signature=[observation_spec, tf.TensorSpec([None, None], tf.int32), _LENGTHS],
        jit_compile=jit_compile_all,
    )
    def step(observations, actions, lengths):
        with tf.GradientTape() as tape:
            tables = Tables(*tables_fn(observations, actions))
        outputs = [x for x in tables if x is not None]
        # Ĵ and its table gradients in one XLA cluster, then the chain rule into the networks.
        parts, table_grads = jhat_and_gradients(*tables[:3], lengths, tables[3], config)
        upstream = [g for g in table_grads if g is not None]
        grads = tape.gradient(outputs, variables, output_gradients=upstream)
        if apply_gradients is not None:
            apply_gradients(grads)
        return parts, grads

    return step
