"""CompILE baseline (Kipf et al., ICML 2019): see ``method.py`` (TensorFlow loads in discover)."""

from baselines.compile.method import Compile
from baselines.compile.params import CompileParams

__all__ = ["Compile", "CompileParams"]
