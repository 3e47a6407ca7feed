"""Typed settings of the tf-agents agents (no TensorFlow here: specs and ``validate`` read them).

Defaults follow the paper where it says something (discount 0.99, Sec. 4.2) and the standard PPO
settings for Atari otherwise (Schulman et al. 2017, Table 5: 8 actors x 128 steps, 4 epochs,
clip 0.1, entropy 0.01, GAE lambda 0.95, Adam 2.5e-4), with the A3C network of Mnih et al. (2016)
that the paper's A3C used: two convolutions (16 8x8 filters stride 4, 32 4x4 filters stride 2) and
256 hidden units.
"""

from __future__ import annotations

import dataclasses

from opt_suite.option_networks.trunk import (
    MAX_FILTERS,
    MAX_KERNEL,
    MAX_LAYERS,
    MAX_PARAMETERS,
    MAX_UNITS,
    ConvLayer,
    fitted_layers,
    network_parameters,
)
from opt_suite.params import param

__all__ = ["NetworkParams", "PPOParams", "ExpertParams", "network_fit", "ppo_memory"]


@dataclasses.dataclass(frozen=True)
class NetworkParams:
    """Convolutions (on uint8 frames scaled to [0, 1]) and fully connected layers.

    The trunk is sized to the observation (:mod:`opt_suite.option_networks.trunk`): no
    convolution on vectors; on images the default kernels and strides (Atari's) become 3x3
    stride-1 convolutions when the image is too small for them; kernels and strides written in a
    spec must fit (``validate`` says which layer does not). Widths, depths and the parameter count
    have upper bounds (``trunk.MAX_*``).
    """

    conv_filters: tuple[int, ...] = param(
        (16, 32), doc="filters of each convolution", ge=1, le=MAX_FILTERS
    )
    conv_kernels: tuple[int, ...] = param(
        (8, 4),
        doc="kernel size of each convolution; the default (Atari's) becomes 3 on images with a "
        "side under 20 px",
        ge=1,
        le=MAX_KERNEL,
    )
    conv_strides: tuple[int, ...] = param(
        (4, 2),
        doc="stride of each convolution; the default (Atari's) becomes 1 on images with a side "
        "under 20 px",
        ge=1,
        le=MAX_KERNEL,
    )
    fc_units: tuple[int, ...] = param(
        (256,), doc="units of the fully connected layers", ge=1, le=MAX_UNITS
    )
    shared: bool = param(
        False,
        doc="one trunk (the convolutions and fc layers) for the policy and the value, with a "
        "softmax and a linear head, as A3C's and PPO's Atari networks: about half the update's "
        "arithmetic, but it learned significantly worse on minatar-breakout (docs/networks.md); "
        "false: two separate networks (tf-agents' default)",
        added_later=True,
    )

    def check(self) -> list[tuple[str, str]]:
        """One kernel and one stride per convolution; at most ``MAX_LAYERS`` of each kind."""
        n = len(self.conv_filters)
        problems = [
            (key, f"expected {n} values (one per entry of conv_filters), got {len(value)}")
            for key, value in (
                ("conv_kernels", self.conv_kernels),
                ("conv_strides", self.conv_strides),
            )
            if len(value) != n
        ]
        problems += [
            (key, f"expected at most {MAX_LAYERS} layers, got {len(value)}")
            for key, value in (("conv_filters", self.conv_filters), ("fc_units", self.fc_units))
            if len(value) > MAX_LAYERS
        ]
        return problems

    @property
    def default_convolutions(self) -> bool:
        """Whether the kernels and strides are the defaults (which give way on small images)."""
        return (self.conv_kernels, self.conv_strides) == (_DEFAULT_KERNELS, _DEFAULT_STRIDES)

    def conv_layer_params(self, observation_shape: tuple[int, ...] = ()) -> list[ConvLayer]:
        """tf-agents' ``conv_layer_params`` on ``observation_shape``: (filters, kernel, stride).

        Without a shape: the layers as configured. Raises ValueError for configured layers that do
        not fit (``validate`` reports it first: :meth:`fit_problems`).
        """
        layers = list(zip(self.conv_filters, self.conv_kernels, self.conv_strides, strict=True))
        if not observation_shape:
            return layers
        return list(fitted_layers(observation_shape, layers, self.default_convolutions))

    def parameters(self, observation_shape: tuple[int, ...], outputs: int) -> int:
        """Weights of one network (actor or value) on ``observation_shape`` with ``outputs``."""
        layers = self.conv_layer_params(observation_shape)
        return network_parameters(observation_shape, layers, self.fc_units, outputs)

    def agent_parameters(self, observation_shape: tuple[int, ...], actions: int) -> int:
        """Weights of the actor and the value together (a shared trunk counted once)."""
        separate = self.parameters(observation_shape, actions) + self.parameters(
            observation_shape, 1
        )
        if not self.shared:
            return separate
        trunk = self.parameters(observation_shape, 0)  # a head of 0 outputs has no weights
        return separate - trunk

    def fit_problems(
        self, observation_shape: tuple[int, ...], outputs: int = 1
    ) -> list[tuple[str, str]]:
        """What does not fit ``observation_shape``, as (key, message).

        Convolutions that shrink an image to nothing (tf-agents' 'valid' padding would fail when
        the network is built — at run time, after the demonstrations were paid for), and networks
        over ``MAX_PARAMETERS``. Non-image observations use no convolutions.
        """
        if self.check():
            return []
        try:
            count = self.parameters(observation_shape, outputs)
        except ValueError as exc:
            key = "conv_strides" if self.conv_kernels == _DEFAULT_KERNELS else "conv_kernels"
            where = f"'valid' padding, on the family's {_shape(observation_shape)} observations"
            return [(key, f"{exc} ({where})")]
        if count > MAX_PARAMETERS:
            return [
                (
                    "",
                    f"{count:,} parameters on the family's {_shape(observation_shape)} "
                    f"observations; expected at most {MAX_PARAMETERS:,} (narrow fc_units or "
                    "conv_filters, or add a stride)",
                )
            ]
        return []


