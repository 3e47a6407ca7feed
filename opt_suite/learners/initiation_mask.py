"""Initiation sets in a deep policy over options: unavailable options get probability 0.

An option may start only in its initiation set (Sutton, Precup & Singh 1999). The tabular
learners skip unavailable options in their epsilon-greedy choice; the ``tf_agents`` learner's PPO
agent chooses from a softmax over the A primitives + m options, so there the set becomes a *mask*
of the softmax: the logits of the options that may not start on an observation are set to the
dtype's lowest value (tf-agents' ``CategoricalProjectionNetwork`` ``mask``), which gives them
probability exactly 0 — when acting, and in PPO's log-probabilities and entropy when training, since
both go through the same actor network.

The mask is a function of the observation (:func:`action_mask`): a table lookup on index
observations, else the option set's own :meth:`~opt_suite.options.OptionSet.initiation` through
``tf.numpy_function``. Primitives are always available, so every row keeps a choice. The agent
applies it in its actor network (``opt_suite.agents.masked_actor``).

A mask is data to the agent's compiled update, not part of its graph: the table is a variable and
the NumPy function is looked up when the op runs. So a worker's cached agent
(``opt_suite.agents.agent_cache``) serves every run whose mask has the same :attr:`ActionMask.kind`
(table shape, or observation shape and width): the run's mask is :meth:`~ActionMask.load`-ed into
the one the agent's graph calls, and the update is traced once per worker, as without a mask.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from opt_suite._tf import tensorflow

tf = tensorflow()
__all__ = ["ActionMask", "action_mask"]


class ActionMask:
    """Which of the A + m choices may be made on an observation: as TF ops and on NumPy arrays.

    Call it on a tensor of observations [..., *shape] for bool [..., A + m] (inside the actor
    network); :meth:`allowed` gives the same on a NumPy batch [N, *shape] (the NumPy collect
    policy, ``opt_suite.agents.acting``).
    """

    def __init__(self, allowed: Any, shape: tuple[int, ...], width: int, table: Any = None):
        self._allowed = allowed
        self._shape = shape
        self._width = width
        # a variable, not a constant: a compiled graph reads its value when it runs (see load)
        self._table = None if table is None else tf.Variable(table, trainable=False, name="mask")

    @property
    def kind(self) -> tuple[Any, ...]:
        """What a graph calling this mask depends on: ("table", [n, A + m]) or ("function", ...).

        Two masks of one kind are interchangeable in a compiled graph (:meth:`load`).
        """
        if self._table is not None:
            return ("table", tuple(self._table.shape.as_list()))
        return ("function", self._shape, self._width)

    def load(self, other: ActionMask) -> None:
        """Make this mask ``other``'s, in place: graphs that call this one now apply ``other``.

        Raises:
          ValueError: ``other`` is of another :attr:`kind` (a graph built for this one does not
            fit it).
        """
        if other.kind != self.kind:
            raise ValueError(f"action mask: cannot load a {other.kind} mask into a {self.kind} one")
        if other is self:
            return
        self._allowed = other._allowed
        if self._table is not None and other._table is not None:
            self._table.assign(other._table)

    def allowed(self, observations: np.ndarray) -> np.ndarray:
        """Bool [..., A + m] for NumPy observations [..., *shape]."""
        obs = np.asarray(observations)
        outer = obs.shape[: obs.ndim - len(self._shape)]
        flat = obs.reshape((-1, *self._shape))
        return np.asarray(self._allowed(flat), bool).reshape((*outer, self._width))

    def __call__(self, observations: Any) -> Any:
        """Bool [..., A + m] for a tensor of observations [..., *shape]."""
        if self._table is not None:
            return tf.gather(tf.convert_to_tensor(self._table), tf.cast(observations, tf.int32))
        mask = tf.numpy_function(self.allowed, [observations], tf.bool)  # self._allowed at run time
        outer = tf.shape(observations)[: tf.rank(observations) - len(self._shape)]
        return tf.reshape(mask, tf.concat([outer, [self._width]], axis=0))


def action_mask(options: Any, num_actions: int, observation_space: Any) -> ActionMask | None:
    """The mask of ``options``' initiation sets over A primitives + m options, or None without.

    Args:
      options: the option set (``has_initiation`` decides whether there is a mask).
      num_actions: A.
      observation_space: the family's; a ``Discrete`` space gets a [n, A + m] table.
    """
    if not getattr(options, "has_initiation", False):
        return None
    width = num_actions + len(options)

    def allowed(flat: np.ndarray) -> np.ndarray:
        found = np.asarray(options.initiation(flat), bool)
        return np.concatenate([np.ones((len(flat), num_actions), bool), found], axis=1)

    if hasattr(observation_space, "n") and getattr(observation_space, "shape", None) == ():
        table = allowed(np.arange(int(observation_space.n)))
        return ActionMask(lambda flat: table[flat.astype(np.int64)], (), width, table)
    shape = tuple(int(d) for d in observation_space.shape)
    return ActionMask(allowed, shape, width)
