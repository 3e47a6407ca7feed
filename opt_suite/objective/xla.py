"""Running a pure tensor function as XLA clusters — its value and its gradient — from any caller.

Why: on a CPU, Ĵ's recursion is hundreds of tiny dependent steps; as ordinary TensorFlow ops each
costs microseconds of dispatch, fused by XLA it costs nanoseconds. Why two clusters: autodiff
*through* an XLA cluster needs the loop's accumulators to cross the XLA/TF boundary, which
TensorFlow does not support when the caller is an ordinary (non-XLA) graph. So the value is one
cluster, and the vector–Jacobian product is another that recomputes the value (cheap) and
differentiates it inside XLA. Each compiles once per concrete input shape and dtype.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import tensorflow as tf

__all__ = ["xla_with_gradient"]

_OPTIONS = {"jit_compile": True, "reduce_retracing": True, "autograph": False}


@functools.cache
def xla_with_gradient(fn: Callable[..., Any], **static: Any) -> Callable[..., Any]:
    """``fn(*tensors, **static)`` as an XLA cluster with an XLA-compiled gradient.

    Args:
      fn: a pure function of tensors (floating ones are differentiated, integer ones are not),
        returning a nest of floating tensors.
      **static: hashable keyword arguments baked into the compiled function (cached per value).

    Returns:
      A callable taking the same positional tensors and returning ``fn``'s nest.
    """
    pure = functools.partial(fn, **static)
    value = tf.function(pure, **_OPTIONS)

    @tf.function(**_OPTIONS)
    def vector_jacobian(inputs, upstream):
        floats = [x for x in inputs if x.dtype.is_floating]
        with tf.GradientTape() as tape:
            tape.watch(floats)
            out = tf.nest.flatten(pure(*inputs))
        return tape.gradient(out, floats, output_gradients=upstream)

    @tf.custom_gradient
    def run(*inputs):
        # Cut the inputs off any tape first: an eager tape would otherwise ask TensorFlow for the
        # cluster's own gradient (the unsupported path above) instead of using ``grad``.
        out = value(*[tf.stop_gradient(x) for x in inputs])

        def grad(*upstream):
            flat = tf.nest.flatten(out)
            upstream = [
                tf.zeros_like(o) if u is None else u for o, u in zip(flat, upstream, strict=True)
            ]
            grads = iter(vector_jacobian(list(inputs), upstream))
            return [next(grads) if x.dtype.is_floating else None for x in inputs]

        return out, grad

    return run