_DEFAULT_KERNELS = NetworkParams.__dataclass_fields__["conv_kernels"].default
_DEFAULT_STRIDES = NetworkParams.__dataclass_fields__["conv_strides"].default


def _shape(shape: tuple[int, ...]) -> str:
    return "x".join(str(d) for d in shape) if shape else "scalar"


#: Upper bounds of the PPO settings (a larger value is a typo: Atari's PPO uses 8 x 128 x 4).
MAX_ENVS = 256
MAX_STEPS_PER_ITERATION = 8192
MAX_EPOCHS = 100
MAX_BATCH = 65_536


@dataclasses.dataclass(frozen=True)
class PPOParams:
    """tf-agents' clipped PPO with parallel envs (tf-agents' nearest agent to the paper's A3C)."""

    learning_rate: float = param(2.5e-4, doc="Adam step size", gt=0)
    gamma: float = param(0.99, doc="discount (paper: 0.99)", gt=0, le=1)
    lambda_gae: float = param(0.95, doc="GAE lambda", ge=0, le=1)
    clip: float = param(0.1, doc="importance ratio clipping", gt=0)
    entropy: float = param(0.01, doc="entropy regularisation", ge=0)
    epochs: int = param(4, doc="passes over each batch of experience", ge=1, le=MAX_EPOCHS)
    num_envs: int = param(8, doc="parallel envs (one vector env of the task)", ge=1, le=MAX_ENVS)
    steps_per_iteration: int = param(
        128, doc="steps per env between updates", ge=1, le=MAX_STEPS_PER_ITERATION
    )
    network: NetworkParams = param(NetworkParams(), doc="actor and value networks")

    def check(self) -> list[tuple[str, str]]:
        """One update's batch (num_envs x steps_per_iteration) is at most ``MAX_BATCH``."""
        batch = self.num_envs * self.steps_per_iteration
        if batch <= MAX_BATCH:
            return []
        return [
            (
                "steps_per_iteration",
                f"num_envs x steps_per_iteration = {batch:,} steps per update; expected at most "
                f"{MAX_BATCH:,} (every update holds them all in memory, as float32 observations)",
            )
        ]

    def batch_bytes(self, observation_shape: tuple[int, ...]) -> int:
        """Bytes of one update's observations as float32 (what the networks are run on)."""
        size = 1
        for d in observation_shape:
            size *= int(d)
        return 4 * size * self.num_envs * self.steps_per_iteration


def network_fit(ppo: PPOParams, family: object, prefix: str) -> list[tuple[str, str]]:
    """``ppo.network.fit_problems`` on ``family``'s observations, keys under ``prefix``."""
    shape = tuple(getattr(getattr(family, "observation_space", None), "shape", None) or ())
    actions = int(getattr(getattr(family, "action_space", None), "n", 1) or 1)
    return [
        (f"{prefix}network.{key}".rstrip("."), msg)
        for key, msg in ppo.network.fit_problems(shape, actions)
    ]


def ppo_memory(ppo: PPOParams, observation_shape: tuple[int, ...], actions: int) -> int:
    """Bytes of a PPO agent that grow with its settings (an upper bound of those arrays).

    Its networks' weights (a shared trunk counted once) with Adam's two moments (float32, x3),
    and one update's batch of observations as float32.
    """
    weights = ppo.network.agent_parameters(observation_shape, actions)
    return 3 * 4 * weights + ppo.batch_bytes(observation_shape)


@dataclasses.dataclass(frozen=True)
class ExpertParams:
    """A PPO expert per train task, trained within a frame budget.

    The spec key ``demonstrations.expert`` for families without a tabular model.
    """

    frames: int = param(
        10_000_000, doc="emulator frames of training per train task (the budget)", ge=1
    )
    ppo: PPOParams = param(PPOParams(), doc="the agent")
    min_complete: int | None = param(
        None,
        added_later=True,
        doc="complete demonstrations each train task must keep: a cut one (the episode not ended "
        "within the caps) is dropped with a warning while at least this many remain; unset: "
        "every demonstration must be complete (a cut one fails the cell)",
        ge=1,
        le=100_000,
    )
