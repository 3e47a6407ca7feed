"""CompILE's parameters (Kipf et al., ICML 2019), with the paper's defaults and their source.

Sources: "train.py" and "modules.py" are the authors' public example implementation
(``tkipf/compile``: ``--learning-rate 1e-2``, ``--hidden-dim 64``, ``--latent-dim 32``,
``--num-segments 3``, ``--iterations 100``; ``CompILE(temp_b=1., temp_z=1., beta_b=.1, beta_z=.1,
prior_rate=3.)``). Two choices differ from that example, because the suite needs an option set:

- the latents are always ``concrete`` (Gumbel-softmax over ``latent_dim`` categories, the
  example's ``--latent-dist concrete``), not its default Gaussian: a finite set of latents gives a
  finite set of options, one per latent that the demonstrations use;
- the decoder of a latent is an option network of the suite (``offline_options``' networks:
  ``hidden_sizes``, ``features``), conditioned on the state as in the paper's state-action setting.
"""

from __future__ import annotations

import dataclasses

from baselines.segmentation import FeatureChoice, features_param, hidden_layer_problems
from opt_suite.option_networks.trunk import MAX_UNITS
from opt_suite.params import param

__all__ = ["CompileParams", "MAX_LATENTS", "MAX_SEGMENTS"]

#: Every latent is a potential option network: more than this is a typo.
MAX_LATENTS = 256
#: Segments are inferred one after another (one encoder pass each).
MAX_SEGMENTS = 64


@dataclasses.dataclass(frozen=True)
class CompileParams:
    """CompILE: segments, latents, the ELBO's weights, the networks and the optimiser."""

    num_segments: int = param(
        3,
        doc="N, segments per demonstration (train.py --num-segments: 3); a demonstration with "
        "fewer actions is an error",
        ge=1,
        le=MAX_SEGMENTS,
    )
    latent_dim: int = param(
        32,
        doc="categories of the concrete latent z (train.py --latent-dim: 32); each latent used by "
        "a segment of the demonstrations becomes an option",
        ge=1,
        le=MAX_LATENTS,
    )
    prior_rate: float = param(
        3.0, doc="rate of the Poisson prior on segment lengths (modules.py: 3)", gt=0, le=1000
    )
    beta_b: float = param(0.1, doc="weight of the KL on boundaries (modules.py: 0.1)", ge=0, le=1e6)
    beta_z: float = param(0.1, doc="weight of the KL on latents (modules.py: 0.1)", ge=0, le=1e6)
    temp_b: float = param(
        1.0, doc="Gumbel-softmax temperature of the boundaries (modules.py: 1)", gt=0, le=100
    )
    temp_z: float = param(
        1.0, doc="Gumbel-softmax temperature of the latents (modules.py: 1)", gt=0, le=100
    )
    hidden_dim: int = param(
        64,
        doc="width of the LSTM encoder and its heads (train.py --hidden-dim: 64)",
        ge=1,
        le=MAX_UNITS,
    )
    hidden_sizes: tuple[int, ...] = param(
        (32, 32),
        doc="hidden layers of each latent's decoder, an option network (offline_options' 2x32)",
        ge=1,
        le=MAX_UNITS,
    )
    features: FeatureChoice = features_param()
    iterations: int = param(
        100, doc="full-batch Adam steps (train.py --iterations: 100)", ge=1, le=100_000
    )
    learning_rate: float = param(
        0.01, doc="Adam step size (train.py --learning-rate: 1e-2)", gt=0, le=1
    )
    termination_weight: float = param(
        1.0,
        doc="weight of the termination loss that fits each latent's beta head to the inferred "
        "boundaries (not in the paper: its decoders have no termination)",
        ge=0,
        le=1e6,
    )

    def check(self) -> list[tuple[str, str]]:
        """At least one hidden layer, at most MAX_LAYERS."""
        return hidden_layer_problems(self.hidden_sizes)
