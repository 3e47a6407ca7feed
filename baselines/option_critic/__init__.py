"""Option-critic baseline (Bacon, Harb & Precup 2017), tabular: see ``method.py``."""

from baselines.option_critic.method import OptionCritic, OptionCriticParams

__all__ = ["OptionCritic", "OptionCriticParams"]
