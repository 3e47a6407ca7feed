"""LOVE's parameters (Jiang, Liu, Eysenbach, Kolter & Finn, NeurIPS 2022), with their sources.

Sources: "README" is the authors' public repository's (``yidingjiang/love``) grid-world command
(``--coding_len_coeff=0.005 --kl_coeff=0.0 --rec_coeff=1.0 --latent-n=10 --max-iters=20000``) and
its variants: "To use VTA instead, set coding_len_coeff=0 and kl_coeff=0.05. To use DDO instead,
set coding_len_coeff=0, kl_coeff=1" (with its ``--ddo`` flag: the KL on boundaries only, which is
what the exact model here has, see ``model.py``). "train_rl.py" is its training script's defaults
(``--learn-rate 0.0005``, ``--grad-clip 10.0``).

``variant`` picks the README's coefficients; ``coding_len_coeff`` or ``kl_coeff`` set explicitly
override the variant's value.
"""

from __future__ import annotations

import dataclasses
from typing import Literal

from baselines.segmentation import FeatureChoice, features_param, hidden_layer_problems
from opt_suite.option_networks.trunk import MAX_UNITS
from opt_suite.params import param

__all__ = ["LoveParams", "MAX_SKILLS", "VARIANTS"]

#: Every skill is an option network evaluated at every step of the forward-backward pass.
MAX_SKILLS = 256

#: The README's (coding_len_coeff, kl_coeff) of each variant.
VARIANTS: dict[str, tuple[float, float]] = {
    "love": (0.005, 0.0),
    "vta": (0.0, 0.05),
    "ddo": (0.0, 1.0),
}


@dataclasses.dataclass(frozen=True)
class LoveParams:
    """LOVE and its DDO / VTA settings: skills, the objective's weights, networks and optimiser."""

    variant: Literal["love", "vta", "ddo"] = param(
        "love",
        doc="which objective: love (description-length penalty), vta or ddo (README's settings)",
    )
    num_skills: int = param(
        10,
        doc="K, the number of discrete skills (README --latent-n=10); each skill some "
        "demonstration uses becomes an option",
        ge=1,
        le=MAX_SKILLS,
    )
    coding_len_coeff: float | None = param(
        None,
        doc="weight of the description length of the skill sequence (README: love 0.005, "
        "vta and ddo 0); None: the variant's",
        ge=0,
        le=1e6,
    )
    kl_coeff: float | None = param(
        None,
        doc="weight of the KL between the posterior and the prior over skills and boundaries "
        "(README: love 0, vta 0.05, ddo 1); None: the variant's",
        ge=0,
        le=1e6,
    )
    rec_coeff: float = param(
        1.0, doc="weight of the action reconstruction (README --rec_coeff=1.0)", ge=0, le=1e6
    )
    iterations: int = param(
        20_000, doc="full-batch Adam steps (README --max-iters=20000)", ge=1, le=100_000
    )
    learning_rate: float = param(
        0.0005, doc="Adam step size (train_rl.py --learn-rate 0.0005)", gt=0, le=1
    )
    grad_clip: float = param(
        10.0, doc="clip of the gradients' global norm (train_rl.py --grad-clip 10.0)", gt=0, le=1e6
    )
    hidden_sizes: tuple[int, ...] = param(
        (32, 32),
        doc="hidden layers of each skill's option network and of the skill prior "
        "(offline_options' 2x32)",
        ge=1,
        le=MAX_UNITS,
    )
    features: FeatureChoice = features_param()

    @property
    def coefficients(self) -> tuple[float, float]:
        """(coding_len_coeff, kl_coeff) in effect: the explicit values, else the variant's."""
        coding, kl = VARIANTS[self.variant]
        return (
            coding if self.coding_len_coeff is None else float(self.coding_len_coeff),
            kl if self.kl_coeff is None else float(self.kl_coeff),
        )

    def check(self) -> list[tuple[str, str]]:
        """At least one hidden layer, at most MAX_LAYERS."""
        return hidden_layer_problems(self.hidden_sizes)
