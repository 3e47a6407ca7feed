"""Laplacian options baseline (ALLO eigenfunctions + fitted Q-iteration): see ``method.py``."""

from baselines.laplacian_options.method import LaplacianOptions
from baselines.laplacian_options.params import LaplacianOptionsParams

__all__ = ["LaplacianOptions", "LaplacianOptionsParams"]
