"""``love``: LOVE (Jiang, Liu, Eysenbach, Kolter & Finn, NeurIPS 2022) as a baseline method.

Reads top to bottom as the paper's pipeline: pad the demonstrations (:mod:`baselines.segmentation`),
fit the latent-skill model on action reconstruction plus the variant's penalties (:mod:`.model`:
LOVE's description length, or VTA's / DDO's KL), read each demonstration's segments from the
posterior, and return one option per skill that some segment uses: the skill's policy pi_k as the
option's policy and its termination beta_k (the model's own boundary probability) as its beta.
Options are tabulated over every state on tabular families and keras conv networks on image
families (``features: frames``), as offline_options'. No TensorFlow at import time.
"""

from __future__ import annotations

import time
from typing import ClassVar

from baselines.love.params import LoveParams
from baselines.segmentation import SegmentingMethod
from opt_suite.methods.base import Discovery, DiscoveryContext

__all__ = ["Love"]


class Love(SegmentingMethod):
    """LOVE: skills that compress the demonstrations; its DDO and VTA settings by ``variant``."""

    name: ClassVar[str] = "love"
    description: ClassVar[str] = (
        "LOVE (Jiang et al. 2022): skills of a latent sequence model trained on action "
        "reconstruction plus a description-length penalty; DDO and VTA as variants"
    )
    Params: ClassVar[type] = LoveParams
    skills_param: ClassVar[str] = "num_skills"

    def discover(self, context: DiscoveryContext) -> Discovery:
        """Fit the skills to ``context.demonstrations``; an option per skill the segments use.

        Curves (one point per Adam step): ``loss``, ``reconstruction``, ``kl``,
        ``description_length`` (nats), ``nll`` and ``boundaries`` (expected per demonstration).
        Info: the boundaries and skills read from each demonstration, the skills kept, the mean
        segment length, the coefficients in effect.

        Raises:
          ValueError: no demonstrations, or one of the wrong kind.
          FloatingPointError: the objective or a learned option turns non-finite.
        """
        from baselines.segmentation import (
            check_activation_memory,
            segment_inputs,
            skill_option_set,
        )

        params: LoveParams = self.params
        start = time.perf_counter()
        inputs = segment_inputs(context, self.name, params.features)
        check_activation_memory(inputs, params.num_skills, self.name, "num_skills")
        from baselines.love.model import train_love

        result = train_love(inputs, params, context.seed)
        options = skill_option_set([result.skills[k] for k in result.used], inputs, params.variant)
        segments = sum(len(seq) for seq in result.skill_sequences)
        coding, kl = params.coefficients
        return Discovery(
            options=options,
            curves=result.curves,
            info={
                "variant": params.variant,
                "coding_len_coeff": coding,
                "kl_coeff": kl,
                "options_kept": len(options),
                "skills_used": result.used,
                "boundaries": result.boundaries,
                "segment_skills": result.skill_sequences,
                "mean_segment_length": float(inputs.demos.lengths.sum()) / max(segments, 1),
                "demonstrations": len(context.demonstrations),
                "termination": "the skill's own boundary probability beta_k(s)",
                "wall_time_s": round(time.perf_counter() - start, 3),
            },
        )
