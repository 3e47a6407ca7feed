"""The baselines every option-discovery method is compared against.

Each registers through the ``opt_suite.methods`` entry points exactly like ``offline_options`` and
receives the same train tasks, demonstrations, interaction budget and seed:

- ``primitives`` (:mod:`baselines.primitives`): no options, the floor;
- ``random_options`` (:mod:`baselines.random_options`): offline_options' options before training;
- ``eigenoptions`` (:mod:`baselines.eigenoptions`): Machado, Bellemare & Bowling (2017);
- ``option_critic`` (:mod:`baselines.option_critic`): Bacon, Harb & Precup (2017), tabular;
- ``reference_options`` (:mod:`baselines.reference_options`): the family's hand-made options
  (four rooms: Sutton, Precup & Singh 1999's hallway options);
- ``compile`` (:mod:`baselines.compile`): CompILE, Kipf et al. (2019), demonstrations segmented
  with one latent per segment;
- ``love`` (:mod:`baselines.love`): LOVE, Jiang et al. (2022), skills that compress the
  demonstrations, with its DDO and VTA settings.
- ``bc_ppo`` (:mod:`baselines.bc_ppo`): no options, the learner's policy behaviour-cloned on the
  demonstrations first (the jump-start control; ``bc_option``, the one-option control, lives
  beside offline_options, whose networks it shares).

None imports TensorFlow or numba at import time.
"""

from baselines.bc_ppo import BCPPO, BCPPOParams
from baselines.compile import Compile, CompileParams
from baselines.eigenoptions import Eigenoptions, EigenoptionsParams
from baselines.love import Love, LoveParams
from baselines.option_critic import OptionCritic, OptionCriticParams
from baselines.primitives import Primitives, PrimitivesParams
from baselines.random_options import RandomOptions, RandomOptionsParams
from baselines.reference_options import ReferenceOptions, ReferenceOptionsParams

__all__ = [
    "BCPPO",
    "BCPPOParams",
    "Primitives",
    "PrimitivesParams",
    "RandomOptions",
    "RandomOptionsParams",
    "Eigenoptions",
    "EigenoptionsParams",
    "OptionCritic",
    "OptionCriticParams",
    "ReferenceOptions",
    "ReferenceOptionsParams",
    "Compile",
    "CompileParams",
    "Love",
    "LoveParams",
]
