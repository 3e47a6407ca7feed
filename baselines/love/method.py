"""``love``: LOVE (Jiang, Liu, Eysenbach, Kolter & Finn, NeurIPS 2022) as a baseline method.

Reads top to bottom as the paper's pipeline (:class:`baselines.segmentation.SegmentingMethod`):
pad the demonstrations, fit the latent-skill model on action reconstruction plus the variant's
penalties (:mod:`.model`: LOVE's description length, or VTA's / DDO's KL), read each
demonstration's segments from the posterior, and return one option per skill that some segment
uses: the skill's policy pi_k as the option's policy and its termination beta_k (the model's own
boundary probability) as its beta. Options are tabulated over every state on tabular families and
keras conv networks on image families (``features: frames``), as offline_options'. No TensorFlow
at import time.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from baselines.love.params import LoveParams
from baselines.segmentation import Segmentation, SegmentingMethod, SegmentInputs

__all__ = ["Love"]


class Love(SegmentingMethod):
    """LOVE: skills that compress the demonstrations; its DDO and VTA settings by ``variant``.

    Curves (one point per Adam step): ``loss``, ``reconstruction``, ``kl``,
    ``description_length`` (nats), ``nll`` and ``boundaries`` (expected per demonstration). Info
    also records the variant and the coefficients in effect; options are named after the variant.
    """

    name: ClassVar[str] = "love"
    description: ClassVar[str] = (
        "LOVE (Jiang et al. 2022): skills of a latent sequence model trained on action "
        "reconstruction plus a description-length penalty; DDO and VTA as variants"
    )
    Params: ClassVar[type] = LoveParams
    skills_param: ClassVar[str] = "num_skills"
    termination: ClassVar[str] = "the skill's own boundary probability beta_k(s)"

    def option_prefix(self) -> str:
        """``love``, ``vta`` or ``ddo``."""
        return str(self.params.variant)

    def settings_info(self) -> dict[str, Any]:
        """The variant and its coefficients in effect."""
        coding, kl = self.params.coefficients
        return {"variant": self.params.variant, "coding_len_coeff": coding, "kl_coeff": kl}

    def segment(self, inputs: SegmentInputs, seed: np.random.SeedSequence) -> Segmentation:
        """Fit the variant's objective (:func:`.model.train_love`)."""
        from baselines.love.model import train_love

        return train_love(inputs, self.params, seed)
