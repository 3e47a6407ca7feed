"""Typed settings of the tf-agents agents (no TensorFlow here: specs and ``validate`` read them).

Defaults follow the paper where it says something (discount 0.99, Sec. 4.2) and the standard PPO
settings for Atari otherwise (Schulman et al. 2017, Table 5: 8 actors x 128 steps, 4 epochs,
clip 0.1, entropy 0.01, GAE lambda 0.95, Adam 2.5e-4), with the A3C network of Mnih et al. (2016)
that the paper's A3C used: two convolutions (16 8x8 filters stride 4, 32 4x4 filters stride 2) and
256 hidden units.
"""

from __future__ import annotations

import dataclasses

from opt_suite.params import param

__all__ = ["NetworkParams", "PPOParams", "ExpertParams", "network_fit"]


@dataclasses.dataclass(frozen=True)
class NetworkParams:
    """A convolutional torso (on uint8 frames scaled to [0, 1]) and fully connected layers."""

    conv_filters: tuple[int, ...] = param((16, 32), doc="filters of each convolution", ge=1)
    conv_kernels: tuple[int, ...] = param((8, 4), doc="kernel size of each convolution", ge=1)
    conv_strides: tuple[int, ...] = param((4, 2), doc="stride of each convolution", ge=1)
    fc_units: tuple[int, ...] = param((256,), doc="units of the fully connected layers", ge=1)

    def check(self) -> list[tuple[str, str]]:
        """One kernel and one stride per convolution."""
        n = len(self.conv_filters)
        return [
            (key, f"expected {n} values (one per entry of conv_filters), got {len(value)}")
            for key, value in (
                ("conv_kernels", self.conv_kernels),
                ("conv_strides", self.conv_strides),
            )
            if len(value) != n
        ]

    def fit_problems(self, observation_shape: tuple[int, ...]) -> list[tuple[str, str]]:
        """Convolutions that shrink ``observation_shape`` [H, W, C] to nothing, as (key, message).

        tf-agents' convolutions use 'valid' padding: a layer maps a side of n pixels to
        (n - kernel) // stride + 1, and a side below 1 fails when the network is built — at run
        time, after the demonstrations were paid for. Non-image observations use no convolutions.
        """
        if len(observation_shape) != 3 or self.check():
            return []
        height, width = observation_shape[:2]
        sides = [(height, width)]
        for _, kernel, stride in self.conv_layer_params():
            height, width = (height - kernel) // stride + 1, (width - kernel) // stride + 1
            sides.append((height, width))
            if min(height, width) < 1:
                trace = " -> ".join(f"{h}x{w}" for h, w in sides)
                return [
                    (
                        "conv_kernels",
                        f"the convolutions do not fit the family's {observation_shape[0]}x"
                        f"{observation_shape[1]} observations ({trace} with 'valid' padding: "
                        f"kernels {list(self.conv_kernels)}, strides {list(self.conv_strides)}); "
                        "expected every side to stay >= 1",
                    )
                ]
        return []

    def conv_layer_params(self) -> list[tuple[int, int, int]]:
        """tf-agents' ``conv_layer_params``: (filters, kernel, stride) per layer."""
        return list(zip(self.conv_filters, self.conv_kernels, self.conv_strides, strict=True))


@dataclasses.dataclass(frozen=True)
class PPOParams:
    """tf-agents' clipped PPO with parallel envs (tf-agents' nearest agent to the paper's A3C)."""

    learning_rate: float = param(2.5e-4, doc="Adam step size", gt=0)
    gamma: float = param(0.99, doc="discount (paper: 0.99)", gt=0, le=1)
    lambda_gae: float = param(0.95, doc="GAE lambda", ge=0, le=1)
    clip: float = param(0.1, doc="importance ratio clipping", gt=0)
    entropy: float = param(0.01, doc="entropy regularisation", ge=0)
    epochs: int = param(4, doc="passes over each batch of experience", ge=1)
    num_envs: int = param(8, doc="parallel envs (one vector env of the task)", ge=1)
    steps_per_iteration: int = param(128, doc="steps per env between updates", ge=1)
    network: NetworkParams = param(NetworkParams(), doc="actor and value networks (not shared)")


def network_fit(ppo: PPOParams, family: object, prefix: str) -> list[tuple[str, str]]:
    """``ppo.network.fit_problems`` on ``family``'s observations, keys under ``prefix``."""
    shape = tuple(getattr(getattr(family, "observation_space", None), "shape", None) or ())
    return [(f"{prefix}network.{key}", msg) for key, msg in ppo.network.fit_problems(shape)]


@dataclasses.dataclass(frozen=True)
class ExpertParams:
    """A PPO expert per train task, trained within a frame budget.

    The spec key ``demonstrations.expert`` for families without a tabular model.
    """

    frames: int = param(
        10_000_000, doc="emulator frames of training per train task (the budget)", ge=1
    )
    ppo: PPOParams = param(PPOParams(), doc="the agent")
