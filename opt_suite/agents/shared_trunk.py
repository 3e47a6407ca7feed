"""PPO with one trunk for the policy and the value: the Atari network of A3C and of PPO's paper.

tf-agents' PPO takes two networks, an actor and a value network, and its loss calls each on every
observation of every epoch: with two separate trunks (tf-agents' default, and this suite's: see
``NetworkParams.shared`` for why) an update runs two convolutional stacks forward and backward. Both
originals share them: A3C's Atari network (Mnih et al. 2016, the paper's learner) has "one softmax
output for the policy and one linear output for the value function, with all non-output layers
shared", and PPO on Atari (Schulman et al. 2017, Sec. 5 and 6.4) uses "a neural network
architecture that shares parameters between the policy and value function" with the combined loss
L = -L_clip + c1 L_vf - c2 S (c1 = 0.5, tf-agents' ``value_pred_loss_coef``).

Here the two tf-agents networks hold the *same* trunk layers (so the variables are shared, and
tf-agents' ``_train`` already deduplicates them: ``ObjectIdentitySet``), and
:class:`SharedTrunkPPOAgent` overrides only ``get_loss``: it runs the trunk once per epoch and
feeds both heads from it. Its terms are tf-agents' own (``policy_gradient_loss`` and
``entropy_regularization_loss`` are called as they are; the value term is tf-agents' unclipped
squared error), so the loss is tf-agents' ``get_loss`` on the same networks, value for value and
gradient for gradient (a test checks both) — at about half the arithmetic.

Why it is kept though no bundled spec uses it and it learned worse on MinAtar Breakout
(docs/networks.md: paired auc of the same code and seeds, significantly lower): it is the
originals' architecture, which a user reproducing A3C's or PPO's Atari setting asks for by name,
and it is 1.2–1.4× the frames per CPU second of separate networks where CPU is the budget. It is
opt-in (``ppo.network.shared``, default false) and pinned to tf-agents' own loss by its tests.
"""

from __future__ import annotations

from typing import Any

from opt_suite._tf import tensorflow

tf = tensorflow()

from tf_agents.agents import tf_agent  # noqa: E402
from tf_agents.agents.ppo import ppo_agent, ppo_clip_agent  # noqa: E402
from tf_agents.networks import (  # noqa: E402
    categorical_projection_network,
    encoding_network,
    network,
)
from tf_agents.utils import common, nest_utils  # noqa: E402

__all__ = ["SharedActorNetwork", "SharedValueNetwork", "SharedTrunkPPOAgent", "shared_networks"]


class SharedActorNetwork(network.DistributionNetwork):
    """The trunk and a softmax head (tf-agents' categorical projection, its default init)."""

    def __init__(self, observation_spec: Any, action_spec: Any, trunk: Any) -> None:
        head = categorical_projection_network.CategoricalProjectionNetwork(
            action_spec, logits_init_output_factor=0.1
        )
        super().__init__(
            input_tensor_spec=observation_spec,
            state_spec=(),
            output_spec=head.output_spec,
            name="SharedActorNetwork",
        )
        self.trunk = trunk
        self.head = head
        #: observations -> bool [..., actions]: the choices allowed there (initiation sets, see
        #: ``opt_suite.learners.initiation_mask``), or None. Applied in :meth:`distribution`, so
        #: acting and the shared-trunk loss both see it.
        self.mask_of: Any = None

    def call(self, observations, step_type=None, network_state=(), training=False, mask=None):
        """The policy's distribution on ``observations`` (tf-agents' network call)."""
        features, _ = self.trunk(observations, step_type=step_type, training=training)
        return self.distribution(observations, features, training, mask), network_state

    def distribution(self, observations: Any, features: Any, training: bool = False, mask=None):
        """The policy's distribution on the trunk's ``features`` of ``observations``."""
        outer_rank = nest_utils.get_outer_rank(observations, self.input_tensor_spec)
        if self.mask_of is not None:
            found = self.mask_of(observations)
            mask = found if mask is None else tf.logical_and(found, tf.cast(mask, tf.bool))
        distribution, _ = self.head(features, outer_rank, training=training, mask=mask)
        return distribution


class SharedValueNetwork(network.Network):
    """The trunk and a linear value head (tf-agents' ``ValueNetwork`` head and initialiser)."""

    def __init__(self, observation_spec: Any, trunk: Any) -> None:
        super().__init__(input_tensor_spec=observation_spec, state_spec=(), name="SharedValue")
        self.trunk = trunk
        self.head = tf.keras.layers.Dense(
            1, kernel_initializer=tf.random_uniform_initializer(minval=-0.03, maxval=0.03)
        )

    def call(self, observations, step_type=None, network_state=(), training=False):
        """The value of ``observations`` (tf-agents' network call)."""
        features, _ = self.trunk(observations, step_type=step_type, training=training)
        return self.value(features, training), network_state

    def value(self, features: Any, training: bool = False) -> Any:
        """The value of the trunk's ``features`` (one number per observation)."""
        return tf.squeeze(self.head(features, training=training), -1)


