"""Covering options baseline (Jinnai, Park, Abel & Konidaris 2019): see ``method.py``."""

from baselines.covering_options.method import CoveringOptions, CoveringOptionsParams

__all__ = ["CoveringOptions", "CoveringOptionsParams"]
