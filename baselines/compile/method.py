"""``compile``: CompILE (Kipf et al., ICML 2019) as a baseline method (no TensorFlow at import).

Reads top to bottom as the paper's pipeline (:class:`baselines.segmentation.SegmentingMethod`):
pad the state-action demonstrations, fit the segmentation model by the ELBO (:mod:`.model`), read
each demonstration's segments with argmax boundaries and latents, and return one option per latent
that some segment uses: its decoder as the option's policy, its fitted termination head as beta
(see :mod:`.model` for that rule). Options are tabulated over every state on tabular families
(four rooms) and keras conv networks on image families (``features: frames``), as
offline_options'.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from baselines.compile.params import CompileParams
from baselines.segmentation import Segmentation, SegmentingMethod, SegmentInputs

__all__ = ["Compile"]


class Compile(SegmentingMethod):
    """CompILE: Gumbel-softmax segments, one latent each; each used latent's decoder an option.

    Curves (one point per Adam step): ``loss`` (negative ELBO + termination loss), ``nll``,
    ``kl_z``, ``kl_b``, ``termination``. A demonstration with fewer actions than ``num_segments``
    is an error.
    """

    name: ClassVar[str] = "compile"
    description: ClassVar[str] = (
        "CompILE (Kipf et al. 2019): demonstrations segmented by a Gumbel-softmax ELBO with a "
        "Poisson length prior; each latent's decoder an option"
    )
    Params: ClassVar[type] = CompileParams
    skills_param: ClassVar[str] = "latent_dim"
    termination: ClassVar[str] = "beta head fitted to the inferred segment ends"

    def min_actions(self) -> int:
        """One action per segment at least."""
        return int(self.params.num_segments)

    def segment(self, inputs: SegmentInputs, seed: np.random.SeedSequence) -> Segmentation:
        """Fit CompILE's ELBO (:func:`.model.train_compile`)."""
        from baselines.compile.model import train_compile

        return train_compile(inputs, self.params, seed)
