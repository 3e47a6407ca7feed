"""``compile``: CompILE (Kipf et al., ICML 2019) as a baseline method (no TensorFlow at import).

Reads top to bottom as the paper's pipeline: pad the state-action demonstrations
(:mod:`baselines.segmentation`), fit the segmentation model by the ELBO (:mod:`.model`), read each
demonstration's segments with argmax boundaries and latents, and return one option per latent that
some segment uses: its decoder as the option's policy, its fitted termination head as beta (see
:mod:`.model` for that rule). Options are tabulated over every state on tabular families (four
rooms) and keras conv networks on image families (``features: frames``), as offline_options'.
"""

from __future__ import annotations

import time
from typing import ClassVar

from baselines.compile.params import CompileParams
from baselines.segmentation import SegmentingMethod
from opt_suite.methods.base import Discovery, DiscoveryContext

__all__ = ["Compile"]


class Compile(SegmentingMethod):
    """CompILE: Gumbel-softmax segments, one latent each; each used latent's decoder an option."""

    name: ClassVar[str] = "compile"
    description: ClassVar[str] = (
        "CompILE (Kipf et al. 2019): demonstrations segmented by a Gumbel-softmax ELBO with a "
        "Poisson length prior; each latent's decoder an option"
    )
    Params: ClassVar[type] = CompileParams
    skills_param: ClassVar[str] = "latent_dim"

    def discover(self, context: DiscoveryContext) -> Discovery:
        """Segment ``context.demonstrations``; an option per latent the segments use.

        Curves (one point per Adam step): ``loss`` (negative ELBO + termination loss), ``nll``,
        ``kl_z``, ``kl_b``, ``termination``. Info: the boundaries and latents read from each
        demonstration, the latents kept, the mean segment length.

        Raises:
          ValueError: no demonstrations, or one with fewer actions than ``num_segments``.
          FloatingPointError: the ELBO or a learned option turns non-finite.
        """
        from baselines.segmentation import (
            check_activation_memory,
            segment_inputs,
            skill_option_set,
        )

        params: CompileParams = self.params
        start = time.perf_counter()
        inputs = segment_inputs(context, self.name, params.features, params.num_segments)
        check_activation_memory(inputs, params.latent_dim, self.name, "latent_dim")
        from baselines.compile.model import train_compile

        result = train_compile(inputs, params, context.seed)
        options = skill_option_set([result.options[k] for k in result.used], inputs, "compile")
        segments = sum(len(codes) for codes in result.latents)
        return Discovery(
            options=options,
            curves=result.curves,
            info={
                "options_kept": len(options),
                "latents_used": result.used,
                "boundaries": result.boundaries,
                "segment_latents": result.latents,
                "mean_segment_length": float(inputs.demos.lengths.sum()) / max(segments, 1),
                "demonstrations": len(context.demonstrations),
                "termination": "beta head fitted to the inferred segment ends",
                "wall_time_s": round(time.perf_counter() - start, 3),
            },
        )
