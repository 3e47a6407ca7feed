"""Eigenoptions baseline (Machado, Bellemare & Bowling 2017): see ``method.py``."""

from baselines.eigenoptions.method import Eigenoptions, EigenoptionsParams

__all__ = ["Eigenoptions", "EigenoptionsParams"]
