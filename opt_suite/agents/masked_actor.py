"""An actor network whose softmax is masked by a function of the observations (no option logic).

The ``tf_agents`` learner masks the options whose initiation sets do not hold an observation
(``opt_suite.learners.initiation_mask`` builds the mask); this wrapper applies any such mask to
tf-agents' ``ActorDistributionNetwork`` (its projection takes a ``mask``: masked logits become the
dtype's lowest value, probability 0), for acting and for PPO's training loss alike.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from opt_suite._tf import tensorflow

tf = tensorflow()

from tf_agents.networks import network  # noqa: E402

__all__ = ["MaskedActorNetwork"]


class MaskedActorNetwork(network.DistributionNetwork):
    """An actor network whose distribution is masked by :func:`action_mask` of the observations.

    Wraps tf-agents' ``ActorDistributionNetwork`` (whose projection takes a ``mask``); the
    shared-trunk actor takes the mask itself (``SharedActorNetwork.mask_of``).
    """

    def __init__(self, actor: Any, mask_of: Callable[[Any], Any]) -> None:
        super().__init__(
            input_tensor_spec=actor.input_tensor_spec,
            state_spec=actor.state_spec,
            output_spec=actor.output_spec,
            name="MaskedActorNetwork",
        )
        #: the actor it masks (``opt_suite.agents.numpy_actor`` mirrors that one's layers)
        self.wrapped = actor
        #: observations -> bool [..., actions] (with ``allowed`` on NumPy arrays for acting)
        self.mask_of = mask_of

    def call(self, observations, step_type=None, network_state=(), training=False, mask=None):
        """The wrapped actor's distribution with the initiation mask (and ``mask``, if given)."""
        found = self.mask_of(observations)
        if mask is not None:
            found = tf.logical_and(found, tf.cast(mask, tf.bool))
        return self.wrapped(
            observations,
            step_type=step_type,
            network_state=network_state,
            training=training,
            mask=found,
        )
