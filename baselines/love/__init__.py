"""LOVE baseline (Jiang et al., NeurIPS 2022), with its DDO and VTA settings: see ``method.py``."""

from baselines.love.method import Love
from baselines.love.params import LoveParams

__all__ = ["Love", "LoveParams"]