def shared_networks(
    observation_spec: Any,
    action_spec: Any,
    preprocessing: Any,
    conv_layer_params: Any,
    fc_layer_params: tuple[int, ...],
) -> tuple[SharedActorNetwork, SharedValueNetwork]:
    """An actor and a value network over one trunk (convolutions and dense layers, ReLU).

    The trunk is tf-agents' ``EncodingNetwork`` with the initialiser its actor and value networks
    give it (Glorot uniform); seeds are fixed by the caller (``tf.random.set_seed``).
    """
    trunk = encoding_network.EncodingNetwork(
        observation_spec,
        preprocessing_layers=preprocessing,
        conv_layer_params=conv_layer_params,
        fc_layer_params=fc_layer_params,
        activation_fn=tf.keras.activations.relu,
        kernel_initializer=tf.compat.v1.keras.initializers.glorot_uniform(),
        batch_squash=True,
    )
    return SharedActorNetwork(observation_spec, action_spec, trunk), SharedValueNetwork(
        observation_spec, trunk
    )


class SharedTrunkPPOAgent(ppo_clip_agent.PPOClipAgent):
    """tf-agents' clipped PPO whose loss runs the shared trunk once per epoch.

    Takes :func:`shared_networks`' pair. Settings whose loss terms this ``get_loss`` does not
    compute (value clipping, L2 penalties, KL penalties) are refused
    at construction rather than silently dropped.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not isinstance(self._actor_net, SharedActorNetwork) or not isinstance(
            self._value_net, SharedValueNetwork
        ):
            raise TypeError("SharedTrunkPPOAgent: expected the pair shared_networks() builds")
        if self._actor_net.trunk is not self._value_net.trunk:
            raise ValueError("SharedTrunkPPOAgent: the actor and value networks hold two trunks")
        unsupported = {
            "value_clipping": self._value_clipping,
            "policy_l2_reg": self._policy_l2_reg,
            "value_function_l2_reg": self._value_function_l2_reg,
            "shared_vars_l2_reg": self._shared_vars_l2_reg,
            "initial_adaptive_kl_beta": self._initial_adaptive_kl_beta,
            "kl_cutoff_factor": self._kl_cutoff_factor,
        }
        set_ = [name for name, value in unsupported.items() if value]
        if set_:
            raise ValueError(f"SharedTrunkPPOAgent: not supported: {', '.join(set_)}")

    def get_loss(
        self,
        time_steps,
        actions,
        act_log_probs,
        returns,
        normalized_advantages,
        action_distribution_parameters,
        weights,
        train_step,
        debug_summaries,
        old_value_predictions=None,
        training=False,
    ) -> tf_agent.LossInfo:
        """tf-agents' PPO loss (see ``PPOAgent.get_loss``) with one trunk pass for both heads."""
        del action_distribution_parameters, train_step, old_value_predictions  # KL/clipping off
        observations = time_steps.observation
        features, _ = self._actor_net.trunk(
            observations, step_type=time_steps.step_type, training=training
        )
        distribution = self._actor_net.distribution(observations, features, training)
        values = self._value_net.value(features, training)

        value_error = tf.math.squared_difference(returns, values)
        if self._aggregate_losses_across_replicas:  # tf-agents' way of averaging, both kept
            value_loss = common.aggregate_losses(
                per_example_loss=value_error, sample_weight=weights
            ).total_loss
        else:
            value_loss = tf.reduce_mean(value_error * weights)
        value_loss *= self._value_pred_loss_coef
        policy_loss = self.policy_gradient_loss(
            time_steps,
            actions,
            tf.stop_gradient(act_log_probs),
            tf.stop_gradient(normalized_advantages),
            distribution,
            weights,
            debug_summaries=debug_summaries,
        )
        zero = tf.zeros_like(policy_loss)
        if self._entropy_regularization > 0.0:
            outer_rank = nest_utils.get_outer_rank(time_steps, self.time_step_spec)
            entropy = tf.cast(
                common.entropy(distribution, self.action_spec, outer_rank), tf.float32
            )
            entropy_loss = self.entropy_regularization_loss(
                time_steps, entropy, weights, debug_summaries
            )
        else:
            entropy_loss = zero
        return tf_agent.LossInfo(
            policy_loss + value_loss + entropy_loss,
            ppo_agent.PPOLossInfo(
                policy_gradient_loss=policy_loss,
                value_estimation_loss=value_loss,
                l2_regularization_loss=zero,
                entropy_regularization_loss=entropy_loss,
                kl_penalty_loss=zero,
                clip_fraction=self._clip_fraction,
            ),
        )
